#include "mpi_communicator.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace railsim::sweep {

namespace {

// Messages of at most 1 GiB: MPI counts are ints.
constexpr std::uint64_t kChunk = std::uint64_t{1} << 30;
constexpr int kTag = 7531;

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

void send_bytes(const std::string& s, int to) {
  std::uint64_t n = s.size();
  check(MPI_Send(&n, 1, MPI_UINT64_T, to, kTag, MPI_COMM_WORLD), "MPI_Send");
  for (std::uint64_t at = 0; at < n; at += kChunk)
    check(MPI_Send(s.data() + at, static_cast<int>(std::min(kChunk, n - at)), MPI_BYTE, to, kTag,
                   MPI_COMM_WORLD),
          "MPI_Send");
}

std::string receive_bytes(int from) {
  std::uint64_t n = 0;
  check(MPI_Recv(&n, 1, MPI_UINT64_T, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  std::string s(n, '\0');
  for (std::uint64_t at = 0; at < n; at += kChunk)
    check(MPI_Recv(s.data() + at, static_cast<int>(std::min(kChunk, n - at)), MPI_BYTE, from, kTag,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "MPI_Recv");
  return s;
}

// Waits until every rank gets here, sleeping 1 ms between looks instead of spinning: Open MPI's
// blocking calls poll at full speed, so a rank done with its share would take a core from the
// oneTBB threads of the ranks still working beside it on the same machine.
void wait_for_all_ranks() {
  MPI_Request request;
  check(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
  int done = 0;
  while (true) {
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    // Errors come back as codes (check throws) instead of aborting the job.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  // Every rank waits for the others before it leaves (main has printed by then: the world is
  // destroyed at exit), so a rank exiting 2 cannot end the job under rank 0's error line.
  ~MpiCommunicator() override {
    try {
      wait_for_all_ranks();
    } catch (const std::exception&) {
    }
    MPI_Finalize();
  }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> gather(const std::string& mine) override {
    wait_for_all_ranks();
    if (rank_ != 0) {
      send_bytes(mine, 0);
      return {};
    }
    std::vector<std::string> all;
    all.reserve(static_cast<std::size_t>(size_));
    all.push_back(mine);
    for (int r = 1; r < size_; ++r) all.push_back(receive_bytes(r));
    return all;
  }

  std::string broadcast(const std::string& bytes) override {
    std::uint64_t n = rank_ == 0 ? bytes.size() : 0;
    check(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    std::string s = rank_ == 0 ? bytes : std::string(n, '\0');
    for (std::uint64_t at = 0; at < n; at += kChunk)
      check(MPI_Bcast(s.data() + at, static_cast<int>(std::min(kChunk, n - at)), MPI_BYTE, 0,
                      MPI_COMM_WORLD),
            "MPI_Bcast");
    return s;
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> mpi_world_communicator() {
  return std::make_unique<MpiCommunicator>();
}

}  // namespace railsim::sweep
