#pragma once
// Scratch files of a test process and the published data the tests read (tests/data/).
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "railsim/core/json.hpp"

namespace railsim::test {

// A scratch file path of this test process: `tag` names the test file, `name` the file.
inline std::string scratch_path(const std::string& tag, const std::string& name) {
  return testing::TempDir() + "/railsim_" + tag + "_" + std::to_string(::getpid()) + "_" + name;
}

// A JSON file of tests/data/ (built in two steps: GCC 12 at -O3 misreads string(literal) +
// literal as out of bounds).
inline Json read_test_data(const std::string& file) {
  std::string path = RAILSIM_TEST_DATA_DIR;
  path += "/";
  path += file;
  return read_json_file(path, "data");
}

}  // namespace railsim::test
