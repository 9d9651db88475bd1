#include "railsim/core/threads.hpp"

#include "railsim/core/json.hpp"

namespace railsim {

int check_threads(const std::string& option, std::int64_t threads) {
  return static_cast<int>(check_integer(option, threads, 0, kMaxThreads));
}

}  // namespace railsim
