#include "retry_policy.hpp"

#include <chrono>
#include <cstdint>

#include "random_value.hpp"

namespace redlock::detail {

std::optional<Microseconds> next_retry_delay(const RetryPlan& plan, int attempts_made,
                                             TimePoint now, double uniform01) noexcept {
  const int retries_done = attempts_made - 1;
  if (plan.max_retries >= 0 && retries_done >= plan.max_retries) return std::nullopt;
  if (plan.max_retries < 0 && !plan.deadline) return std::nullopt;  // unbounded: refuse
  if (plan.deadline && now >= *plan.deadline) return std::nullopt;

  if (uniform01 < 0.0) uniform01 = 0.0;
  if (uniform01 >= 1.0) uniform01 = 0.0;
  const auto span = static_cast<double>(Microseconds(plan.mean_delay).count()) * 2.0;
  Microseconds delay(static_cast<Microseconds::rep>(span * uniform01));
  if (plan.deadline) {
    const auto until_deadline = std::chrono::floor<Microseconds>(*plan.deadline - now);
    if (delay > until_deadline) delay = until_deadline;
  }
  return delay;
}

double random_unit() noexcept {
  std::uint64_t bits = 0;
  fill_random(reinterpret_cast<std::uint8_t*>(&bits), sizeof bits);
  // 53 random bits scaled into [0, 1).
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

}  // namespace redlock::detail
