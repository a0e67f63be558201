// The traced peer driver's wraps (handover_trace.hpp). Each __wrap_X is what
// the linker's --wrap=X makes the library's other object files call instead
// of X; __real_X is X itself. The names are the Itanium manglings of the
// functions in lib/protocol/retry_policy.hpp and lib/transport/timer_queue.hpp:
// a changed signature there makes this build fail to link, never miscount.
// The parameters are declared with the functions' own types, so the calls
// pass them as the library's callers do (a std::function by value goes by
// the address of the caller's temporary in either case).
#include "handover_trace.hpp"

#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "protocol/retry_policy.hpp"
#include "transport/timer_queue.hpp"

namespace redlock::bench::peers::trace {

namespace {

struct State {
  Counters counters;
  std::vector<Event> events;
  // The pause the acquire just decided, until it is armed.
  std::optional<Microseconds> pending_delay;
  Trigger pending_trigger = Trigger::retry_timer;
  // Armed pauses not yet ended, by timer id.
  std::map<detail::TimerQueue::Id, Trigger> armed;
};

State& state() {
  static State instance;
  return instance;
}

std::int64_t now_ns() { return BootClock::now().time_since_epoch().count(); }

}  // namespace

bool enabled() noexcept { return true; }

void reset() {
  State& s = state();
  s.counters = {};
  s.events.clear();
}

Counters counters() { return state().counters; }

std::vector<Event> events() { return state().events; }

}  // namespace redlock::bench::peers::trace

using redlock::Microseconds;
using redlock::TimePoint;
using redlock::detail::RetryPlan;
using redlock::detail::TimerQueue;
namespace trace = redlock::bench::peers::trace;

