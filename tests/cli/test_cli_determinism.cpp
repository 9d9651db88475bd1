// The main outputs are byte-identical whatever the number of threads: every command run with
// oneTBB capped at 1, 2 and 3 worker threads (RAILSIM_THREADS) prints the same bytes.
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.hpp"

using railsim::test::line_count;
using railsim::test::run_cli;

TEST(CliDeterminism, MainOutputsAreByteIdenticalForAnyThreadCount) {
  const char* commands[] = {
      "compare --gpus 4096 --json",
      "plan --gpus 4096 --model GPT-1T --top 20 --json",
      "plan --gpus 1024 --model MoE-1.2T --top 10 --csv",
      "traffic --gpus 512 --model GPT-1T --json",
      "sim --gpus 256 --design rail_only --collective alltoall --json",
      "sim --gpus 128 --schedule --model GPT-3-175B --tp 8 --pp 2 --json",
      "sweep --gpus 512,1024 --model GPT-1T --hb-domain 8,16 --csv",
  };
  for (const char* args : commands) {
    const auto one = run_cli(args, "RAILSIM_THREADS=1");
    ASSERT_EQ(one.code, 0) << args << "\n" << one.err;
    ASSERT_GT(one.out.size(), 100u) << args;
    for (const char* n : {"2", "3"}) {
      const auto more = run_cli(args, std::string("RAILSIM_THREADS=") + n);
      ASSERT_EQ(more.code, 0) << args << "\n" << more.err;
      EXPECT_EQ(more.out, one.out) << args << " differs between 1 and " << n << " threads";
    }
  }
}

TEST(CliDeterminism, ABadThreadCountIsOneLineNamingTheVariable) {
  for (const char* v : {"0", "-1", "abc", "2x", "99999"}) {
    const auto r = run_cli("presets", std::string("RAILSIM_THREADS=") + v);
    EXPECT_EQ(r.code, 2) << v;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("railsim: error: RAILSIM_THREADS: got '", 0), 0u) << r.err;
  }
}
