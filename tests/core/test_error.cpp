// How an error is spelled for Python: options become keyword arguments, nothing else changes.
#include <gtest/gtest.h>

#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"

using railsim::python_spelling;

TEST(PythonSpelling, OptionsBecomeKeywordArguments) {
  EXPECT_EQ(python_spelling("--hb-domain: 1,001 GPUs cannot be split; gpus must be a multiple of "
                            "--hb-domain"),
            "hb_domain: 1,001 GPUs cannot be split; gpus must be a multiple of hb_domain");
  EXPECT_EQ(python_spelling("--within: give a target: --max-iteration-time, --min-mfu, or "
                            "--tokens with --days"),
            "within: give a target: max_iteration_time, min_mfu, or tokens with days");
  EXPECT_EQ(python_spelling("--hb-GBps: got 0"), "hb_GBps: got 0");
  EXPECT_EQ(python_spelling("--plot: needs rows (not --no-perf)"),
            "plot: needs rows (not no_perf)");
  EXPECT_EQ(python_spelling("--x: see 'railsim plan --help' or '--tp'"),
            "x: see 'railsim plan --help' or 'tp'");
}

TEST(PythonSpelling, LeavesPathsValuesAndDashesAlone) {
  EXPECT_EQ(python_spelling("gpu.hbm_gib: got -1"), "gpu.hbm_gib: got -1");
  EXPECT_EQ(python_spelling("model: file a--b.json is missing"),
            "model: file a--b.json is missing");
  EXPECT_EQ(python_spelling("--gpus: got '--5' -- expected a count"),
            "gpus: got '--5' -- expected a count");
  EXPECT_EQ(python_spelling(""), "");
  EXPECT_EQ(python_spelling("--"), "--");
}
