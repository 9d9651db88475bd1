#pragma once
// Sizes in bytes as people write them on the command line.
#include <string>

namespace railsim::units {

// "1e9", "512MB", "1GiB", "64KiB", "1000B": decimal KB, MB, GB, TB and binary KiB ... TiB
// suffixes, case-sensitive. Throws InputError(option, ...) unless it is a size in (0, 1e15] bytes.
double parse_bytes(const std::string& s, const std::string& option);

}  // namespace railsim::units
