// Validity arithmetic (docs/algorithm.md, "Acquire") on a clock moved by hand.
#include "protocol/validity.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "manual_clock.hpp"

namespace redlock::detail {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(Drift, ReferenceDefaults) {
  EXPECT_EQ(drift_allowance(milliseconds(10000), 0.01, milliseconds(2)), milliseconds(102));
  EXPECT_EQ(drift_allowance(milliseconds(1000), 0.01, milliseconds(2)), milliseconds(12));
  EXPECT_EQ(drift_allowance(milliseconds(30000), 0.0, milliseconds(0)), milliseconds(0));
}

TEST(Drift, RoundsUpFractionalMilliseconds) {
  // 150 * 0.01 = 1.5 ms: rounding down would allow less drift than asked.
  EXPECT_EQ(drift_allowance(milliseconds(150), 0.01, milliseconds(2)), milliseconds(4));
}

struct ValidityCase {
  milliseconds ttl;
  microseconds elapsed;
  milliseconds drift;
  milliseconds min_validity;
  microseconds expected;
  bool sufficient;
};

TEST(Validity, TimingEdges) {
  const ValidityCase table[] = {
      // Instant answer: all but the drift is left.
      {milliseconds(10000), microseconds(0), milliseconds(102), milliseconds(0),
       microseconds(9'898'000), true},
      // Typical: 1.5 ms round trip.
      {milliseconds(10000), microseconds(1500), milliseconds(102), milliseconds(0),
       microseconds(9'896'500), true},
      // One microsecond left: still strictly positive.
      {milliseconds(100), microseconds(96'999), milliseconds(3), milliseconds(0), microseconds(1),
       true},
      // Exactly zero left: refused (validity must be > 0).
      {milliseconds(100), microseconds(97'000), milliseconds(3), milliseconds(0), microseconds(0),
       false},
      // Elapsed beyond the TTL: negative.
      {milliseconds(100), microseconds(250'000), milliseconds(3), milliseconds(0),
       microseconds(-153'000), false},
      // Minimum validity: equal is not enough, one microsecond more is.
      {milliseconds(1000), microseconds(488'000), milliseconds(12), milliseconds(500),
       microseconds(500'000), false},
      {milliseconds(1000), microseconds(487'999), milliseconds(12), milliseconds(500),
       microseconds(500'001), true},
  };
  for (const auto& c : table) {
    const auto validity = validity_left(c.ttl, c.elapsed, c.drift);
    EXPECT_EQ(validity, c.expected) << "ttl=" << c.ttl.count() << " elapsed=" << c.elapsed.count();
    EXPECT_EQ(validity_sufficient(validity, c.min_validity), c.sufficient)
        << "ttl=" << c.ttl.count() << " elapsed=" << c.elapsed.count();
  }
}

TEST(Elapsed, MeasuredOnTheInjectedClock) {
  test::ManualClock clock;
  const TimePoint t0 = clock.now();
  clock.advance(microseconds(1234));
  EXPECT_EQ(elapsed_between(t0, clock.now()), microseconds(1234));
}

TEST(Elapsed, RoundsPartialMicrosecondsUp) {
  test::ManualClock clock;
  const TimePoint t0 = clock.now();
  clock.advance(std::chrono::nanoseconds(1001));
  EXPECT_EQ(elapsed_between(t0, clock.now()), microseconds(2));
}

TEST(Elapsed, ABackwardsReadingCountsAsZeroNotNegative) {
  test::ManualClock clock;
  clock.advance(milliseconds(10));
  const TimePoint later = clock.now();
  const TimePoint earlier = later - milliseconds(5);
  EXPECT_EQ(elapsed_between(later, earlier), microseconds(0));
}

}  // namespace
}  // namespace redlock::detail
