#pragma once
// CSV output (RFC 4180): fields are quoted only when they must be.
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace railsim::report {

std::string csv_field(std::string_view s);  // quotes fields holding , " CR or LF

// A buffered CSV file, written atomically: lines go to a temporary file in the target's directory,
// which close() renames over the target (a link's target; report/file.hpp); a CsvFile destroyed
// without close() (an error on the way) removes its temporary file and leaves the target as it
// was. A device or FIFO is written in place. Throws InputError(option, ...)
// when the file cannot be created or written.
class CsvFile {
 public:
  CsvFile(const std::string& path, std::string option);
  ~CsvFile();
  CsvFile(const CsvFile&) = delete;
  CsvFile& operator=(const CsvFile&) = delete;
  // Writes one line: the fields are already formatted (numbers) or passed through csv_field.
  void line(std::string_view text);
  void close();  // flushes, reports write errors, and puts the file in place

 private:
  std::unique_ptr<FILE, int (*)(FILE*)> f_;
  std::string path_, option_, tmp_;  // tmp_ empty: written in place (a device or FIFO)
  std::string target_;               // the file tmp_ replaces (a link resolved)
};

}  // namespace railsim::report
