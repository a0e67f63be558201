// Validity arithmetic of the acquire (docs/algorithm.md, "Acquire"): pure functions of durations.
#pragma once

#include "redlock/types.hpp"

namespace redlock::detail {

// Clock drift allowance: ttl * factor (rounded up to whole ms) + extra.
// The reference implementation's defaults are factor 0.01 and 2 ms.
[[nodiscard]] Milliseconds drift_allowance(Milliseconds ttl, double factor,
                                           Milliseconds extra) noexcept;

// validity = ttl - elapsed - drift; may be negative.
[[nodiscard]] Microseconds validity_left(Milliseconds ttl, Microseconds elapsed,
                                         Milliseconds drift) noexcept;

// The lock may be handed out only if validity > min_validity (strictly).
[[nodiscard]] constexpr bool validity_sufficient(Microseconds validity,
                                                 Milliseconds min_validity) noexcept {
  return validity > min_validity;
}

// The elapsed time between two readings of the monotonic clock; a reading
// that went backwards (a broken clock) counts as zero, never as negative time
// that would lengthen a lock.
[[nodiscard]] Microseconds elapsed_between(TimePoint start, TimePoint end) noexcept;

// When a quorum round ran, on the client's monotonic clock: what every
// verdict over a round is measured on.
struct RoundTiming {
  // Read before the first request was queued (t0).
  TimePoint started{};
  // When the deciding answer was counted.
  TimePoint decided{};
  // The deadline of the lock the round acts on, as it stood when the round
  // began; TimePoint::max() for a round that acts on no held lock (an
  // acquire).
  TimePoint deadline = TimePoint::max();

  [[nodiscard]] Microseconds elapsed() const noexcept { return elapsed_between(started, decided); }
  // A round decided at or after its lock's deadline decides nothing: the
  // lock had lapsed, another client may hold it by then, and whatever the
  // nodes answered cannot bring it back.
  [[nodiscard]] bool decided_in_time() const noexcept { return decided < deadline; }
};

}  // namespace redlock::detail
