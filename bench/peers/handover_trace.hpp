// What the library's acquires do between attempts, seen from outside the
// library: the traced build of the peer driver (redlock_peer_driver_traced,
// bench/CMakeLists.txt) links handover_trace.cpp, which wraps five of the
// library's internal functions with the linker's --wrap (the calls from
// one object file into another: lib/ is not changed):
//
//   next_retry_delay    called once per failed attempt that may retry;
//   split_retry_pause   once per failed attempt that was a split vote (some
//                       grants, a rival holding other nodes, no majority);
//   courtesy_pause      once per acquire that starts on a resource its
//                       client finds contended; > 0: a courtesy pause;
//   TimerQueue::schedule_after
//                       the pause those three decided is armed: that timer
//                       is tagged, and when it fires its kind is recorded;
//   TimerQueue::cancel  a tagged pause cancelled before it fired: a release
//                       was published and woke the waiter (AcquireOperation::
//                       wake, the only canceller of a pause in the contended
//                       case, where no acquire is cancelled or aborted).
//
// The plain driver links handover_trace_off.cpp: enabled() is false and
// nothing is counted. Loop thread only (the contended case runs every
// client on one loop).
#pragma once

#include <cstdint>
#include <vector>

namespace redlock::bench::peers::trace {

// What started an attempt other than an acquire's immediate first one.
enum class Trigger : std::uint8_t {
  courtesy,     // the first attempt, after a courtesy pause
  retry_timer,  // a retry whose pause (next_retry_delay) ran out
  split_timer,  // a retry whose split-vote pause ran out
  wake,         // a retry woken by a release, its pause cut short
};

struct Event {
  std::int64_t at_ns = 0;  // BootClock (the library's clock), ns
  Trigger trigger = Trigger::retry_timer;
  bool split_pause = false;  // wake: the pause cut short was a split one
};

struct Counters {
  std::uint64_t failed_attempts = 0;  // next_retry_delay calls
  std::uint64_t split_votes = 0;      // split_retry_pause calls
  std::uint64_t courtesy_checks = 0;  // courtesy_pause calls
  std::uint64_t courtesy_pauses = 0;  // ... that returned a pause
  std::int64_t courtesy_us = 0;       // their sum
  std::uint64_t retry_timers = 0;     // pauses that ran out, by kind
  std::uint64_t split_timers = 0;
  std::uint64_t courtesy_timers = 0;
  std::uint64_t wakes = 0;  // pauses cut short by a release
  std::uint64_t wakes_in_split_pause = 0;
  std::int64_t retry_pause_us = 0;  // the pauses armed after failed attempts
};

[[nodiscard]] bool enabled() noexcept;
// Forgets what was counted and recorded so far (the timed window opens).
void reset();
[[nodiscard]] Counters counters();
// Every tagged pause that ended (fired or woken), in time order.
[[nodiscard]] std::vector<Event> events();

}  // namespace redlock::bench::peers::trace
