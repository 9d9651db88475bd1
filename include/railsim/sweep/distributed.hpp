#pragma once
// A sweep shared by several processes (e.g. the ranks of an MPI job: `mpirun -np 8 railsim sweep`).
// Each process evaluates a static share of the points (with oneTBB inside), rank 0 gathers the
// rows in the points' order and builds the one table, byte for byte the table of the same sweep
// run as one process. The processes talk through a Communicator: SerialCommunicator here (one
// process), an MPI one in the program when it is built with MPI (RAILSIM_MPI), so that this
// library and its tests need no MPI.
//
// Errors stay collective: a step that fails on some rank (bad input, a file missing on one node)
// fails on every rank with the lowest failing rank's error (agree), so that every process exits
// with the same status and rank 0 alone prints the one line.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "railsim/core/error.hpp"
#include "railsim/report/table.hpp"
#include "railsim/sweep/sweep.hpp"

namespace railsim::sweep {

// The processes of one job. Every collective call must be made by every rank, in the same order.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;  // 0 .. size()-1; rank 0 prints
  virtual int size() const = 0;
  // Collective: on rank 0, the bytes of every rank in rank order (its own first); elsewhere empty.
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
  // Collective: rank 0's `bytes` on every rank (the others' argument is ignored).
  virtual std::string broadcast(const std::string& bytes) = 0;
};

// One process: rank 0 of 1.
class SerialCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> gather(const std::string& mine) override { return {mine}; }
  std::string broadcast(const std::string& bytes) override { return bytes; }
};

// How the points are shared: contiguous blocks (rank r: points [r n / R, (r + 1) n / R)) or
// strided (rank r: points r, r + R, r + 2R, ...; neighbouring points often cost alike, so this
// balances sweeps whose cost grows along an axis).
enum class Split { contiguous, strided };
// "contiguous" or "strided"; anything else is an InputError naming `option`.
Split parse_split(const std::string& text, const std::string& option = "--split");
const char* to_string(Split s);

// The indices of rank `rank`'s points among `points`, ascending. Every point belongs to exactly
// one rank; shares differ by at most one point.
std::vector<std::size_t> share_of(std::size_t points, int rank, int ranks, Split split);

// The rank and size an MPI launcher gave this process, from the environment it sets before the
// program starts: Open MPI's mpirun (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE), PMIx (srun
// --mpi=pmix: PMIX_RANK) and PMI (srun --mpi=pmi2, MPICH: PMI_RANK, PMI_SIZE). size is 0 when
// the launcher does not say it. nullopt: started without a launcher.
struct Launch {
  int rank = 0;
  int size = 0;
};
std::optional<Launch> launched_by_mpi();

// Collective: runs `step` on every rank. When it throws on one rank or more, every rank throws
// the lowest failing rank's error: that rank its own exception, the others an InputError with the
// same field and message (or, for any other exception, std::runtime_error with its message,
// naming the rank; for a Cancelled, Cancelled: every rank stops). With one rank, `step` runs as is.
void agree(Communicator& comm, const std::function<void()>& step);

// One line per input of a rank, in a fixed order, for check_same_inputs: "NAME VALUES" for each
// (name, values) given, and for every value that names a regular file, its size and FNV-1a hash
// (a model file that differs between two nodes differs here too).
std::vector<std::string> describe_inputs(
    const std::vector<std::pair<std::string, std::string>>& given);

// Collective: every rank's `inputs` (describe_inputs) must equal rank 0's. Otherwise every rank
// throws the same InputError("mpirun", ...) naming the first rank that differs and its first line
// that differs, so that no rank evaluates points of another sweep.
void check_same_inputs(Communicator& comm, const std::vector<std::string>& inputs);

// What rank 0 holds after a distributed sweep.
struct GatheredSweep {
  report::Table table;  // sweep_table(run_sweep(opt)), byte for byte
  std::int64_t valid_points = 0;
  std::optional<InputError> first_invalid;  // the first invalid point's reason, in point order
};

// Collective: rank r evaluates share_of(points, r, size, split) (evaluate_points, its oneTBB
// threads and on_point_done as set in `opt`); rank 0 gathers the rows. Rank 0 gets the table,
// the others nullopt. A rank whose evaluation throws still takes part in the gather; rank 0 then
// throws std::runtime_error naming that rank and its error (run it inside agree).
std::optional<GatheredSweep> run_distributed(const SweepOptions& opt, const SweepInputs& inputs,
                                             Communicator& comm, Split split = Split::strided);

// The bytes a rank sends: its points' validity and rows (cells with their exact bits), or the
// error that stopped it. Exposed for the tests; decode_share throws std::runtime_error on bytes
// that were not made by encode_share.
struct EncodedPoint {
  std::optional<InputError> invalid;
  std::vector<std::vector<report::Cell>> rows;
};
struct Share {
  std::optional<std::string> error;  // set: the rank failed
  std::vector<EncodedPoint> points;
  bool cancelled = false;  // the rank was interrupted (core/cancel.hpp); rank 0 throws Cancelled
};
std::string encode_share(const Share& share);
Share decode_share(const std::string& bytes);

}  // namespace railsim::sweep