extern "C" {

// redlock::detail::next_retry_delay(RetryPlan const&, int, TimePoint, double)
std::optional<Microseconds>
__real__ZN7redlock6detail16next_retry_delayERKNS0_9RetryPlanEiNSt6chrono10time_pointINS_9BootClockENS4_8durationIlSt5ratioILl1ELl1000000000EEEEEEd(
    const RetryPlan& plan, int attempts_made, TimePoint now, double uniform01);
std::optional<Microseconds>
__wrap__ZN7redlock6detail16next_retry_delayERKNS0_9RetryPlanEiNSt6chrono10time_pointINS_9BootClockENS4_8durationIlSt5ratioILl1ELl1000000000EEEEEEd(
    const RetryPlan& plan, int attempts_made, TimePoint now, double uniform01) {
  const std::optional<Microseconds> delay =
      __real__ZN7redlock6detail16next_retry_delayERKNS0_9RetryPlanEiNSt6chrono10time_pointINS_9BootClockENS4_8durationIlSt5ratioILl1ELl1000000000EEEEEEd(
          plan, attempts_made, now, uniform01);
  trace::State& s = trace::state();
  ++s.counters.failed_attempts;
  s.pending_delay = delay;
  s.pending_trigger = trace::Trigger::retry_timer;
  return delay;
}

// redlock::detail::split_retry_pause(Microseconds, double); its caller keeps
// the shorter of it and next_retry_delay's pause (AcquireOperation::next_pause).
Microseconds
__real__ZN7redlock6detail17split_retry_pauseENSt6chrono8durationIlSt5ratioILl1ELl1000000EEEEd(
    Microseconds round_trip, double uniform01);
Microseconds
__wrap__ZN7redlock6detail17split_retry_pauseENSt6chrono8durationIlSt5ratioILl1ELl1000000EEEEd(
    Microseconds round_trip, double uniform01) {
  const Microseconds pause =
      __real__ZN7redlock6detail17split_retry_pauseENSt6chrono8durationIlSt5ratioILl1ELl1000000EEEEd(
          round_trip, uniform01);
  trace::State& s = trace::state();
  ++s.counters.split_votes;
  if (s.pending_delay && pause < *s.pending_delay) {
    s.pending_delay = pause;
    s.pending_trigger = trace::Trigger::split_timer;
  }
  return pause;
}

// redlock::detail::courtesy_pause(RetryPlan const&, TimePoint,
// std::optional<Microseconds>, double)
Microseconds
__real__ZN7redlock6detail14courtesy_pauseERKNS0_9RetryPlanENSt6chrono10time_pointINS_9BootClockENS4_8durationIlSt5ratioILl1ELl1000000000EEEEEESt8optionalINS7_IlS8_ILl1ELl1000000EEEEEd(
    const RetryPlan& plan, TimePoint now, std::optional<Microseconds> round_trip, double uniform01);
Microseconds
__wrap__ZN7redlock6detail14courtesy_pauseERKNS0_9RetryPlanENSt6chrono10time_pointINS_9BootClockENS4_8durationIlSt5ratioILl1ELl1000000000EEEEEESt8optionalINS7_IlS8_ILl1ELl1000000EEEEEd(
    const RetryPlan& plan, TimePoint now, std::optional<Microseconds> round_trip,
    double uniform01) {
  const Microseconds pause =
      __real__ZN7redlock6detail14courtesy_pauseERKNS0_9RetryPlanENSt6chrono10time_pointINS_9BootClockENS4_8durationIlSt5ratioILl1ELl1000000000EEEEEESt8optionalINS7_IlS8_ILl1ELl1000000EEEEEd(
          plan, now, round_trip, uniform01);
  trace::State& s = trace::state();
  ++s.counters.courtesy_checks;
  if (pause.count() > 0) {
    ++s.counters.courtesy_pauses;
    s.counters.courtesy_us += pause.count();
    s.pending_delay = pause;
    s.pending_trigger = trace::Trigger::courtesy;
  }
  return pause;
}

// redlock::detail::TimerQueue::schedule_after(Microseconds, std::function<void()>)
TimerQueue::Id
__real__ZN7redlock6detail10TimerQueue14schedule_afterENSt6chrono8durationIlSt5ratioILl1ELl1000000EEEESt8functionIFvvEE(
    TimerQueue* self, Microseconds delay, std::function<void()> fn);
TimerQueue::Id
__wrap__ZN7redlock6detail10TimerQueue14schedule_afterENSt6chrono8durationIlSt5ratioILl1ELl1000000EEEESt8functionIFvvEE(
    TimerQueue* self, Microseconds delay, std::function<void()> fn) {
  trace::State& s = trace::state();
  if (!s.pending_delay || *s.pending_delay != delay) {
    return __real__ZN7redlock6detail10TimerQueue14schedule_afterENSt6chrono8durationIlSt5ratioILl1ELl1000000EEEESt8functionIFvvEE(
        self, delay, std::move(fn));
  }
  const trace::Trigger trigger = s.pending_trigger;
  s.pending_delay.reset();
  if (trigger != trace::Trigger::courtesy) s.counters.retry_pause_us += delay.count();
  auto id = std::make_shared<TimerQueue::Id>(TimerQueue::kNone);
  std::function<void()> tagged = [id, trigger, inner = std::move(fn)] {
    trace::State& state = trace::state();
    state.armed.erase(*id);
    state.events.push_back({trace::now_ns(), trigger, false});
    if (trigger == trace::Trigger::retry_timer) ++state.counters.retry_timers;
    if (trigger == trace::Trigger::split_timer) ++state.counters.split_timers;
    if (trigger == trace::Trigger::courtesy) ++state.counters.courtesy_timers;
    inner();
  };
  *id =
      __real__ZN7redlock6detail10TimerQueue14schedule_afterENSt6chrono8durationIlSt5ratioILl1ELl1000000EEEESt8functionIFvvEE(
          self, delay, std::move(tagged));
  s.armed.emplace(*id, trigger);
  return *id;
}

// redlock::detail::TimerQueue::cancel(Id) noexcept
void __real__ZN7redlock6detail10TimerQueue6cancelEm(TimerQueue* self, TimerQueue::Id id) noexcept;
void __wrap__ZN7redlock6detail10TimerQueue6cancelEm(TimerQueue* self, TimerQueue::Id id) noexcept {
  trace::State& s = trace::state();
  const auto found = s.armed.find(id);
  if (found != s.armed.end()) {
    const bool split = found->second == trace::Trigger::split_timer;
    s.armed.erase(found);
    s.events.push_back({trace::now_ns(), trace::Trigger::wake, split});
    ++s.counters.wakes;
    if (split) ++s.counters.wakes_in_split_pause;
  }
  __real__ZN7redlock6detail10TimerQueue6cancelEm(self, id);
}

}  // extern "C"
