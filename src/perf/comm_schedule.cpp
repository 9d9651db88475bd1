#include "railsim/perf/comm_schedule.hpp"

#include <stdexcept>

namespace railsim::perf {

std::string_view to_string(Parallelism p) {
  switch (p) {
    case Parallelism::tp: return "tp";
    case Parallelism::sp: return "sp";
    case Parallelism::pp: return "pp";
    case Parallelism::dp: return "dp";
    case Parallelism::ep: return "ep";
  }
  return "?";
}

std::string_view to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce: return "all_reduce";
    case CollectiveOp::all_gather: return "all_gather";
    case CollectiveOp::reduce_scatter: return "reduce_scatter";
    case CollectiveOp::all_to_all: return "all_to_all";
    case CollectiveOp::send_recv: return "send_recv";
  }
  return "?";
}

std::string_view to_string(Algorithm a) {
  switch (a) {
    case Algorithm::ring: return "ring";
    case Algorithm::hierarchical: return "hierarchical";
    case Algorithm::direct: return "direct";
    case Algorithm::p2p: return "p2p";
  }
  return "?";
}

std::string_view to_string(Phase p) {
  switch (p) {
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::optimizer: return "optimizer";
  }
  return "?";
}

void CommSchedule::add(const CommOp& op) {
  if (size >= kMaxOps) throw std::logic_error("CommSchedule: more than kMaxOps operations");
  ops[static_cast<std::size_t>(size++)] = op;
}

}  // namespace railsim::perf
