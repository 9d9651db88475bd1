#pragma once
// A pseudo-terminal for the progress-bar tests: `tty` is a stream that isatty() calls a
// terminal; drain() closes it and returns everything written to it. And written_to_file, the
// same through a plain file, where a bar must write nothing.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace railsim::test {

struct PseudoTerminal {
  int master = -1;
  std::FILE* tty = nullptr;

  PseudoTerminal() {
    master = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return;
    tty = std::fopen(::ptsname(master), "w");
  }
  ~PseudoTerminal() {
    if (tty) std::fclose(tty);
    if (master >= 0) ::close(master);
  }
  PseudoTerminal(const PseudoTerminal&) = delete;
  PseudoTerminal& operator=(const PseudoTerminal&) = delete;
  bool ok() const { return tty != nullptr; }

  // Closes the terminal's side and reads what it got: the terminal hands its output over in
  // pieces, read until drained (EIO once the slave side is closed and empty).
  std::string drain() {
    if (tty) std::fclose(tty);
    tty = nullptr;
    std::string got;
    char buf[512];
    for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0;)
      got.append(buf, static_cast<std::size_t>(n));
    return got;
  }
};

// What `write(stream)` leaves in a plain file at `path` (not a terminal: a pipe's case); the file
// is removed. "(cannot open)" when it cannot be created.
template <typename F>
std::string written_to_file(const std::string& path, F write) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return "(cannot open)";
  write(f);
  std::fclose(f);
  std::ifstream in(path, std::ios::binary);
  std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  return got;
}

}  // namespace railsim::test
