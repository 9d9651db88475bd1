// The distributed sweep without MPI: ranks are threads of this test joined by an in-process
// Communicator, so that sharing, gathering and agreeing on errors are checked in every build.
#include <gtest/gtest.h>
#include <signal.h>

#include <barrier>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../common/error_of.hpp"
#include "../common/sweep_fixtures.hpp"
#include "railsim/core/cancel.hpp"
#include "railsim/core/error.hpp"
#include "railsim/core/json.hpp"
#include "railsim/report/table.hpp"
#include "railsim/sweep/distributed.hpp"
#include "railsim/sweep/sweep.hpp"

namespace railsim::sweep {
namespace {

using test::error_of;

// The ranks of one job as threads: gather and broadcast meet at a barrier.
struct Hub {
  explicit Hub(int n) : ranks(n), barrier(n), slots(static_cast<std::size_t>(n)) {}
  int ranks;
  std::barrier<> barrier;
  std::vector<std::string> slots;
  std::string shared;
};

class ThreadCommunicator final : public Communicator {
 public:
  ThreadCommunicator(Hub& hub, int rank) : hub_(hub), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return hub_.ranks; }
  std::vector<std::string> gather(const std::string& mine) override {
    hub_.slots[static_cast<std::size_t>(rank_)] = mine;
    hub_.barrier.arrive_and_wait();
    std::vector<std::string> all;
    if (rank_ == 0) all = hub_.slots;
    hub_.barrier.arrive_and_wait();
    ++collectives;
    return all;
  }
  std::string broadcast(const std::string& bytes) override {
    if (rank_ == 0) hub_.shared = bytes;
    hub_.barrier.arrive_and_wait();
    std::string s = hub_.shared;
    hub_.barrier.arrive_and_wait();
    ++collectives;
    return s;
  }
  int collectives = 0;

 private:
  Hub& hub_;
  int rank_;
};

// Runs `body(comm)` on `ranks` threads; each rank's exception (or null) in rank order.
std::vector<std::exception_ptr> run_ranks(int ranks,
                                          const std::function<void(ThreadCommunicator&)>& body) {
  Hub hub(ranks);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(hub, r);
      try {
        body(comm);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  return errors;
}

std::string what_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
  return "";
}
bool is_input_error(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const InputError&) {
    return true;
  } catch (...) {
    return false;
  }
}

TEST(Distributed, EveryPointBelongsToExactlyOneRankInBalancedShares) {
  for (Split split : {Split::contiguous, Split::strided}) {
    for (std::size_t n = 0; n <= 23; ++n) {
      for (int ranks = 1; ranks <= 7; ++ranks) {
        std::vector<int> owner(n, -1);
        std::size_t smallest = n, largest = 0;
        for (int r = 0; r < ranks; ++r) {
          const std::vector<std::size_t> mine = share_of(n, r, ranks, split);
          smallest = std::min(smallest, mine.size());
          largest = std::max(largest, mine.size());
          for (std::size_t k = 0; k < mine.size(); ++k) {
            ASSERT_LT(mine[k], n);
            EXPECT_EQ(owner[mine[k]], -1) << "point " << mine[k] << " twice";
            owner[mine[k]] = r;
            if (k > 0) {
              // Contiguous blocks are runs; strided shares step by the number of ranks.
              EXPECT_EQ(mine[k] - mine[k - 1],
                        split == Split::contiguous ? 1u : static_cast<std::size_t>(ranks));
            }
          }
        }
        for (std::size_t i = 0; i < n; ++i) EXPECT_NE(owner[i], -1) << "point " << i;
        EXPECT_LE(largest - std::min(smallest, largest), 1u) << n << " points, " << ranks;
        // Contiguous: the blocks follow the ranks' order.
        if (split == Split::contiguous) {
          for (std::size_t i = 1; i < n; ++i) EXPECT_LE(owner[i - 1], owner[i]);
        }
      }
    }
  }
  EXPECT_EQ(share_of(10, 1, 4, Split::strided), (std::vector<std::size_t>{1, 5, 9}));
  EXPECT_EQ(share_of(10, 1, 4, Split::contiguous), (std::vector<std::size_t>{2, 3, 4}));
  EXPECT_THROW(share_of(10, 4, 4, Split::strided), std::invalid_argument);
  EXPECT_THROW(share_of(10, 0, 0, Split::strided), std::invalid_argument);
}

