// railsim completion bash, loaded into bash and asked to complete as a user's Tab would.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "cli_runner.hpp"

using railsim::test::run_cli;

namespace {

// The completions bash offers for `words` (the last one being completed).
std::string complete(const std::string& script, const std::string& words, int cword) {
  const std::string path = "/tmp/railsim_completion_" + std::to_string(::getpid());
  {
    std::FILE* f = std::fopen((path + ".bash").c_str(), "w");
    std::fputs(script.c_str(), f);
    std::fclose(f);
  }
  const std::string cmd = "bash -c 'source " + path + ".bash; COMP_WORDS=(" + words +
                          "); COMP_CWORD=" + std::to_string(cword) +
                          "; _railsim; echo \"${COMPREPLY[*]}\"' >" + path + ".out 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  std::string out = railsim::test::slurp(path + ".out");
  std::remove((path + ".bash").c_str());
  std::remove((path + ".out").c_str());
  return out;
}

}  // namespace

TEST(CliCompletion, BashCompletesCommandsSubcommandsAndOptions) {
  auto r = run_cli("completion bash");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(complete(r.out, "railsim op", 1), "optimize\n");
  EXPECT_EQ(complete(r.out, "railsim fail wh", 2), "whatif\n");
  EXPECT_EQ(complete(r.out, "railsim fail whatif --fail-r", 3), "--fail-random\n");
  // An option's value between the command and the word does not confuse it.
  EXPECT_EQ(complete(r.out, "railsim plan --gpus 1024 --expl", 4), "--explain\n");
  EXPECT_EQ(complete(r.out, "railsim design --json --exp", 3), "--export\n");
  auto bad = run_cli("completion zsh");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("railsim: error: shell: unknown shell 'zsh'"), std::string::npos)
      << bad.err;
}
