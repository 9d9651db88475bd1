#pragma once
// The processes `sweep` shares its points among (sweep/distributed.hpp). The library has no MPI:
// a program that links an MPI Communicator installs the processes of its run here before it runs
// a command (apps/railsim: the ranks an MPI launcher started, or the process alone); with none
// installed (Python), a sweep runs as one process.
#include <functional>

#include "railsim/sweep/distributed.hpp"

namespace railsim::command {

// Called by every rank's sweep before its first collective step; it returns the same
// Communicator each time, which outlives the command.
using SweepWorld = std::function<sweep::Communicator&()>;
void set_sweep_world(SweepWorld world);

}  // namespace railsim::command
