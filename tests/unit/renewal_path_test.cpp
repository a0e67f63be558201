// The pure pieces a renewal goes through: the timer schedule under the
// client's timer queue, the request FIFO of a node connection, the rules of
// an extend round, and the grid renewals fall due on.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "holding/guard_state.hpp"
#include "operations/extend_operation.hpp"
#include "transport/node_connection.hpp"
#include "transport/timer_queue.hpp"

namespace redlock::detail {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

const TimePoint kT0 = TimePoint(std::chrono::seconds(1000));

// Takes and runs every timer due at `now`; returns how many ran.
int run_due(TimerSchedule& schedule, TimePoint now) {
  int ran = 0;
  std::function<void()> fn;
  while (schedule.take_due(now, fn)) {
    fn();
    ++ran;
  }
  return ran;
}

TEST(TimerSchedule, RunsInDueOrderWithTiesInTheOrderAdded) {
  TimerSchedule schedule;
  std::string order;
  schedule.add(kT0 + milliseconds(30), [&] { order += 'c'; });
  schedule.add(kT0 + milliseconds(10), [&] { order += 'a'; });
  schedule.add(kT0 + milliseconds(20), [&] { order += 'b'; });
  schedule.add(kT0 + milliseconds(10), [&] { order += 'A'; });
  EXPECT_EQ(run_due(schedule, kT0 + milliseconds(30)), 4);
  EXPECT_EQ(order, "aAbc");
  EXPECT_EQ(schedule.size(), 0u);
}

TEST(TimerSchedule, SameInstantTimersRunInTheOrderAddedWhateverCameBetween) {
  TimerSchedule schedule;
  std::vector<int> order;
  for (int i = 0; i < 3; ++i) schedule.add(kT0, [&order, i] { order.push_back(i); });
  // Enough other instants that the next timer for kT0 starts a group of its
  // own.
  for (int ms = 1; ms <= 10; ++ms) schedule.add(kT0 + milliseconds(ms), [] {});
  schedule.add(kT0, [&order] { order.push_back(3); });
  EXPECT_EQ(run_due(schedule, kT0), 4);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(schedule.size(), 10u);
}

TEST(TimerSchedule, NothingRunsBeforeItIsDue) {
  TimerSchedule schedule;
  bool ran = false;
  schedule.add(kT0 + milliseconds(10), [&] { ran = true; });
  EXPECT_EQ(run_due(schedule, kT0 + milliseconds(10) - microseconds(1)), 0);
  EXPECT_FALSE(ran);
  EXPECT_EQ(schedule.next_due(), kT0 + milliseconds(10));
  EXPECT_EQ(run_due(schedule, kT0 + milliseconds(10)), 1);
  EXPECT_TRUE(ran);
  EXPECT_EQ(schedule.next_due(), TimePoint::max());
}

TEST(TimerSchedule, CancelledTimersNeverRunAndCancelTwiceIsHarmless) {
  TimerSchedule schedule;
  std::string order;
  const TimerSchedule::Id first = schedule.add(kT0 + milliseconds(1), [&] { order += 'a'; });
  schedule.add(kT0 + milliseconds(2), [&] { order += 'b'; });
  EXPECT_TRUE(schedule.cancel(first));
  EXPECT_FALSE(schedule.cancel(first));
  EXPECT_FALSE(schedule.cancel(TimerSchedule::kNone));
  EXPECT_EQ(schedule.next_due(), kT0 + milliseconds(2)) << "a cancelled timer is not next";
  EXPECT_EQ(run_due(schedule, kT0 + milliseconds(5)), 1);
  EXPECT_EQ(order, "b");
}

TEST(TimerSchedule, ACallbackCanCancelATimerDueInTheSameRun) {
  TimerSchedule schedule;
  std::string order;
  TimerSchedule::Id third = TimerSchedule::kNone;
  schedule.add(kT0, [&] {
    order += 'a';
    EXPECT_TRUE(schedule.cancel(third));
  });
  schedule.add(kT0, [&] { order += 'b'; });
  third = schedule.add(kT0, [&] { order += 'c'; });
  EXPECT_EQ(run_due(schedule, kT0), 2);
  EXPECT_EQ(order, "ab");
  EXPECT_EQ(schedule.next_due(), TimePoint::max());
}

TEST(TimerSchedule, AnOldIdDoesNotCancelTheTimerThatReusedItsSlot) {
  TimerSchedule schedule;
  const TimerSchedule::Id old_id = schedule.add(kT0, [] {});
  EXPECT_EQ(run_due(schedule, kT0), 1);
  bool ran = false;
  const TimerSchedule::Id new_id = schedule.add(kT0, [&] { ran = true; });
  EXPECT_NE(new_id, old_id);
  EXPECT_FALSE(schedule.cancel(old_id)) << "the timer with this id already ran";
  EXPECT_EQ(run_due(schedule, kT0), 1);
  EXPECT_TRUE(ran);
}

TEST(TimerSchedule, StaysInOrderThroughManyCancels) {
  TimerSchedule schedule;
  std::vector<int> ran;
  std::vector<TimerSchedule::Id> ids;
  // Added in a scrambled order; every timer but each tenth is cancelled,
  // enough for the stale entries to be swept more than once.
  for (int i = 0; i < 1000; ++i) {
    const int due_ms = (i * 7919) % 1000;
    ids.push_back(
        schedule.add(kT0 + milliseconds(due_ms), [&ran, due_ms] { ran.push_back(due_ms); }));
  }
  for (int i = 0; i < 1000; ++i) {
    if ((i * 7919) % 1000 % 10 != 0) {
      EXPECT_TRUE(schedule.cancel(ids[static_cast<std::size_t>(i)]));
    }
  }
  EXPECT_EQ(schedule.size(), 100u);
  EXPECT_EQ(run_due(schedule, kT0 + milliseconds(1000)), 100);
  ASSERT_EQ(ran.size(), 100u);
  for (std::size_t i = 0; i < ran.size(); ++i) EXPECT_EQ(ran[i], static_cast<int>(10 * i));
}

TEST(Fifo, KeepsOrderAcrossTakesPushesAndCompaction) {
  Fifo<int> fifo;
  int next_in = 0;
  int next_out = 0;
  // Never empties, so the taken elements are dropped by compaction.
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 7; ++i) fifo.push_back(next_in++);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(fifo.take_front(), next_out++);
  }
  EXPECT_EQ(fifo.size(), static_cast<std::size_t>(next_in - next_out));
  for (std::size_t i = 0; i < fifo.size(); ++i) {
    EXPECT_EQ(fifo[i], next_out + static_cast<int>(i));
  }
  int expected = next_out;
  for (int value : fifo) EXPECT_EQ(value, expected++);
  while (!fifo.empty()) EXPECT_EQ(fifo.take_front(), next_out++);
  EXPECT_EQ(next_out, next_in);
}

