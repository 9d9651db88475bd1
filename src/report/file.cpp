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
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include "railsim/core/cancel.hpp"
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
    check_cancelled();  // a slow device or a full pipe: stop when asked
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

OutputFile::OutputFile(const std::string& path, std::string option)
    : path_(path), option_(std::move(option)) {
  const OutputTarget target = resolve_output(path_, option_);
  if (target.in_place) {  // a device, FIFO or socket: written as it goes, never renamed over
    fd_ = open_in_place(path_, option_);
    return;
  }
  target_ = target.path;
  const std::string dir = directory_of(target_);
  const auto slash = target_.rfind('/');
  const std::string base = slash == std::string::npos ? target_ : target_.substr(slash + 1);
  std::string tmpl = dir + "/." + base + ".tmp-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0) cannot_write(path_, option_, errno);
  tmp_ = name.data();
  registered_ = std::make_unique<ExitCleanup>(ExitCleanup::Kind::file, tmp_);
  // mkstemp creates the file 0600; an output file gets the usual 0666 less the umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd_, 0666 & ~mask) != 0) cannot_write(path_, option_, errno);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void OutputFile::write(std::string_view bytes) {
  if (buffer_.size() + bytes.size() > kBuffer) flush();
  if (bytes.size() > kBuffer) {
    if (const int err = write_all(fd_, bytes); err != 0) cannot_write(path_, option_, err);
  } else {
    buffer_.append(bytes);
  }
}

void OutputFile::flush() {
  if (buffer_.empty()) return;
  if (const int err = write_all(fd_, buffer_); err != 0) cannot_write(path_, option_, err);
  buffer_.clear();
}

void OutputFile::commit() {
  if (fd_ < 0) return;
  flush();
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) cannot_write(path_, option_, errno);
  if (tmp_.empty()) return;
  if (std::rename(tmp_.c_str(), target_.c_str()) != 0) cannot_write(path_, option_, errno);
  tmp_.clear();  // in place now: nothing to remove
}

void write_file_atomic(const std::string& path, std::string_view bytes, const std::string& option) {
  OutputFile f(path, option);
  f.write(bytes);
  f.commit();
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
