#pragma once
// CSV output (RFC 4180): fields are quoted only when they must be.
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace railsim::report {

std::string csv_field(std::string_view s);  // quotes fields holding , " CR or LF

// A buffered CSV file; throws InputError(option, ...) when it cannot be opened or written.
class CsvFile {
 public:
  CsvFile(const std::string& path, std::string option);
  // Writes one line: the fields are already formatted (numbers) or passed through csv_field.
  void line(std::string_view text);
  void close();  // flushes and reports write errors; the destructor closes silently

 private:
  std::unique_ptr<FILE, int (*)(FILE*)> f_;
  std::string path_, option_;
};

}  // namespace railsim::report