TEST(Fifo, PushFrontGoesBeforeEverythingQueued) {
  Fifo<int> fifo;
  fifo.push_back(2);
  fifo.push_back(3);
  fifo.push_front(1);  // nothing taken yet: inserted in front
  EXPECT_EQ(fifo.take_front(), 1);
  fifo.push_front(0);  // reuses the taken place
  EXPECT_EQ(fifo.front(), 0);
  std::vector<int> rest;
  while (!fifo.empty()) rest.push_back(fifo.take_front());
  EXPECT_EQ(rest, (std::vector<int>{0, 2, 3}));
}

Lock held_lock(Milliseconds ttl, TimePoint valid_until) {
  return Lock{Resource("r"), LockValue("v"), ttl, kT0, valid_until, std::nullopt};
}

TEST(ExtendRefusal, AnExpiredLockIsLostAndNeverSent) {
  const LockConfig config;
  const Lock lock = held_lock(milliseconds(10000), kT0 + milliseconds(500));
  EXPECT_FALSE(extend_refusal(lock, milliseconds(10000), config, kT0 + milliseconds(499)));
  EXPECT_EQ(extend_refusal(lock, milliseconds(10000), config, kT0 + milliseconds(500)), errc::lost);
}

TEST(ExtendRefusal, BadRequestsAndTtlsBeyondTheAmnesiaBoundAreInvalid) {
  LockConfig config;
  config.ttl = milliseconds(2000);  // max_ttl 0: the bound is ttl
  const Lock lock = held_lock(milliseconds(2000), kT0 + milliseconds(1000));
  EXPECT_EQ(extend_refusal(lock, milliseconds(0), config, kT0), errc::invalid_argument);
  EXPECT_EQ(extend_refusal(lock, milliseconds(2001), config, kT0), errc::invalid_argument);
  Lock no_value = lock;
  no_value.value = LockValue("");
  EXPECT_EQ(extend_refusal(no_value, milliseconds(2000), config, kT0), errc::invalid_argument);
  config.amnesia_defence = false;
  EXPECT_FALSE(extend_refusal(lock, milliseconds(2001), config, kT0));
}

QuorumTally votes(std::size_t nodes, std::size_t yes, std::size_t no) {
  QuorumTally tally(nodes);
  for (std::size_t i = 0; i < yes; ++i) tally.yes();
  for (std::size_t i = 0; i < no; ++i) tally.no();
  return tally;
}

// A round that started at kT0 and was decided `elapsed` later, on a lock
// whose deadline was still far off.
RoundTiming timing(microseconds elapsed) {
  return RoundTiming{kT0, kT0 + elapsed, kT0 + std::chrono::seconds(60)};
}

TEST(ExtendVerdict, AMajorityWithValidityLeftSucceeds) {
  const ExtendVerdict verdict =
      extend_verdict(votes(5, 3, 0), 0, milliseconds(3000), timing(microseconds(5000)),
                     milliseconds(32), milliseconds(0));
  EXPECT_FALSE(verdict.error);
  EXPECT_EQ(verdict.validity, microseconds(3'000'000 - 5'000 - 32'000));
}

