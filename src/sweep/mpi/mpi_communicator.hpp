#pragma once
// The sweep's Communicator over MPI (MPI_COMM_WORLD). Built only with RAILSIM_MPI, into
// railsim_sweep_mpi, which only the program links: the library and its tests need no MPI.
#include <memory>

#include "railsim/sweep/distributed.hpp"

namespace railsim::sweep {

// Initializes MPI (MPI_Init_thread, funneled: only the calling thread talks to MPI while oneTBB's
// threads compute) and finalizes it when the communicator is destroyed. Call it once, in a
// process an MPI launcher started (launched_by_mpi()).
std::unique_ptr<Communicator> mpi_world_communicator();

}  // namespace railsim::sweep