TEST(Distributed, SplitNames) {
  EXPECT_EQ(parse_split("strided"), Split::strided);
  EXPECT_EQ(parse_split("contiguous"), Split::contiguous);
  EXPECT_STREQ(to_string(Split::contiguous), "contiguous");
  EXPECT_EQ(error_of([] { parse_split("blocks\n"); }),
            "--split: unknown split 'blocks\\n'; valid: contiguous, strided");
}

TEST(Distributed, SharesRoundTripBitForBit) {
  Share s;
  EncodedPoint a;
  a.rows.push_back({report::Missing{}, std::string("tp8 pp4\n,\"x\0y", 14), std::int64_t{-1},
                    std::numeric_limits<std::int64_t>::min(), -0.0, 1e-310,
                    std::numeric_limits<double>::quiet_NaN(), true, false,
                    std::vector<std::int64_t>{3, -7, std::numeric_limits<std::int64_t>::max()},
                    std::vector<std::int64_t>{}, std::string()});
  a.rows.push_back({});
  EncodedPoint b;
  b.invalid = InputError("--gpus", "1001 GPUs are not whole HB domains of 8");
  b.rows.push_back({std::string("H100-SXM"), 0.1 + 0.2});
  s.points = {a, b, EncodedPoint{}};
  const std::string bytes = encode_share(s);
  const Share back = decode_share(bytes);
  EXPECT_FALSE(back.error);
  ASSERT_EQ(back.points.size(), 3u);
  ASSERT_EQ(back.points[0].rows.size(), 2u);
  const auto& row = back.points[0].rows[0];
  ASSERT_EQ(row.size(), a.rows[0].size());
  for (std::size_t i = 0; i < row.size(); ++i) {
    ASSERT_EQ(row[i].index(), a.rows[0][i].index()) << i;
    if (const double* d = std::get_if<double>(&row[i])) {
      const double want = std::get<double>(a.rows[0][i]);
      EXPECT_EQ(std::bit_cast<std::uint64_t>(*d), std::bit_cast<std::uint64_t>(want)) << i;
    } else {
      EXPECT_EQ(row[i], a.rows[0][i]) << i;
    }
  }
  EXPECT_TRUE(back.points[0].rows[1].empty());
  EXPECT_FALSE(back.points[0].invalid);
  ASSERT_TRUE(back.points[1].invalid);
  EXPECT_EQ(back.points[1].invalid->field(), "--gpus");
  EXPECT_STREQ(back.points[1].invalid->what(), "--gpus: 1001 GPUs are not whole HB domains of 8");
  EXPECT_EQ(back.points[1].rows, b.rows);
  EXPECT_TRUE(back.points[2].rows.empty());

  const Share failed = decode_share(encode_share(Share{.error = "out of memory", .points = {}}));
  EXPECT_EQ(failed.error, "out of memory");

  // Every cut, and a trailing byte, is refused (never read past the end).
  for (std::size_t cut = 0; cut < bytes.size(); ++cut)
    EXPECT_THROW(decode_share(bytes.substr(0, cut)), std::runtime_error) << cut;
  EXPECT_THROW(decode_share(bytes + '\0'), std::runtime_error);
  std::string huge_count = bytes;
  huge_count[8] = '\x7f';  // the point count's high byte: refused, not allocated
  EXPECT_THROW(decode_share(huge_count), std::runtime_error);
}