TEST(ExtendVerdict, TooLittleValidityLeftIsRefused) {
  const ExtendVerdict verdict = extend_verdict(votes(5, 3, 0), 0, milliseconds(100),
                                               timing(microseconds(60'000)), milliseconds(3),
                                               milliseconds(40));  // 37 ms left, 40 required
  EXPECT_EQ(verdict.error, errc::validity_too_short);
}

TEST(ExtendVerdict, RefusalsAndSilenceAreToldApart) {
  // Three "not held" alone make a majority impossible: the lock is lost.
  EXPECT_EQ(extend_verdict(votes(5, 0, 3), 3, milliseconds(3000), timing(microseconds(0)),
                           milliseconds(32), milliseconds(0))
                .error,
            errc::lost);
  // Two refusals and a timeout: nobody can tell; no quorum.
  EXPECT_EQ(extend_verdict(votes(5, 0, 3), 2, milliseconds(3000), timing(microseconds(0)),
                           milliseconds(32), milliseconds(0))
                .error,
            errc::no_quorum);
  // Not decided yet: never a success.
  EXPECT_EQ(extend_verdict(votes(5, 2, 2), 0, milliseconds(3000), timing(microseconds(0)),
                           milliseconds(32), milliseconds(0))
                .error,
            errc::no_quorum);
}

TEST(ExtendVerdict, ADecisionAtOrAfterTheOldDeadlineIsALoss) {
  // Sent 40 ms before the deadline, decided 2 ms after it: a majority said
  // yes and the new validity would be long, but the lock had lapsed.
  const TimePoint deadline = kT0 + milliseconds(40);
  const RoundTiming late{kT0, deadline + milliseconds(2), deadline};
  EXPECT_EQ(
      extend_verdict(votes(3, 2, 0), 0, milliseconds(200), late, milliseconds(4), milliseconds(0))
          .error,
      errc::lost);
  // Exactly at the deadline counts as after it.
  const RoundTiming at{kT0, deadline, deadline};
  EXPECT_EQ(
      extend_verdict(votes(3, 2, 0), 0, milliseconds(200), at, milliseconds(4), milliseconds(0))
          .error,
      errc::lost);
  // A microsecond before it, the same votes extend.
  const RoundTiming in_time{kT0, deadline - microseconds(1), deadline};
  const ExtendVerdict renewed = extend_verdict(votes(3, 2, 0), 0, milliseconds(200), in_time,
                                               milliseconds(4), milliseconds(0));
  EXPECT_FALSE(renewed.error);
  EXPECT_EQ(renewed.validity, microseconds(200'000 - 39'999 - 4'000));
}

TEST(RenewalGrid, IsAPowerOfTwoNoLargerThanASixteenthOfTheInterval) {
  EXPECT_EQ(renewal_grid(milliseconds(1000)), microseconds(32768));
  EXPECT_EQ(renewal_grid(milliseconds(100)), microseconds(4096));
  EXPECT_EQ(renewal_grid(milliseconds(1)), microseconds(32));
  EXPECT_EQ(renewal_grid(milliseconds(0)), microseconds(0));
}

TEST(RenewalGrid, RenewalsComeEarlyByLessThanOneGridStepAndShareGridInstants) {
  const Microseconds grid = renewal_grid(milliseconds(1000));
  const auto step = std::chrono::duration_cast<SteadyClock::duration>(grid);
  for (int offset_us = 0; offset_us < 200'000; offset_us += 997) {
    const TimePoint planned = kT0 + microseconds(offset_us);
    const TimePoint due = renewal_due(planned, grid);
    EXPECT_LE(due, planned);
    EXPECT_LT(planned - due, step);
    EXPECT_EQ(due.time_since_epoch() % step, SteadyClock::duration(0));
    EXPECT_EQ(renewal_due(due, grid), due) << "a grid instant is its own due time";
  }
  EXPECT_EQ(renewal_due(kT0 + microseconds(123), Microseconds(0)), kT0 + microseconds(123));
}

TEST(RenewalGrid, GuardsOnDifferentGridInstantsStayApartAtAFixedRate) {
  // A guard renews one interval after its last due time, put on the grid:
  // two guards one grid step apart never fall due together.
  const Milliseconds interval(1000);
  const Microseconds grid = renewal_grid(interval);
  TimePoint first = renewal_due(kT0, grid);
  TimePoint second = first + grid;
  for (int renewal = 0; renewal < 100; ++renewal) {
    first = renewal_due(first + interval, grid);
    second = renewal_due(second + interval, grid);
    ASSERT_EQ(second - first, std::chrono::duration_cast<SteadyClock::duration>(grid));
  }
}

}  // namespace
}  // namespace redlock::detail
