#pragma once
// Output files written whole or not at all: the bytes go to a temporary file in the target's
// directory, which is then renamed over the target (atomic on POSIX file systems), so that an
// error or an interruption never leaves a half-written file under the requested name.
//
// What is at the path decides where the bytes go: a regular file (or nothing) is replaced
// atomically; a symbolic link is followed, its target replaced and the link kept; a device,
// FIFO or socket (/dev/null, /dev/stdout, a named pipe) is written in place, never renamed
// over, with every write error reported (a link to /dev/full fails with "No space left on
// device"). A directory or a link to a missing file is refused.
#include <memory>
#include <string>
#include <string_view>

#include "railsim/core/cancel.hpp"

namespace railsim::report {

// Where an output's bytes go. `path`: the file to replace (a link resolved to its target) or to
// write; `in_place`: write to it directly (not a regular file).
struct OutputTarget {
  std::string path;
  bool in_place = false;
};
// Throws InputError(option, ...) unless the output can be written: a new or regular file in an
// existing, writable directory, or a writable device, FIFO or socket. Cheap: call it (or
// check_writable) before long work.
OutputTarget resolve_output(const std::string& path, const std::string& option);
void check_writable(const std::string& path, const std::string& option);
// A descriptor open for writing on an in-place target (resolve_output's in_place).
int open_in_place(const std::string& path, const std::string& option);

// An output file being written, the one way railsim writes files: to a temporary file in the
// target's directory that commit() renames over the target (or, for a device, FIFO or socket, in
// place). Destroyed without commit() (an error or a Cancelled on the way) it removes the
// temporary and leaves the target as it was; a signal that cannot wait for that removes it too
// (core/cancel.hpp). Writes are buffered and stop when cancellation is requested. Throws
// InputError(option, "cannot write 'path': reason").
class OutputFile {
 public:
  OutputFile(const std::string& path, std::string option);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void write(std::string_view bytes);
  void commit();  // writes what is buffered, reports any error, puts the file in place

 private:
  void flush();
  static constexpr std::size_t kBuffer = std::size_t{1} << 16;
  std::string path_, option_;
  std::string target_;  // the file the temporary replaces (a link resolved)
  std::string tmp_;     // empty: written in place, or committed
  int fd_ = -1;
  std::string buffer_;
  std::unique_ptr<ExitCleanup> registered_;
};

// Writes `bytes` to `path` atomically (an OutputFile committed).
void write_file_atomic(const std::string& path, std::string_view bytes, const std::string& option);

// The whole content of a file; throws InputError(option, ...) when it cannot be read.
std::string read_file(const std::string& path, const std::string& option);

}  // namespace railsim::report
