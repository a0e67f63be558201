#include "guard_state.hpp"

#include <algorithm>
#include <chrono>

#include "extend_operation.hpp"
#include "launch.hpp"

namespace redlock::detail {

namespace {
// After a failed renewal (nodes unreachable, timeouts) try again soon, but
// not in a tight loop.
constexpr Milliseconds kMinRetryPause{10};
}  // namespace

GuardState::GuardState(ClientCore& core, Lock lock, const GuardOptions& options)
    : Operation(core),
      renew_interval_(options.renew_interval.value_or(lock.ttl / 3)),
      max_hold_(options.max_hold),
      max_renewals_(options.max_renewals),
      on_lost_(options.on_lost),
      lock_(std::move(lock)),
      valid_until_(lock_.valid_until.time_since_epoch().count()) {
  if (renew_interval_.count() <= 0) renew_interval_ = Milliseconds(1);
}

void GuardState::start() {
  arm_deadline();
  const TimePoint next = lock_.started + renew_interval_;
  if (!may_renew_again(next)) {
    capped_ = true;
    return;
  }
  const TimePoint now = core_.clock().now();
  schedule_renewal(next > now ? std::chrono::ceil<Microseconds>(next - now) : Microseconds(0));
}

bool GuardState::may_renew_again(TimePoint next_renewal) const {
  if (max_renewals_ && renewals_.load() >= *max_renewals_) return false;
  if (max_hold_ && next_renewal - lock_.started >= *max_hold_) return false;
  return true;
}

void GuardState::schedule_renewal(Microseconds delay) {
  auto self = std::static_pointer_cast<GuardState>(shared_from_this());
  renew_timer_ = core_.timers().schedule_after(delay, [self] {
    self->renew_timer_ = TimerQueue::kNone;
    self->renew();
  });
}

void GuardState::renew() {
  if (stopped_) return;
  Lock current = snapshot();
  auto self = std::static_pointer_cast<GuardState>(shared_from_this());
  launch<ExtendOperation>(core_, current, ExtendOptions{},
                          [self](ExtendResult result) { self->on_renewed(std::move(result)); });
}

void GuardState::on_renewed(ExtendResult result) {
  if (stopped_) return;
  if (result.ok()) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      lock_ = *result.lock;
    }
    valid_until_.store(result.lock->valid_until.time_since_epoch().count());
    renewals_.fetch_add(1);
    core_.metrics().renewals_ok.fetch_add(1, std::memory_order_relaxed);
    last_renewal_error_.clear();
    arm_deadline();
    const TimePoint next = core_.clock().now() + renew_interval_;
    if (may_renew_again(next)) {
      schedule_renewal(renew_interval_);
    } else {
      capped_ = true;
    }
    return;
  }
  core_.metrics().renewals_failed.fetch_add(1, std::memory_order_relaxed);
  if (result.error == errc::lost) {
    // A majority refused: the key is gone or someone else's there. Waiting
    // for the deadline would only hide that.
    declare_lost(result.error);
    return;
  }
  if (result.error == errc::shutting_down || result.error == errc::cancelled) {
    declare_lost(make_error_code(errc::shutting_down));
    return;
  }
  // Too few answers: the lock may still be valid. Try again before the
  // deadline; the deadline timer declares the loss if nothing succeeds.
  last_renewal_error_ = result.error;
  const TimePoint now = core_.clock().now();
  const auto left = std::chrono::floor<Microseconds>(valid_until() - now);
  const Microseconds pause =
      std::max<Microseconds>(kMinRetryPause, std::min<Microseconds>(renew_interval_ / 4, left / 2));
  schedule_renewal(pause);
}

void GuardState::arm_deadline() {
  core_.timers().cancel(deadline_timer_);
  const TimePoint now = core_.clock().now();
  const TimePoint deadline = valid_until();
  const Microseconds wait =
      deadline > now ? std::chrono::ceil<Microseconds>(deadline - now) : Microseconds(0);
  auto self = std::static_pointer_cast<GuardState>(shared_from_this());
  deadline_timer_ = core_.timers().schedule_after(wait, [self] {
    self->deadline_timer_ = TimerQueue::kNone;
    self->on_deadline();
  });
}

void GuardState::on_deadline() {
  if (stopped_) return;
  if (core_.clock().now() < valid_until()) {
    arm_deadline();  // renewed meanwhile
    return;
  }
  if (capped_) {
    declare_lost(make_error_code(errc::hold_limit));
  } else {
    declare_lost(last_renewal_error_ ? last_renewal_error_ : make_error_code(errc::lost));
  }
}

void GuardState::declare_lost(std::error_code why) {
  if (stopped_) return;
  stopped_ = true;
  core_.timers().cancel(renew_timer_);
  core_.timers().cancel(deadline_timer_);
  renew_timer_ = deadline_timer_ = TimerQueue::kNone;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    error_ = why;
  }
  lost_.store(true);
  Metrics& metrics = core_.metrics();
  metrics.locks_lost.fetch_add(1, std::memory_order_relaxed);
  metrics.hold_time.observe(elapsed_between(lock_.started, core_.clock().now()));
  auto keep = shared_from_this();
  core_.finished(this);
  stop_source_.request_stop();
  deliver(on_lost_, why);
}

Lock GuardState::stop() {
  if (!stopped_) {
    stopped_ = true;
    core_.timers().cancel(renew_timer_);
    core_.timers().cancel(deadline_timer_);
    renew_timer_ = deadline_timer_ = TimerQueue::kNone;
    core_.metrics().hold_time.observe(elapsed_between(lock_.started, core_.clock().now()));
    auto keep = shared_from_this();
    core_.finished(this);
  }
  std::lock_guard<std::mutex> guard(mutex_);
  return lock_;
}

TimePoint GuardState::valid_until() const noexcept {
  return TimePoint(SteadyClock::duration(valid_until_.load()));
}

Lock GuardState::snapshot() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return lock_;
}

std::error_code GuardState::error() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return error_;
}

}  // namespace redlock::detail
