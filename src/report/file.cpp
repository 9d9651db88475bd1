#include "railsim/report/file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
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

}  // namespace

void check_writable(const std::string& path, const std::string& option) {
  if (path.empty()) throw InputError(option, "the file name is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw InputError(option, fmt::format("cannot write '{}': it is a directory", path));
  const std::string dir = directory_of(path);
  if (::stat(dir.c_str(), &st) != 0) cannot_write(path, option, errno);
  if (!S_ISDIR(st.st_mode)) cannot_write(path, option, ENOTDIR);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) cannot_write(path, option, errno);
}

void write_file_atomic(const std::string& path, std::string_view bytes, const std::string& option) {
  check_writable(path, option);
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
    cannot_write(path, option, err);
  };
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno);
    }
    done += static_cast<std::size_t>(n);
  }
  // mkstemp creates the file 0600; an output file gets the usual 0666 less the umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) fail(errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    cannot_write(path, option, err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    cannot_write(path, option, err);
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
