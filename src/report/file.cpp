#include "railsim/report/file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "railsim/core/error.hpp"

namespace railsim::report {

namespace {

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

[[noreturn]] void cannot_write(const std::string& path, const std::string& option, int err) {
  throw InputError(option, fmt::format("cannot write '{}': {}", path, std::strerror(err)));
}

// Writes every byte (retrying interrupted and short writes); the errno of a failure, else 0.
int write_all(int fd, std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace

OutputTarget resolve_output(const std::string& requested, const std::string& option) {
  if (requested.empty()) throw InputError(option, "the file name is empty");
  OutputTarget out{requested, false};
  struct stat st {};
  if (::lstat(requested.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    if (::stat(requested.c_str(), &st) != 0)
      throw InputError(option,
                       fmt::format("cannot write '{}': it is a link to a missing file", requested));
    if (S_ISREG(st.st_mode)) {  // replace the link's target, keep the link
      char* real = ::realpath(requested.c_str(), nullptr);
      if (real == nullptr) cannot_write(requested, option, errno);
      out.path = real;
      std::free(real);
    }
  } else if (::stat(requested.c_str(), &st) != 0) {
    st.st_mode = 0;  // nothing there: a new file
  }
  if (S_ISDIR(st.st_mode))
    throw InputError(option, fmt::format("cannot write '{}': it is a directory", requested));
  if (st.st_mode != 0 && !S_ISREG(st.st_mode)) {  // a device, FIFO or socket: written in place
    out.in_place = true;
    if (::access(requested.c_str(), W_OK) != 0) cannot_write(requested, option, errno);
    return out;
  }
  const std::string dir = directory_of(out.path);
  if (::stat(dir.c_str(), &st) != 0) cannot_write(requested, option, errno);
  if (!S_ISDIR(st.st_mode)) cannot_write(requested, option, ENOTDIR);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) cannot_write(requested, option, errno);
  return out;
}

void check_writable(const std::string& path, const std::string& option) {
  (void)resolve_output(path, option);
}

int open_in_place(const std::string& path, const std::string& option) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) cannot_write(path, option, errno);
  return fd;
}

void write_file_atomic(const std::string& requested, std::string_view bytes,
                       const std::string& option) {
  const OutputTarget target = resolve_output(requested, option);
  if (target.in_place) {
    const int fd = open_in_place(requested, option);
    if (const int err = write_all(fd, bytes); err != 0) {
      ::close(fd);
      cannot_write(requested, option, err);
    }
    if (::close(fd) != 0) cannot_write(requested, option, errno);
    return;
  }
  const std::string& path = target.path;
  const std::string dir = directory_of(path);
  const auto slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmpl = dir + "/." + base + ".tmp-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) cannot_write(path, option, errno);
  const std::string tmp(name.data());
  auto fail = [&](int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    cannot_write(requested, option, err);
  };
  if (const int err = write_all(fd, bytes); err != 0) fail(err);
  // mkstemp creates the file 0600; an output file gets the usual 0666 less the umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) fail(errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    cannot_write(requested, option, err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    cannot_write(requested, option, err);
  }
}

std::string read_file(const std::string& path, const std::string& option) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(option, fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace railsim::report