// A plan sweep with an invalid point (1,001 GPUs), on 1 to 5 ranks and both splits: rank 0's
// table is byte for byte the one-process table, in every output form.
TEST(Distributed, RankZeroGathersTheOneProcessTable) {
  SweepOptions o;
  o.axes.gpus = {1001, 1024, 2048};
  o.axes.batch = {1024, 4096};
  o.threads = 1;
  const report::Table serial = sweep_table(run_sweep(o));
  ASSERT_EQ(serial.rows.size(), 18u);
  const SweepInputs inputs = load_sweep_inputs(o);
  for (Split split : {Split::strided, Split::contiguous}) {
    for (int ranks : {1, 2, 3, 5, 8}) {
      std::vector<std::optional<GatheredSweep>> got(static_cast<std::size_t>(ranks));
      std::vector<int> evaluated(static_cast<std::size_t>(ranks), 0);
      const auto errors = run_ranks(ranks, [&](ThreadCommunicator& comm) {
        SweepOptions mine = o;
        int& count = evaluated[static_cast<std::size_t>(comm.rank())];
        mine.on_point_done = [&count] { ++count; };
        got[static_cast<std::size_t>(comm.rank())] = run_distributed(mine, inputs, comm, split);
        EXPECT_EQ(comm.collectives, 1);  // one gather
      });
      for (const auto& e : errors) ASSERT_FALSE(e) << what_of(e);
      ASSERT_TRUE(got[0]);
      const report::Table& t = got[0]->table;
      EXPECT_EQ(report::to_csv(t), report::to_csv(serial)) << ranks << " " << to_string(split);
      EXPECT_EQ(report::to_text(t), report::to_text(serial));
      EXPECT_EQ(report::to_json(t).dump(2), report::to_json(serial).dump(2));
      EXPECT_EQ(got[0]->valid_points, 4);
      ASSERT_TRUE(got[0]->first_invalid);
      EXPECT_EQ(got[0]->first_invalid->field(), "--hb-domain");  // 1,001 GPUs in domains of 8
      int total = 0;
      for (int r = 0; r < ranks; ++r) {
        if (r > 0) {
          EXPECT_FALSE(got[static_cast<std::size_t>(r)]);
        }
        // Each rank evaluated its share alone.
        EXPECT_EQ(evaluated[static_cast<std::size_t>(r)],
                  static_cast<int>(share_of(6, r, ranks, split).size()));
        total += evaluated[static_cast<std::size_t>(r)];
      }
      EXPECT_EQ(total, 6);
    }
  }
}

TEST(Distributed, ARankThatFailsStillTakesPartAndRankZeroNamesIt) {
  SweepOptions o = test::design_sweep({1024, 2048, 4096});
  const SweepInputs inputs = load_sweep_inputs(o);
  std::vector<bool> returned(3, false);
  const auto errors = run_ranks(3, [&](ThreadCommunicator& comm) {
    SweepOptions mine = o;
    if (comm.rank() == 1) mine.on_point_done = [] { throw std::runtime_error("boom"); };
    const auto g = run_distributed(mine, inputs, comm);
    returned[static_cast<std::size_t>(comm.rank())] = !g;
  });
  ASSERT_TRUE(errors[0]);
  EXPECT_EQ(what_of(errors[0]), "rank 1 of 3: boom");
  EXPECT_FALSE(errors[1]);
  EXPECT_FALSE(errors[2]);
  EXPECT_TRUE(returned[1]);
  EXPECT_TRUE(returned[2]);
}

