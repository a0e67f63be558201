// A monotonic clock that moves only when a test moves it.
#pragma once

#include <atomic>

#include "redlock/clock.hpp"

namespace redlock::test {

class ManualClock final : public MonotonicClock {
 public:
  [[nodiscard]] TimePoint now() const noexcept override {
    return TimePoint(SteadyClock::duration(ticks_.load()));
  }
  void advance(SteadyClock::duration by) noexcept { ticks_ += by.count(); }

 private:
  // Starts well away from the epoch so subtracting from now() stays valid.
  std::atomic<SteadyClock::rep> ticks_{SteadyClock::duration(std::chrono::hours(1)).count()};
};

// A clock that never moves from the instant it was given.
class FrozenClock final : public MonotonicClock {
 public:
  explicit FrozenClock(TimePoint at) noexcept : at_(at) {}
  [[nodiscard]] TimePoint now() const noexcept override { return at_; }

 private:
  TimePoint at_;
};

// A clock that jumps forward by `step` on every reading: each elapsed-time
// measurement of an operation sees at least `step` pass.
class LeapingClock final : public MonotonicClock {
 public:
  explicit LeapingClock(SteadyClock::duration step) : step_(step) {}
  [[nodiscard]] TimePoint now() const noexcept override {
    return SteadyClock::now() + step_ * readings_.fetch_add(1);
  }

 private:
  SteadyClock::duration step_;
  mutable std::atomic<SteadyClock::rep> readings_{0};
};

}  // namespace redlock::test
