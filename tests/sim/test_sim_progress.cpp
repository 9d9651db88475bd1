// The simulator's progress: the flows delivered reach the workload's flows on a terminal, and
// nothing at all is written when the stream is not one (tests and pipes see the same bytes).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/picture_files.hpp"
#include "../common/pseudo_terminal.hpp"
#include "../common/scratch.hpp"
#include "railsim/report/progress.hpp"
#include "railsim/sim/flow_sim.hpp"

namespace {

// Flows spread over time (distinct sizes on shared channels) and a chain: many events.
railsim::sim::Workload progress_workload() {
  railsim::sim::Workload w({3.0, 5.0});
  for (int i = 0; i < 400; ++i) {
    const std::vector<railsim::sim::ChannelId> path = {static_cast<railsim::sim::ChannelId>(i % 2)};
    const auto f = w.add_flow(path, 1.0 + i);
    if (i >= 2 && i % 7 == 0) w.add_dependency(f - 2, f);
  }
  return w;
}

}  // namespace

TEST(SimProgress, DeliveredFlowsReachTheTotalOnATerminal) {
  const auto w = progress_workload();
  railsim::test::PseudoTerminal pt;
  ASSERT_TRUE(pt.ok());
  std::FILE* tty = pt.tty;
  railsim::sim::SimResult with, without;
  {
    railsim::report::ProgressBar bar(tty, "sim", 1, 0.0);
    ASSERT_TRUE(bar.enabled());
    railsim::sim::EngineOptions o;
    o.progress = &bar;
    with = railsim::sim::simulate(w, o);
    EXPECT_EQ(bar.done(), w.flow_count());
    EXPECT_EQ(bar.total(), w.flow_count());
  }
  (void)pt.drain();
  without = railsim::sim::simulate(w);
  EXPECT_EQ(with.finish_s, without.finish_s);  // watching changes nothing
  EXPECT_EQ(with.events, without.events);
}

TEST(SimProgress, NothingIsWrittenWhenTheStreamIsNotATerminal) {
  const auto w = progress_workload();
  EXPECT_EQ(railsim::test::written_to_file(railsim::test::scratch_path("sim", "progress.txt"),
                                           [&](std::FILE* f) {
                                             railsim::report::ProgressBar bar(f, "sim", 1, 0.0);
                                             EXPECT_FALSE(bar.enabled());
                                             railsim::sim::EngineOptions o;
                                             o.progress = &bar;
                                             railsim::sim::simulate(w, o);
                                           }),
            "");
}
