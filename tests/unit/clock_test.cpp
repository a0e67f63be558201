// The clock all timing is measured on: CLOCK_BOOTTIME, read in nanoseconds.
// (What it is for, a host suspended between a first SET and the validity
// check, cannot be produced in a test; these check the reading itself.)
#include "redlock/clock.hpp"

#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <type_traits>

#include "redlock/types.hpp"

namespace redlock {
namespace {

std::int64_t boottime_ns() {
  timespec reading{};
  ::clock_gettime(CLOCK_BOOTTIME, &reading);
  return static_cast<std::int64_t>(reading.tv_sec) * 1'000'000'000 + reading.tv_nsec;
}

TEST(BootClock, IsWhatEveryTimePointIsMeasuredOn) {
  static_assert(std::is_same_v<TimePoint::clock, BootClock>);
  static_assert(BootClock::is_steady);
  const TimePoint before = SteadyClock::now();
  const TimePoint from_source = steady_clock_source().now();
  EXPECT_LE(before, from_source);
}

TEST(BootClock, ReadsClockBoottimeInNanoseconds) {
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t low = boottime_ns();
    const std::int64_t read = BootClock::now().time_since_epoch().count();
    const std::int64_t high = boottime_ns();
    ASSERT_LE(low, read);
    ASSERT_LE(read, high);
  }
}

TEST(BootClock, NeverGoesBackwards) {
  TimePoint last = BootClock::now();
  for (int i = 0; i < 100000; ++i) {
    const TimePoint now = BootClock::now();
    ASSERT_GE(now, last);
    last = now;
  }
}

}  // namespace
}  // namespace redlock