TEST(Distributed, AgreeGivesEveryRankTheLowestFailingRanksError) {
  // Nobody fails: the step ran once on each rank and nothing is thrown.
  std::vector<int> ran(4, 0);
  auto errors = run_ranks(4, [&](ThreadCommunicator& comm) {
    agree(comm, [&] { ++ran[static_cast<std::size_t>(comm.rank())]; });
  });
  for (int r = 0; r < 4; ++r) {
    EXPECT_FALSE(errors[static_cast<std::size_t>(r)]);
    EXPECT_EQ(ran[static_cast<std::size_t>(r)], 1);
  }

  // Ranks 2 and 3 fail (a file missing on their node): every rank throws rank 2's InputError,
  // naming it; rank 2 throws its own.
  errors = run_ranks(4, [&](ThreadCommunicator& comm) {
    agree(comm, [&] {
      if (comm.rank() >= 2)
        throw InputError("--gpu", "cannot open 'g" + std::to_string(comm.rank()) + ".json'");
    });
  });
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE(errors[static_cast<std::size_t>(r)]) << r;
    EXPECT_TRUE(is_input_error(errors[static_cast<std::size_t>(r)])) << r;
    EXPECT_EQ(
        what_of(errors[static_cast<std::size_t>(r)]),
        r == 2 ? "--gpu: cannot open 'g2.json'" : "--gpu: cannot open 'g2.json' (rank 2 of 4)")
        << r;
  }

  // Rank 0 fails: its error as it is, on every rank.
  errors = run_ranks(3, [&](ThreadCommunicator& comm) {
    agree(comm, [&] {
      if (comm.rank() == 0) throw InputError("--gpus", "got 0");
    });
  });
  for (const auto& e : errors) {
    EXPECT_TRUE(is_input_error(e));
    EXPECT_EQ(what_of(e), "--gpus: got 0");
  }

  // Anything but bad input stays an internal error (exit 1) on every rank.
  errors = run_ranks(2, [&](ThreadCommunicator& comm) {
    agree(comm, [&] {
      if (comm.rank() == 1) throw std::logic_error("bug");
    });
  });
  EXPECT_FALSE(is_input_error(errors[0]));
  EXPECT_EQ(what_of(errors[0]), "bug (rank 1 of 2)");
  EXPECT_EQ(what_of(errors[1]), "bug");

  // One process: the step's own exception, untouched.
  SerialCommunicator one;
  EXPECT_THROW(agree(one, [] { throw std::out_of_range("x"); }), std::out_of_range);
}

TEST(Distributed, RanksGivenOtherInputsAllStopNamingTheFirstDifference) {
  // Two files of the same name on two nodes are two paths here: same name, other bytes.
  const std::string dir = ::testing::TempDir();
  const std::string a = dir + "/railsim_inputs_a.json", b = dir + "/railsim_inputs_b.json";
  std::ofstream(a) << R"({"name": "M", "layers": 2})";
  std::ofstream(b) << R"({"name": "M", "layers": 3})";
  const std::vector<std::string> da = describe_inputs({{"--gpus", "64"}, {"--model", a}});
  ASSERT_EQ(da.size(), 3u);
  EXPECT_EQ(da[0], "--gpus 64");
  EXPECT_EQ(da[1], "--model " + a);
  EXPECT_NE(da[2].find("--model file " + a + ": 26 bytes, FNV-1a "), std::string::npos) << da[2];
  // The same bytes describe the same (size and hash); other bytes of the same size do not.
  const auto summary = [](const std::string& path) {
    const std::string line = describe_inputs({{"--model", path}}).back();
    return line.substr(line.find(':'));
  };
  EXPECT_EQ(summary(a), summary(a));
  std::ofstream(b) << R"({"name": "M", "layers": 2})";
  EXPECT_EQ(summary(a), summary(b));
  std::ofstream(b) << R"({"name": "M", "layers": 3})";
  EXPECT_NE(summary(a), summary(b));

  // Every rank equal: nothing thrown.
  auto errors = run_ranks(3, [&](ThreadCommunicator& comm) { check_same_inputs(comm, da); });
  for (const auto& e : errors) EXPECT_FALSE(e);

  // Rank 2 was given other GPUs: every rank throws the same error, naming rank 2 and the line.
  errors = run_ranks(3, [&](ThreadCommunicator& comm) {
    check_same_inputs(comm,
                      comm.rank() == 2 ? describe_inputs({{"--gpus", "128"}, {"--model", a}}) : da);
  });
  for (const auto& e : errors) {
    ASSERT_TRUE(e);
    EXPECT_TRUE(is_input_error(e));
    EXPECT_EQ(what_of(e),
              "mpirun: rank 2 of 3 was given other inputs than rank 0 ('--gpus 128' where rank 0 "
              "has '--gpus 64'); every process of a distributed sweep must be started with the "
              "same options and files");
  }
  // Rank 1's file holds other bytes under the same option value: caught by the file's line.
  errors = run_ranks(2, [&](ThreadCommunicator& comm) {
    std::vector<std::string> mine = da;
    if (comm.rank() == 1) mine = describe_inputs({{"--gpus", "64"}, {"--model", a}});
    if (comm.rank() == 1) mine.back() = describe_inputs({{"--model", b}}).back();
    check_same_inputs(comm, mine);
  });
  for (const auto& e : errors) {
    ASSERT_TRUE(e);
    EXPECT_NE(what_of(e).find("rank 1 of 2 was given other inputs than rank 0 ('--model file"),
              std::string::npos)
        << what_of(e);
  }
  // A rank with an input more than rank 0's.
  errors = run_ranks(2, [&](ThreadCommunicator& comm) {
    check_same_inputs(comm, comm.rank() == 1 ? describe_inputs({{"--gpus", "64"}, {"--zip", ""}})
                                             : describe_inputs({{"--gpus", "64"}}));
  });
  EXPECT_NE(what_of(errors[0]).find("('--zip ' where rank 0 has nothing)"), std::string::npos)
      << what_of(errors[0]);
  std::remove(a.c_str());
  std::remove(b.c_str());
}

