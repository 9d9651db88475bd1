#include <gtest/gtest.h>

#include <string>

#include "../common/error_of.hpp"
#include "railsim/core/error.hpp"
#include "railsim/sweep/values.hpp"

namespace railsim::sweep {
namespace {

using test::error_of;

TEST(SweepValues, ListRangeAndGeometricSeries) {
  EXPECT_EQ(parse_integers("--gpus", "8,16,32"), (std::vector<std::int64_t>{8, 16, 32}));
  EXPECT_EQ(parse_integers("--gpus", "200:800:200"),
            (std::vector<std::int64_t>{200, 400, 600, 800}));
  EXPECT_EQ(parse_integers("--gpus", "200:700:200"), (std::vector<std::int64_t>{200, 400, 600}));
  EXPECT_EQ(parse_integers("--gpus", "1024..8192x2"),
            (std::vector<std::int64_t>{1024, 2048, 4096, 8192}));
  EXPECT_EQ(parse_integers("--gpus", "4096"), (std::vector<std::int64_t>{4096}));
  EXPECT_EQ(parse_integers("--gpus", "5:5:1"), (std::vector<std::int64_t>{5}));
  EXPECT_EQ(parse_integers("--gpus", "8,64:192:64,1024..4096x4"),
            (std::vector<std::int64_t>{8, 64, 128, 192, 1024, 4096}));
  const std::vector<double> r = parse_reals("--oversubscription", "1:2:0.5");
  EXPECT_EQ(r, (std::vector<double>{1.0, 1.5, 2.0}));
  EXPECT_EQ(parse_reals("--nic-gbps", "0.1:0.3:0.1").size(), 3u);  // the stop despite rounding
  EXPECT_EQ(parse_reals("--nic-gbps", "400,800"), (std::vector<double>{400, 800}));
  EXPECT_EQ(parse_names("--model", "GPT-1T,MoE-1.2T"),
            (std::vector<std::string>{"GPT-1T", "MoE-1.2T"}));
}

TEST(SweepValues, ErrorsNameTheOptionAndTheItem) {
  // Integer lists: the option, the text, --max-points and the error.
  const struct {
    const char* option;
    const char* text;
    std::int64_t max_points;
    const char* error;
  } integer_cases[] = {
      {"--gpus", "", kDefaultMaxPoints, "--gpus: empty list; expected a value, a list or a range"},
      {"--gpus", "8,,16", kDefaultMaxPoints, "--gpus: item 2 of '8,,16' is empty"},
      {"--gpus", "800:200:200", kDefaultMaxPoints,
       "--gpus: '800:200:200': the range descends (800 > 200); write it ascending"},
      {"--gpus", "8,200:800:0", kDefaultMaxPoints,
       "--gpus: item 2 '200:800:0': the step must be positive, got 0"},
      {"--gpus", "200:800:-100", kDefaultMaxPoints,
       "--gpus: '200:800:-100': the step must be positive, got -100"},
      {"--gpus", "1024..8192x1", kDefaultMaxPoints,
       "--gpus: '1024..8192x1': the factor must be greater than 1, got 1"},
      {"--gpus", "8192..1024x2", kDefaultMaxPoints,
       "--gpus: '8192..1024x2': the range descends (8192 > 1024); write it ascending"},
      {"--hb-domain", "8,7.5", kDefaultMaxPoints, "--hb-domain: item 2 '7.5' is not an integer"},
      {"--batch", "1:10:0.5", kDefaultMaxPoints, "--batch: '0.5' is not an integer"},
      {"--gpus", "8,abc", kDefaultMaxPoints, "--gpus: item 2 'abc' is not a number"},
      {"--gpus", "1:100:1", 50,
       "--gpus: more than 50 values (--max-points); the list expands to at least 100"},
      {"--gpus", "1..1000000x2", 10,
       "--gpus: more than 10 values (--max-points); the list expands to at least 11"},
      {"--gpus", "1:2", kDefaultMaxPoints, "--gpus: '1:2': a range is start:stop:step"},
      {"--gpus", "1..8", kDefaultMaxPoints,
       "--gpus: '1..8': a geometric range is start..stop x factor (1024..8192x2)"},
  };
  for (const auto& c : integer_cases)
    EXPECT_EQ(error_of([&] { parse_integers(c.option, c.text, c.max_points); }), c.error) << c.text;
  EXPECT_EQ(error_of([] { parse_names("--model", "GPT-1T,"); }),
            "--model: item 2 of 'GPT-1T,' is empty");
  EXPECT_EQ(error_of([] { parse_names("--gpu", "a,b,c", 2); }),
            "--gpu: more than 2 values (--max-points); the list expands to at least 3");
}

}  // namespace
}  // namespace railsim::sweep
