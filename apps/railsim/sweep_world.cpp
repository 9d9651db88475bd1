// The processes `railsim sweep` shares its points among: this one alone, or the ranks of the MPI
// job a launcher (mpirun, srun) started. The program links the MPI Communicator; the library's
// sweep command reaches it through command::set_sweep_world.
#include "railsim/command/sweep_world.hpp"

#include <memory>
#include <optional>
#include <string>

#include "commands.hpp"
#include "railsim/core/error.hpp"
#include "railsim/sweep/distributed.hpp"

#ifdef RAILSIM_WITH_MPI
#include "mpi_communicator.hpp"
#endif

namespace railsim::cli {

namespace {

std::unique_ptr<sweep::Communicator> make_world() {
  const std::optional<sweep::Launch> launch = sweep::launched_by_mpi();
  if (!launch) return std::make_unique<sweep::SerialCommunicator>();
#ifdef RAILSIM_WITH_MPI
  return sweep::mpi_world_communicator();
#else
  if (launch->rank > 0 || launch->size > 1)
    throw InputError("mpirun",
                     "this railsim was built without MPI (RAILSIM_MPI=OFF), so its processes "
                     "cannot share a sweep; run it as one process or build it with MPI");
  return std::make_unique<sweep::SerialCommunicator>();
#endif
}

// The world lives until the process exits, after main has printed the error of a failed sweep:
// every rank then waits for the others before leaving MPI, so no rank exits first and lets the
// launcher end the job before rank 0's line is out.
bool g_world_open = false;
sweep::Communicator& open_world() {
  static const std::unique_ptr<sweep::Communicator> world = make_world();
  g_world_open = true;
  return *world;
}

}  // namespace

void install_sweep_world() {
  command::set_sweep_world(open_world);
}

std::string agree_on_startup_error(const std::string& message) {
  if (g_world_open || !sweep::launched_by_mpi()) return message;
  try {
    sweep::agree(open_world(), [&] { throw InputError("", message); });
  } catch (const InputError& agreed) {
    return agreed.what();
  }
  return message;
}

}  // namespace railsim::cli
