// Output files (report/file.hpp, report/csv.hpp): what is at the path decides where the bytes go.
// A regular file is replaced atomically; a symbolic link keeps being a link and its target is
// replaced; a device is written in place and its write errors reported; a directory or a
// dangling link is refused. Every refusal is an InputError naming the option.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../common/error_of.hpp"
#include "../common/scratch.hpp"
#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"
#include "railsim/report/csv.hpp"
#include "railsim/report/file.hpp"

using namespace railsim;
using railsim::test::error_of;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool is_link(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

}  // namespace

TEST(OutputFile, ALinkStaysALinkAndItsTargetIsReplaced) {
  const std::string target = test::scratch_path("file", "target.csv"),
                    link = test::scratch_path("file", "link.csv");
  std::remove(link.c_str());
  { std::ofstream(target) << "old\n"; }
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  report::write_file_atomic(link, "new\n", "--csv");
  EXPECT_TRUE(is_link(link));
  EXPECT_EQ(slurp(target), "new\n");
  report::CsvFile f(link, "--csv");
  f.line("a,b");
  f.close();
  EXPECT_TRUE(is_link(link));
  EXPECT_EQ(slurp(target), "a,b\n");
  std::remove(link.c_str());
  std::remove(target.c_str());
}

TEST(OutputFile, ADeviceIsWrittenInPlaceWithItsErrors) {
  // /dev/null takes the bytes and stays a device; /dev/full (through a link too) fails.
  report::write_file_atomic("/dev/null", "x\n", "--csv");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  {
    report::CsvFile f("/dev/null", "--csv");
    f.line("a,b");
    f.close();
  }
  if (::access("/dev/full", W_OK) == 0) {
    EXPECT_EQ(error_of([] { report::write_file_atomic("/dev/full", "x\n", "--csv"); }),
              "--csv: cannot write '/dev/full': No space left on device");
    const std::string link = test::scratch_path("file", "full.csv");
    std::remove(link.c_str());
    ASSERT_EQ(::symlink("/dev/full", link.c_str()), 0);
    EXPECT_EQ(error_of([&] {
                report::CsvFile f(link, "--csv");
                f.line("a,b");
                f.close();
              }),
              "--csv: cannot write '" + link + "': No space left on device");
    EXPECT_TRUE(is_link(link));
    std::remove(link.c_str());
  }
}

TEST(OutputFile, ADirectoryOrADanglingLinkIsRefused) {
  EXPECT_EQ(error_of([] { report::check_writable("/tmp", "--out"); }),
            "--out: cannot write '/tmp': it is a directory");
  const std::string link = test::scratch_path("file", "dangling.csv");
  std::remove(link.c_str());
  ASSERT_EQ(::symlink(test::scratch_path("file", "nowhere").c_str(), link.c_str()), 0);
  EXPECT_EQ(error_of([&] { report::write_file_atomic(link, "x", "--csv"); }),
            "--csv: cannot write '" + link + "': it is a link to a missing file");
  std::remove(link.c_str());
}

TEST(OutputFile, ACancelledWriteLeavesNoTemporaryAndThePreviousFile) {
  // Cancelled while writing (core/cancel.hpp): the temporary is removed, the target untouched.
  const std::string path = test::scratch_path("file", "cancelled.csv");
  report::write_file_atomic(path, "old\n", "--csv");
  request_cancel();
  EXPECT_THROW(report::write_file_atomic(path, std::string(1 << 20, 'x'), "--csv"), Cancelled);
  reset_cancel();
  EXPECT_EQ(slurp(path), "old\n");
  const std::string dir = testing::TempDir();
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".railsim_file_" + std::to_string(::getpid()) +
                                                "_cancelled.csv.tmp-"),
              std::string::npos)
        << e.path();
  std::remove(path.c_str());
}
