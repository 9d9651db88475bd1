#pragma once
// Output files written whole or not at all: the bytes go to a temporary file in the target's
// directory, which is then renamed over the target (atomic on POSIX file systems), so that an
// error or an interruption never leaves a half-written file under the requested name.
#include <string>
#include <string_view>

namespace railsim::report {

// Throws InputError(option, ...) unless a file can be created at `path`: its directory exists,
// is a directory and is writable, and `path` is not a directory. Cheap: call it before long work.
void check_writable(const std::string& path, const std::string& option);

// Writes `bytes` to `path` atomically. Throws InputError(option, "cannot write 'path': reason").
void write_file_atomic(const std::string& path, std::string_view bytes, const std::string& option);

// The whole content of a file; throws InputError(option, ...) when it cannot be read.
std::string read_file(const std::string& path, const std::string& option);

}  // namespace railsim::report
