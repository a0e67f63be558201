// Retry pauses: full jitter, bounded by count or by a deadline; the short
// pause after a split vote; the courtesy pause of a client that has just
// waited for the same resource, and its bounded memory of such resources.
#include "protocol/retry_policy.hpp"

#include <gtest/gtest.h>

#include <string>

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

TEST(SplitRetryPause, SpansZeroToThreeRoundTrips) {
  EXPECT_EQ(split_retry_pause(microseconds(1000), 0.0), microseconds(0));
  EXPECT_EQ(split_retry_pause(microseconds(1000), 0.5), microseconds(1500));
  EXPECT_EQ(split_retry_pause(microseconds(1000), 0.999), microseconds(2997));
}

TEST(SplitRetryPause, UnknownRoundTripRetriesAtOnce) {
  EXPECT_EQ(split_retry_pause(microseconds(0), 0.5), microseconds(0));
  EXPECT_EQ(split_retry_pause(microseconds(-5), 0.5), microseconds(0));
}

TEST(SplitRetryPause, DrawOutsideTheUnitIntervalCountsAsZero) {
  EXPECT_EQ(split_retry_pause(microseconds(1000), 1.0), microseconds(0));
  EXPECT_EQ(split_retry_pause(microseconds(1000), -0.5), microseconds(0));
}

TEST(CourtesyPause, NoneWithoutRecentContention) {
  test::ManualClock clock;
  RetryPlan plan{-1, milliseconds(200), clock.now() + milliseconds(1000)};
  EXPECT_EQ(courtesy_pause(plan, clock.now(), std::nullopt, 0.5), microseconds(0));
}

TEST(CourtesyPause, SpansThreeToFiveRoundTrips) {
  test::ManualClock clock;
  RetryPlan plan{-1, milliseconds(200), clock.now() + milliseconds(1000)};
  EXPECT_EQ(courtesy_pause(plan, clock.now(), microseconds(500), 0.0), microseconds(1500));
  EXPECT_EQ(courtesy_pause(plan, clock.now(), microseconds(500), 0.5), microseconds(2000));
  EXPECT_EQ(courtesy_pause(plan, clock.now(), microseconds(500), 0.999), microseconds(2499));
}

TEST(CourtesyPause, TryLockAnswersAtOnce) {
  test::ManualClock clock;
  RetryPlan plan{0, milliseconds(200), std::nullopt};
  EXPECT_EQ(courtesy_pause(plan, clock.now(), microseconds(500), 0.5), microseconds(0));
}

TEST(CourtesyPause, NeverBeyondTheMeanRetryDelay) {
  test::ManualClock clock;
  RetryPlan plan{3, milliseconds(1), std::nullopt};
  EXPECT_EQ(courtesy_pause(plan, clock.now(), microseconds(800), 0.5), microseconds(1000));
}

TEST(CourtesyPause, NeverBeyondTheDeadline) {
  test::ManualClock clock;
  RetryPlan plan{-1, milliseconds(200), clock.now() + microseconds(700)};
  EXPECT_EQ(courtesy_pause(plan, clock.now(), microseconds(500), 0.5), microseconds(700));
  clock.advance(milliseconds(1));
  EXPECT_EQ(courtesy_pause(plan, clock.now(), microseconds(500), 0.5), microseconds(0));
}

TEST(RecentContention, OneRetryMakesAResourceContended) {
  test::ManualClock clock;
  RecentContention recent;
  recent.note("a", clock.now(), 1, microseconds(500));
  EXPECT_EQ(recent.contended_round_trip("a", clock.now()), microseconds(500));
  EXPECT_FALSE(recent.contended_round_trip("b", clock.now()));
}

TEST(RecentContention, AnAcquireWithoutRetriesOfAnUnknownResourceIsNotKept) {
  test::ManualClock clock;
  RecentContention recent;
  recent.note("a", clock.now(), 0, microseconds(500));
  EXPECT_EQ(recent.size(), 0u);
  EXPECT_FALSE(recent.contended_round_trip("a", clock.now()));
}

