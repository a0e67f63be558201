// The monotonic time source, injectable so tests can move time by hand.
//
// All elapsed-time and validity arithmetic reads `now()` of the clock the
// client was built with. The default is SteadyClock (types.hpp:
// CLOCK_BOOTTIME on Linux, which also counts a suspended host), never the
// wall clock, so a step of the system time cannot lengthen or shorten a
// lock.
#pragma once

#include "redlock/export.hpp"
#include "redlock/types.hpp"

namespace redlock {

class REDLOCK_API MonotonicClock {
 public:
  virtual ~MonotonicClock() = default;
  // Must never go backwards. Called on the loop thread only.
  [[nodiscard]] virtual TimePoint now() const noexcept = 0;
};

// The process-wide SteadyClock. Lives for the whole program.
[[nodiscard]] REDLOCK_API const MonotonicClock& steady_clock_source() noexcept;

}  // namespace redlock
