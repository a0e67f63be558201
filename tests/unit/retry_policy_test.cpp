// Retry pauses: full jitter, bounded by count or by a deadline.
#include "retry_policy.hpp"

#include <gtest/gtest.h>

#include "manual_clock.hpp"

namespace redlock::detail {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(RetryPolicy, CountBoundsAttempts) {
  test::ManualClock clock;
  RetryPlan plan{3, milliseconds(200), std::nullopt};
  EXPECT_TRUE(next_retry_delay(plan, 1, clock.now(), 0.5));
  EXPECT_TRUE(next_retry_delay(plan, 3, clock.now(), 0.5));
  EXPECT_FALSE(next_retry_delay(plan, 4, clock.now(), 0.5));  // 1 attempt + 3 retries done
}

TEST(RetryPolicy, ZeroRetriesMeansOneAttempt) {
  test::ManualClock clock;
  RetryPlan plan{0, milliseconds(200), std::nullopt};
  EXPECT_FALSE(next_retry_delay(plan, 1, clock.now(), 0.5));
}

TEST(RetryPolicy, FullJitterSpansZeroToTwiceTheMean) {
  test::ManualClock clock;
  RetryPlan plan{10, milliseconds(200), std::nullopt};
  EXPECT_EQ(*next_retry_delay(plan, 1, clock.now(), 0.0), microseconds(0));
  EXPECT_EQ(*next_retry_delay(plan, 1, clock.now(), 0.5), microseconds(200'000));
  EXPECT_EQ(*next_retry_delay(plan, 1, clock.now(), 0.999), microseconds(399'600));
}

TEST(RetryPolicy, DeadlineCutsThePauseShort) {
  test::ManualClock clock;
  RetryPlan plan{-1, milliseconds(200), clock.now() + milliseconds(50)};
  EXPECT_EQ(*next_retry_delay(plan, 1, clock.now(), 0.5), microseconds(50'000));
}

TEST(RetryPolicy, NoAttemptAfterTheDeadline) {
  test::ManualClock clock;
  RetryPlan plan{-1, milliseconds(200), clock.now() + milliseconds(50)};
  clock.advance(milliseconds(50));
  EXPECT_FALSE(next_retry_delay(plan, 7, clock.now(), 0.5));
}

TEST(RetryPolicy, UnboundedCountNeedsADeadline) {
  test::ManualClock clock;
  RetryPlan plan{-1, milliseconds(200), std::nullopt};
  EXPECT_FALSE(next_retry_delay(plan, 1, clock.now(), 0.5));
}

TEST(RetryPolicy, CountAndDeadlineTogetherStopAtTheFirst) {
  test::ManualClock clock;
  RetryPlan plan{2, milliseconds(10), clock.now() + milliseconds(1000)};
  EXPECT_TRUE(next_retry_delay(plan, 2, clock.now(), 0.5));
  EXPECT_FALSE(next_retry_delay(plan, 3, clock.now(), 0.5));
}

TEST(RandomUnit, StaysInTheUnitInterval) {
  for (int i = 0; i < 1000; ++i) {
    const double u = random_unit();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace redlock::detail
