#include "protocol/validity.hpp"

#include <chrono>
#include <cmath>

namespace redlock::detail {

Milliseconds drift_allowance(Milliseconds ttl, double factor, Milliseconds extra) noexcept {
  const double scaled = std::ceil(static_cast<double>(ttl.count()) * factor);
  return Milliseconds(static_cast<Milliseconds::rep>(scaled)) + extra;
}

Microseconds validity_left(Milliseconds ttl, Microseconds elapsed, Milliseconds drift) noexcept {
  return Microseconds(ttl) - elapsed - Microseconds(drift);
}

Microseconds elapsed_between(TimePoint start, TimePoint end) noexcept {
  if (end <= start) return Microseconds(0);
  // Round up: an elapsed time rounded down would overstate validity.
  return std::chrono::ceil<Microseconds>(end - start);
}

}  // namespace redlock::detail
