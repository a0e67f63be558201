#include "redlock/clock.hpp"

namespace redlock {
namespace {

class SteadyClockSource final : public MonotonicClock {
 public:
  [[nodiscard]] TimePoint now() const noexcept override { return SteadyClock::now(); }
};

}  // namespace

const MonotonicClock& steady_clock_source() noexcept {
  static const SteadyClockSource clock;
  return clock;
}

}  // namespace redlock
