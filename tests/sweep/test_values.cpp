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
  EXPECT_EQ(error_of([] { parse_integers("--gpus", ""); }),
            "--gpus: empty list; expected a value, a list or a range");
  EXPECT_EQ(error_of([] { parse_integers("--gpus", "8,,16"); }),
            "--gpus: item 2 of '8,,16' is empty");
  EXPECT_EQ(error_of([] { parse_names("--model", "GPT-1T,"); }),
            "--model: item 2 of 'GPT-1T,' is empty");
  EXPECT_EQ(error_of([] { parse_integers("--gpus", "800:200:200"); }),
            "--gpus: '800:200:200': the range descends (800 > 200); write it ascending");
  EXPECT_EQ(error_of([] { parse_integers("--gpus", "8,200:800:0"); }),
            "--gpus: item 2 '200:800:0': the step must be positive, got 0");
  EXPECT_EQ(error_of([] { parse_integers("--gpus", "200:800:-100"); }),
            "--gpus: '200:800:-100': the step must be positive, got -100");
  EXPECT_EQ(error_of([] { parse_integers("--gpus", "1024..8192x1"); }),
            "--gpus: '1024..8192x1': the factor must be greater than 1, got 1");
  EXPECT_EQ(error_of([] { parse_integers("--gpus", "8192..1024x2"); }),
            "--gpus: '8192..1024x2': the range descends (8192 > 1024); write it ascending");
  EXPECT_EQ(error_of([] { parse_integers("--hb-domain", "8,7.5"); }),
            "--hb-domain: item 2 '7.5' is not an integer");
  EXPECT_EQ(error_of([] { parse_integers("--batch", "1:10:0.5"); }),
            "--batch: '0.5' is not an integer");
  EXPECT_EQ(error_of([] { parse_integers("--gpus", "8,abc"); }),
            "--gpus: item 2 'abc' is not a number");
  EXPECT_EQ(error_of([] { parse_integers("--gpus", "1:100:1", 50); }),
            "--gpus: more than 50 values (--max-points); the list expands to at least 100");
  EXPECT_EQ(error_of([] { parse_integers("--gpus", "1..1000000x2", 10); }),
            "--gpus: more than 10 values (--max-points); the list expands to at least 11");
  EXPECT_EQ(error_of([] { parse_integers("--gpus", "1:2"); }),
            "--gpus: '1:2': a range is start:stop:step");
  EXPECT_EQ(error_of([] { parse_integers("--gpus", "1..8"); }),
            "--gpus: '1..8': a geometric range is start..stop x factor (1024..8192x2)");
  EXPECT_EQ(error_of([] { parse_names("--gpu", "a,b,c", 2); }),
            "--gpu: more than 2 values (--max-points); the list expands to at least 3");
}

}  // namespace
}  // namespace railsim::sweep
