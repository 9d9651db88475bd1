#pragma once
// CSV output (RFC 4180): fields are quoted only when they must be.
#include <string>
#include <string_view>
#include <utility>

#include "railsim/report/file.hpp"

namespace railsim::report {

std::string csv_field(std::string_view s);  // quotes fields holding , " CR or LF

// A CSV file written atomically, line by line (an OutputFile, report/file.hpp): close() puts it in
// place; destroyed without close() it leaves the target as it was. Throws InputError(option, ...)
// when the file cannot be created or written.
class CsvFile {
 public:
  CsvFile(const std::string& path, std::string option) : out_(path, std::move(option)) {}
  // Writes one line: the fields are already formatted (numbers) or passed through csv_field.
  void line(std::string_view text) {
    out_.write(text);
    out_.write("\n");
  }
  void close() { out_.commit(); }

 private:
  OutputFile out_;
};

}  // namespace railsim::report