TEST(Distributed, ACancelledRankStopsEveryRank) {
  // Inside agree: every rank throws Cancelled, whichever rank was interrupted.
  auto errors = run_ranks(3, [&](ThreadCommunicator& comm) {
    agree(comm, [&] {
      if (comm.rank() == 1) throw Cancelled(SIGINT);
    });
  });
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(errors[static_cast<std::size_t>(r)]);
    try {
      std::rethrow_exception(errors[static_cast<std::size_t>(r)]);
    } catch (const Cancelled& c) {
      EXPECT_EQ(c.signal(), SIGINT) << r;
    } catch (...) {
      ADD_FAILURE() << "rank " << r << " did not throw Cancelled";
    }
  }
  // A share interrupted while evaluating reaches rank 0 as such, not as an internal error.
  SweepOptions o = test::design_sweep({1024, 2048});
  const SweepInputs inputs = load_sweep_inputs(o);
  errors = run_ranks(2, [&](ThreadCommunicator& comm) {
    SweepOptions mine = o;
    if (comm.rank() == 1) mine.on_point_done = [] { throw Cancelled(0); };
    agree(comm, [&] { (void)run_distributed(mine, inputs, comm); });
  });
  for (const auto& e : errors) {
    ASSERT_TRUE(e);
    EXPECT_THROW(std::rethrow_exception(e), Cancelled);
  }
  const Share s = decode_share(encode_share(Share{.error = {}, .points = {}, .cancelled = true}));
  EXPECT_TRUE(s.cancelled);
  EXPECT_FALSE(s.error);
}

TEST(Distributed, TheLauncherIsReadFromItsEnvironment) {
  const char* vars[] = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                        "PMI_SIZE"};
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  for (const char* v : vars) {
    const char* old = std::getenv(v);
    saved.emplace_back(v, old ? std::optional<std::string>(old) : std::nullopt);
    ::unsetenv(v);
  }
  EXPECT_FALSE(launched_by_mpi());
  ::setenv("PMIX_RANK", "2", 1);
  ASSERT_TRUE(launched_by_mpi());
  EXPECT_EQ(launched_by_mpi()->rank, 2);
  EXPECT_EQ(launched_by_mpi()->size, 0);
  ::setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
  EXPECT_EQ(launched_by_mpi()->rank, 3);
  EXPECT_EQ(launched_by_mpi()->size, 8);
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::unsetenv("PMIX_RANK");
  ::setenv("PMI_RANK", "x1", 1);  // not a number: not a launcher's
  EXPECT_FALSE(launched_by_mpi());
  ::setenv("PMI_RANK", "1", 1);
  ::setenv("PMI_SIZE", "4", 1);
  EXPECT_EQ(launched_by_mpi()->rank, 1);
  EXPECT_EQ(launched_by_mpi()->size, 4);
  for (const auto& [v, old] : saved) {
    if (old)
      ::setenv(v.c_str(), old->c_str(), 1);
    else
      ::unsetenv(v.c_str());
  }
}

}  // namespace
}  // namespace railsim::sweep