TEST(RecentContention, RetriesAreAveragedAQuarterToTheNewest) {
  test::ManualClock clock;
  RecentContention recent;
  recent.note("a", clock.now(), 2, microseconds(500));
  recent.note("a", clock.now(), 0, microseconds(500));  // mean 1.5
  EXPECT_TRUE(recent.contended_round_trip("a", clock.now()));
  recent.note("a", clock.now(), 0, microseconds(500));  // mean 1.125
  EXPECT_TRUE(recent.contended_round_trip("a", clock.now()));
  recent.note("a", clock.now(), 0, microseconds(500));  // mean 0.84
  EXPECT_TRUE(recent.contended_round_trip("a", clock.now()));
  recent.note("a", clock.now(), 0, microseconds(500));  // mean 0.63
  EXPECT_TRUE(recent.contended_round_trip("a", clock.now()));
  recent.note("a", clock.now(), 0, microseconds(500));  // mean 0.47
  EXPECT_FALSE(recent.contended_round_trip("a", clock.now()));
  recent.note("a", clock.now(), 3, microseconds(500));  // mean 1.1
  EXPECT_TRUE(recent.contended_round_trip("a", clock.now()));
}

TEST(RecentContention, TheLatestRoundTripScalesThePause) {
  test::ManualClock clock;
  RecentContention recent;
  recent.note("a", clock.now(), 3, microseconds(500));
  recent.note("a", clock.now(), 3, microseconds(700));
  EXPECT_EQ(recent.contended_round_trip("a", clock.now()), microseconds(700));
}

TEST(RecentContention, ForgetsAfterItsMemorySpan) {
  test::ManualClock clock;
  RecentContention recent;
  recent.note("a", clock.now(), 3, microseconds(500));
  clock.advance(RecentContention::kContentionMemory - milliseconds(1));
  EXPECT_TRUE(recent.contended_round_trip("a", clock.now()));
  clock.advance(milliseconds(1));
  EXPECT_FALSE(recent.contended_round_trip("a", clock.now()));
}

TEST(RecentContention, AfterItsMemorySpanTheMeanStartsAfresh) {
  test::ManualClock clock;
  RecentContention recent;
  recent.note("a", clock.now(), 50, microseconds(500));
  clock.advance(RecentContention::kContentionMemory);
  recent.note("a", clock.now(), 0, microseconds(500));
  EXPECT_FALSE(recent.contended_round_trip("a", clock.now()));
}

TEST(RecentContention, StaysBoundedDroppingExpiredEntriesFirst) {
  test::ManualClock clock;
  RecentContention recent;
  recent.note("old", clock.now(), 3, microseconds(500));
  clock.advance(RecentContention::kContentionMemory);
  for (std::size_t i = 1; i < RecentContention::kMaxRemembered; ++i) {
    recent.note("r" + std::to_string(i), clock.now(), 3, microseconds(500));
  }
  ASSERT_EQ(recent.size(), RecentContention::kMaxRemembered);
  recent.note("new", clock.now(), 3, microseconds(500));
  EXPECT_EQ(recent.size(), RecentContention::kMaxRemembered);
  EXPECT_TRUE(recent.contended_round_trip("new", clock.now()));
  EXPECT_TRUE(recent.contended_round_trip("r1", clock.now()));
}

TEST(RecentContention, WhenNothingExpiredDropsTheOldest) {
  test::ManualClock clock;
  RecentContention recent;
  for (std::size_t i = 0; i < RecentContention::kMaxRemembered; ++i) {
    recent.note("r" + std::to_string(i), clock.now(), 3, microseconds(500));
    clock.advance(microseconds(1));
  }
  recent.note("new", clock.now(), 3, microseconds(500));
  EXPECT_EQ(recent.size(), RecentContention::kMaxRemembered);
  EXPECT_FALSE(recent.contended_round_trip("r0", clock.now()));
  EXPECT_TRUE(recent.contended_round_trip("r1", clock.now()));
  EXPECT_TRUE(recent.contended_round_trip("new", clock.now()));
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
