// When to try again after a failed acquire attempt: pure logic over a
// uniform random draw, so tests can pin the jitter.
#pragma once

#include <optional>

#include "redlock/types.hpp"

namespace redlock::detail {

struct RetryPlan {
  // Retries after the first attempt; -1 means bounded by `deadline` only.
  int max_retries = 3;
  Milliseconds mean_delay{200};
  // No attempt starts after this instant.
  std::optional<TimePoint> deadline;
};

// The pause before the next attempt, or nullopt when no attempt remains.
// `attempts_made` counts attempts so far (>= 1). `uniform01` is a draw from
// [0, 1): the pause is uniform in [0, 2 * mean_delay) ("full jitter" around
// the mean, which desynchronises contending clients), cut short so that the
// next attempt starts no later than the deadline.
[[nodiscard]] std::optional<Microseconds> next_retry_delay(const RetryPlan& plan, int attempts_made,
                                                           TimePoint now,
                                                           double uniform01) noexcept;

// A uniform draw in [0, 1) from the OS CSPRNG (retry jitter is not secret,
// but one source of randomness is simpler than two).
[[nodiscard]] double random_unit() noexcept;

}  // namespace redlock::detail
