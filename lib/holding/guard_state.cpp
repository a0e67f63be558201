#include "holding/guard_state.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <new>
#include <string>
#include <thread>

#include "kinds/kind.hpp"
#include "operations/extend_operation.hpp"
#include "operations/slot_parts.hpp"
#include "protocol/validity.hpp"
#include "redlock/clock.hpp"

namespace redlock::detail {

namespace {
// After a failed renewal (nodes unreachable, timeouts) try again soon, but
// not in a tight loop.
constexpr Milliseconds kMinRetryPause{10};
// The grid is at most this fraction of the renewal interval.
constexpr std::uint64_t kGridDivisor = 16;

// Holds a GuardState's stop_lock_ for a few instructions.
class StopLock {
 public:
  explicit StopLock(std::atomic_flag& flag) noexcept : flag_(flag) {
    while (flag_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  }
  StopLock(const StopLock&) = delete;
  StopLock& operator=(const StopLock&) = delete;
  ~StopLock() { flag_.clear(std::memory_order_release); }

 private:
  std::atomic_flag& flag_;
};

PreparedCalls renewal_request(const ClientCore& core, const Lock& lock) {
  return PreparedCalls(extend_calls(core, lock, lock.ttl));
}
}  // namespace

Microseconds renewal_grid(Milliseconds interval) noexcept {
  const auto fraction = Microseconds(interval).count() / static_cast<std::int64_t>(kGridDivisor);
  if (fraction <= 0) return Microseconds(0);
  return Microseconds(std::bit_floor(static_cast<std::uint64_t>(fraction)));
}

TimePoint renewal_due(TimePoint planned, Microseconds grid) noexcept {
  if (grid.count() <= 0) return planned;
  const auto since_epoch = planned.time_since_epoch();
  const auto step = std::chrono::duration_cast<SteadyClock::duration>(grid);
  auto remainder = since_epoch % step;
  if (remainder.count() < 0) remainder += step;
  return planned - remainder;
}

GuardState::GuardState(ClientCore& core, Lock lock, const GuardOptions& options,
                       AcquireRecord acquired)
    : Operation(core),
      clock_is_steady_(&core.clock() == &steady_clock_source()),
      valid_until_(lock.valid_until.time_since_epoch().count()),
      renew_interval_(std::max(options.renew_interval.value_or(lock.ttl / 3), Milliseconds(1))),
      renewal_request_(renewal_request(core, lock)),
      ttl_(lock.ttl),
      lock_(std::move(lock)),
      acquired_(std::move(acquired)) {
  const std::error_code refusal = extend_request_refusal(lock_.unpack(), ttl_, core.config().lock);
  if (refusal || options.max_hold || options.max_renewals || options.on_lost ||
      options.at_risk_share) {
    extras_ = std::make_unique<Extras>(Extras{refusal,
                                              options.max_hold,
                                              options.max_renewals,
                                              options.on_lost,
                                              {},
                                              {},
                                              options.at_risk_share,
                                              options.on_at_risk,
                                              std::stop_source(std::nostopstate)});
  }
  // Only a guard that asks to be told of its loss pays for the per-node
  // outcomes of its renewals (loss_nodes): a client may hold very many.
  if (options.on_lost) round_.keep_outcomes();
}

void GuardState::start() {
  arm_deadline(core_.clock().now());
  const TimePoint due = renewal_due(lock_.started() + renew_interval_, grid());
  if (!may_renew_again(due)) {
    capped_ = true;
    return;
  }
  schedule_renewal(due);
}

bool GuardState::may_renew_again(TimePoint next_renewal) const {
  if (!extras_) return true;
  if (extras_->max_renewals && renewals_.load() >= *extras_->max_renewals) return false;
  if (extras_->max_hold && next_renewal - lock_.started() >= *extras_->max_hold) return false;
  return true;
}

TimerQueue::Id GuardState::schedule_at(TimePoint when, std::function<void()> fn) {
  if (clock_is_steady_) return core_.timers().schedule_at(when, std::move(fn));
  const TimePoint now = core_.clock().now();
  const Microseconds delay =
      when > now ? std::chrono::ceil<Microseconds>(when - now) : Microseconds(0);
  return core_.timers().schedule_after(delay, std::move(fn));
}

TimePoint GuardState::timer_now() const noexcept {
  return clock_is_steady_ ? core_.timers().run_time() : core_.clock().now();
}

void GuardState::schedule_renewal(TimePoint due) {
  renewal_due_ = due;
  renewal_pending_ = true;
  rearm();
}

void GuardState::rearm(TimePoint fired_for) {
  if (in_timer_ || stopped_) return;
  TimePoint want = deadline_armed_for_;
  if (renewal_pending_) {
    want = std::min(want, renewal_due_);
  } else if (round_.is_open()) {
    // Where on_renewed will want it if the round succeeds (unless the round
    // outlasts an interval): no cancel and re-add per renewal. If the timer
    // fires for it with the round still open, nothing is due, and it moves
    // on to the deadline check.
    const TimePoint next = renewal_due(renewal_due_ + renew_interval_, grid());
    if (next > fired_for) want = std::min(want, next);
  }
  if (timer_ != TimerQueue::kNone && timer_at_ == want) return;
  core_.timers().cancel(timer_);
  timer_ = TimerQueue::kNone;
  timer_at_ = want;
  if (want == TimePoint::max()) return;
  timer_ = schedule_at(want, [this] {
    timer_ = TimerQueue::kNone;
    on_timer();
  });
}

void GuardState::on_timer() {
  // A loss (below) lets the core go of this state: it must outlive this call.
  const std::shared_ptr<Operation> self = shared_from_this();
  const TimePoint fired_for = timer_at_;
  timer_at_ = TimePoint::max();
  in_timer_ = true;
  // The deadline first: a renewal due at the same instant is sent only
  // while the lock still holds.
  if (deadline_armed_for_ <= fired_for) {
    deadline_armed_for_ = TimePoint::max();
    on_deadline();
  }
  if (!stopped_ && renewal_pending_ && renewal_due_ <= fired_for) {
    renewal_pending_ = false;
    renew(self);
  }
  in_timer_ = false;
  rearm(fired_for);
}

void GuardState::renew(const std::shared_ptr<Operation>& self) {
  if (stopped_) return;
  if (core_.closing()) {
    on_renewal_failed(make_error_code(errc::shutting_down));
    return;
  }
  if (!core_.config_problem().empty()) {
    on_renewal_failed(make_error_code(errc::config_error));
    return;
  }
  if (extras_ && extras_->request_refusal) {
    on_renewal_failed(extras_->request_refusal);
    return;
  }
  // Validity must count from a moment no later than the first request: the
  // requests leave at the end of this loop turn, after this reading. Within
  // an interval of the deadline (a renewal late or retried), the clock is
  // read afresh, so that the check below is as close to the sending as it
  // can be.
  TimePoint now = timer_now();
  if (valid_until() - now < renew_interval_) now = core_.clock().now();
  // Never extend a lock past its deadline (extend_refusal).
  if (now >= valid_until()) {
    on_renewal_failed(make_error_code(errc::lost));
    return;
  }
  round_.open(core_.config().nodes, now, valid_until(), renewal_request_.parts());
  round_not_held_ = 0;
  last_round_failed_ = false;
  for (auto& node : core_.nodes()) renewal_request_.send(*node, now, self, round_.tag());
}

void GuardState::on_response(std::size_t node, std::uint32_t tag, const NodeResponse& response) {
  if (!round_.counts(tag, response)) return;
  std::size_t not_held = round_not_held_;
  const Decision decision = count_extend_answer(round_, node, response, not_held);
  round_not_held_ = static_cast<std::uint32_t>(not_held);
  if (decision != Decision::pending) decide_renewal();
}

void GuardState::decide_renewal() {
  const TimePoint now = core_.clock().now();
  // Against the deadline as it stood when the round began (round_.open).
  const RoundTiming timing = round_.close(now);
  const ExtendVerdict verdict =
      extend_verdict(round_.votes(), round_not_held_, ttl_, timing, core_.drift_for(ttl_),
                     core_.config().lock.min_validity);
  if (verdict.error) {
    last_round_failed_ = true;
    on_renewal_failed(verdict.error);
  } else {
    // Validity counts from the renewal's own start, not from the acquisition.
    on_renewed(timing.started + verdict.validity, now);
  }
}

void GuardState::on_renewed(TimePoint valid_until, TimePoint now) {
  // This thread is the only writer: plain stores, no locked instructions.
  valid_until_.store(valid_until.time_since_epoch().count(), std::memory_order_release);
  renewals_.store(renewals_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  core_.metrics().renewals_ok.fetch_add(1, std::memory_order_relaxed);
  last_renewal_error_.clear();
  if (at_risk_.load(std::memory_order_relaxed)) end_at_risk();
  // A later deadline leaves the timer as it is (on_deadline moves it on); an
  // earlier one, possible when this round took longer, re-arms it now.
  if (valid_until < deadline_armed_for_) arm_deadline(now);
  // At a fixed rate: one interval after this renewal was due, not after
  // this round ended. The renewals of many guards then stay in the loop
  // turns they first fell due in, instead of drifting together into ever
  // larger batches. A round slower than that waits an interval from now.
  TimePoint next = renewal_due(renewal_due_ + renew_interval_, grid());
  if (next <= now) next = renewal_due(now + renew_interval_, grid());
  if (!may_renew_again(next)) {
    capped_ = true;
    return;
  }
  schedule_renewal(next);
}

void GuardState::on_renewal_failed(std::error_code error) {
  core_.metrics().renewals_failed.fetch_add(1, std::memory_order_relaxed);
  if (error == errc::lost) {
    // A majority refused (the key is gone or someone else's there), or the
    // deadline passed before the round could start. Waiting for the deadline
    // would only hide that.
    declare_lost(error);
    return;
  }
  if (error == errc::shutting_down || error == errc::cancelled) {
    declare_lost(make_error_code(errc::shutting_down));
    return;
  }
  // Too few answers: the lock may still be valid. Try again before the
  // deadline; the deadline check declares the loss if nothing succeeds.
  last_renewal_error_ = error;
  const TimePoint now = core_.clock().now();
  const auto left = std::chrono::floor<Microseconds>(valid_until() - now);
  const Microseconds pause =
      std::max<Microseconds>(kMinRetryPause, std::min<Microseconds>(renew_interval_ / 4, left / 2));
  schedule_renewal(now + pause);
}

void GuardState::arm_deadline(TimePoint now) {
  const TimePoint deadline = valid_until();
  // Short of the deadline, the check comes at the last grid instant before
  // it, with the deadline checks of other guards; a renewal has usually
  // moved the deadline on by then. Once that instant has passed, it comes
  // at the deadline itself.
  TimePoint check = renewal_due(deadline, grid());
  if (check <= now) check = deadline;
  // Before it, the instant an at-risk episode would begin.
  const TimePoint risk = at_risk_from();
  if (risk > now && risk < check) check = risk;
  deadline_armed_for_ = check;
  rearm();
}

void GuardState::on_deadline() {
  if (stopped_) return;
  const TimePoint now = timer_now();
  if (now >= at_risk_from()) begin_at_risk();
  if (now < valid_until()) {
    arm_deadline(now);  // renewed meanwhile, or not yet the deadline
    return;
  }
  if (capped_) {
    declare_lost(make_error_code(errc::hold_limit));
  } else {
    declare_lost(last_renewal_error_ ? last_renewal_error_ : make_error_code(errc::lost));
  }
}

void GuardState::stop_timers() noexcept {
  core_.timers().cancel(timer_);
  timer_ = TimerQueue::kNone;
  timer_at_ = TimePoint::max();
  renewal_pending_ = false;
  deadline_armed_for_ = TimePoint::max();
  if (round_.is_open()) (void)round_.close(TimePoint{});
}

void GuardState::declare_lost(std::error_code why) {
  if (stopped_) return;
  // The last renewal round's answers, when that round is why (or, still
  // open at the deadline, what had come of it): before stop_timers closes it.
  const bool round_says_why = last_round_failed_ || round_.is_open();
  if (extras_ && extras_->on_lost && round_says_why && why != errc::shutting_down &&
      why != errc::hold_limit) {
    try {
      extras_->loss_nodes = round_.outcomes();
    } catch (const std::bad_alloc&) {
      // No memory for the record: the loss is signalled all the same,
      // without it. Nothing may escape into the loop's callback.
      extras_->loss_nodes.clear();
    }
  }
  stopped_ = true;
  stop_timers();
  error_ = why;
  // The episode, if any, ends with the loss; its token (or the next one's)
  // is requested, as the loss token is.
  at_risk_.store(false, std::memory_order_relaxed);
  lost_.store(true, std::memory_order_release);
  Metrics& metrics = core_.metrics();
  metrics.locks_lost.fetch_add(1, std::memory_order_relaxed);
  metrics.hold_time.observe(elapsed_between(lock_.started(), core_.clock().now()));
  auto keep = shared_from_this();
  core_.finished(this);
  std::stop_source stop;
  {
    StopLock locked(stop_lock_);
    stop = stop_source_;  // empty when nobody asked for a token yet
  }
  stop.request_stop();
  if (extras_ && extras_->at_risk_share) {
    std::stop_source risk;
    {
      StopLock locked(stop_lock_);
      risk = extras_->at_risk_source;
    }
    risk.request_stop();
  }
  if (extras_) {
    deliver(extras_->on_lost, why);
    for (auto& more : extras_->more_on_lost) deliver(more, why);
    extras_->more_on_lost.clear();
  }
}

void GuardState::also_on_lost(std::function<void(std::error_code)> on_lost) {
  if (!on_lost) return;
  if (lost_.load()) {
    deliver(on_lost, error());
    return;
  }
  if (!extras_) extras_ = std::make_unique<Extras>();
  extras_->more_on_lost.push_back(std::move(on_lost));
}

Lock GuardState::stop() {
  if (!stopped_) {
    stopped_ = true;
    stop_timers();
    core_.metrics().hold_time.observe(elapsed_between(lock_.started(), core_.clock().now()));
    auto keep = shared_from_this();
    core_.finished(this);
  }
  return snapshot();
}

TimePoint GuardState::valid_until() const noexcept {
  return TimePoint(SteadyClock::duration(valid_until_.load()));
}

Lock GuardState::snapshot() const {
  Lock lock = lock_.unpack();
  lock.valid_until = valid_until();
  return lock;
}

AcquireResult GuardState::acquired() const { return acquired_.unpack(lock_.unpack()); }

std::stop_token GuardState::stop_token() const noexcept {
  StopLock locked(stop_lock_);
  if (!stop_source_.stop_possible()) {
    stop_source_ = std::stop_source();
    // Lost before anyone asked: declare_lost found no source to request.
    if (lost_.load(std::memory_order_acquire)) stop_source_.request_stop();
  }
  return stop_source_.get_token();
}

TimePoint GuardState::at_risk_from() const noexcept {
  if (!extras_ || !extras_->at_risk_share || at_risk_.load(std::memory_order_relaxed)) {
    return TimePoint::max();
  }
  const auto margin =
      std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double, std::milli>(
          *extras_->at_risk_share * static_cast<double>(ttl_.count())));
  return valid_until() - margin;
}

void GuardState::begin_at_risk() {
  if (stopped_ || !extras_ || !extras_->at_risk_share || at_risk_.load()) return;
  at_risk_.store(true, std::memory_order_release);
  core_.metrics().at_risk.fetch_add(1, std::memory_order_relaxed);
  std::stop_source risk;
  {
    StopLock locked(stop_lock_);
    if (!extras_->at_risk_source.stop_possible()) extras_->at_risk_source = std::stop_source();
    risk = extras_->at_risk_source;
  }
  risk.request_stop();
  tell_at_risk(true);
}

void GuardState::tell_at_risk(bool at_risk) noexcept {
  if (!extras_ || !extras_->on_at_risk) return;
  // Once per beginning and end; the callback stays for the next episode.
  // Nothing may escape into the loop's callback.
  try {
    extras_->on_at_risk(at_risk);
  } catch (...) {  // NOLINT(bugprone-empty-catch): a user callback's throw is dropped
  }
}

void GuardState::end_at_risk() {
  at_risk_.store(false, std::memory_order_release);
  // The next episode gets a token of its own; one taken during this one
  // stays requested.
  {
    StopLock locked(stop_lock_);
    if (extras_) extras_->at_risk_source = std::stop_source(std::nostopstate);
  }
  tell_at_risk(false);
}

std::stop_token GuardState::at_risk_token() const {
  if (!extras_ || !extras_->at_risk_share) return {};
  StopLock locked(stop_lock_);
  if (!extras_->at_risk_source.stop_possible()) {
    extras_->at_risk_source = std::stop_source();
    if (at_risk_.load(std::memory_order_acquire) || lost_.load(std::memory_order_acquire)) {
      extras_->at_risk_source.request_stop();
    }
  }
  return extras_->at_risk_source.get_token();
}

std::vector<NodeOutcome> GuardState::loss_nodes() const {
  // Written on the loop before lost_ is set (release), never after.
  if (!lost_.load(std::memory_order_acquire) || !extras_) return {};
  return extras_->loss_nodes;
}

std::error_code GuardState::error() const {
  if (!lost_.load(std::memory_order_acquire)) return {};
  return error_;
}

}  // namespace redlock::detail
