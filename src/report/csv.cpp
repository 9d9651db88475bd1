#include "railsim/report/csv.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "railsim/core/error.hpp"
#include "railsim/report/file.hpp"

namespace railsim::report {

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

CsvFile::CsvFile(const std::string& path, std::string option)
    : f_(nullptr, &std::fclose), path_(path), option_(std::move(option)) {
  const OutputTarget target = resolve_output(path_, option_);
  if (target.in_place) {  // a device or FIFO: written as it goes, never renamed over
    const int fd = open_in_place(path_, option_);
    f_.reset(::fdopen(fd, "wb"));
    if (!f_) {
      const int err = errno;
      ::close(fd);
      throw InputError(option_, fmt::format("cannot write '{}': {}", path_, std::strerror(err)));
    }
    return;
  }
  target_ = target.path;
  const auto slash = target_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : target_.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? target_ : target_.substr(slash + 1);
  std::string tmpl =
      (slash == std::string::npos ? std::string("./") : dir) + "." + base + ".tmp-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0)
    throw InputError(option_, fmt::format("cannot write '{}': {}", path_, std::strerror(errno)));
  tmp_ = name.data();
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);  // mkstemp makes 0600; an output file gets the usual mode
  f_.reset(::fdopen(fd, "wb"));
  if (!f_) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp_.c_str());
    throw InputError(option_, fmt::format("cannot write '{}': {}", path_, std::strerror(err)));
  }
}

CsvFile::~CsvFile() {
  if (!f_) return;
  f_.reset();
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void CsvFile::line(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), f_.get()) != text.size() ||
      std::fputc('\n', f_.get()) == EOF)
    throw InputError(option_, fmt::format("cannot write '{}': {}", path_, std::strerror(errno)));
}

void CsvFile::close() {
  if (!f_) return;
  FILE* f = f_.release();
  int err = 0;
  if (std::fflush(f) != 0 || std::ferror(f)) err = errno != 0 ? errno : EIO;
  if (std::fclose(f) != 0 && err == 0) err = errno;
  if (err == 0 && !tmp_.empty() && std::rename(tmp_.c_str(), target_.c_str()) != 0) err = errno;
  if (err != 0) {
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    throw InputError(option_, fmt::format("cannot write '{}': {}", path_, std::strerror(err)));
  }
}

}  // namespace railsim::report
