#include "railsim/report/csv.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "railsim/core/error.hpp"

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
    : f_(std::fopen(path.c_str(), "wb"), &std::fclose), path_(path), option_(std::move(option)) {
  if (!f_)
    throw InputError(option_, fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
}

void CsvFile::line(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), f_.get()) != text.size() ||
      std::fputc('\n', f_.get()) == EOF)
    throw InputError(option_, fmt::format("cannot write '{}': {}", path_, std::strerror(errno)));
}

void CsvFile::close() {
  if (!f_) return;
  FILE* f = f_.release();
  const bool bad = std::fflush(f) != 0 || std::ferror(f);
  const int err = errno;
  std::fclose(f);
  if (bad)
    throw InputError(option_, fmt::format("cannot write '{}': {}", path_, std::strerror(err)));
}

}  // namespace railsim::report
