#include "operations/set_turn_operation.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include "kinds/multi.hpp"
#include "operations/acquire_operation.hpp"
#include "operations/extend_operation.hpp"
#include "operations/launch.hpp"
#include "operations/set_fence_operation.hpp"
#include "operations/slot_parts.hpp"
#include "protocol/validity.hpp"
#include "scripts/scripts.hpp"

namespace redlock::detail {

bool SetTurnOperation::applies(const ClientCore& core, const std::vector<Resource>& resources,
                               const AcquireOptions& options) {
  const LockConfig& lock = core.config().lock;
  if (resources.size() < 2 || !valid_resource_set(resources)) return false;
  if (options.shared || options.fair == false) return false;
  return options.retry_count.value_or(options.wait ? -1 : lock.retry_count) != 0;
}

SetTurnOperation::SetTurnOperation(ClientCore& core, std::vector<Resource> resources,
                                   const AcquireOptions& options,
                                   AsyncClient::AcquireCallback callback)
    : Operation(core),
      resources_(std::move(resources)),
      options_(options),
      ttl_(options.ttl.value_or(core.config().lock.ttl)),
      callback_(std::move(callback)) {
  order_.resize(resources_.size());
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  std::sort(order_.begin(), order_.end(), [this](std::size_t a, std::size_t b) {
    return resources_[a].str() < resources_[b].str();
  });
  // The wait: the caller's, or the time its retries could have taken
  // (each a full-jitter pause of 2 × retry_delay at most), as a mutex
  // acquire that turns fair keeps it; none for retries without end.
  const LockConfig& lock = core.config().lock;
  const TimePoint now = core.clock().now();
  const int retries = options.retry_count.value_or(options.wait ? -1 : lock.retry_count);
  if (options.wait) {
    deadline_ = now + *options.wait;
  } else if (retries > 0) {
    const Milliseconds delay = options.retry_delay.value_or(lock.retry_delay);
    deadline_ = now + (retries + 1) * 2 * delay;
  }
}

void SetTurnOperation::start() {
  // A set whose recent acquires waited their turn (its first member's
  // acquire had to wait) starts in line at once: its first attempt would
  // be refused, as a contended fair waiter's is (docs/algorithm.md, "A
  // set's turn").
  const std::string_view first_name = resources_[order_.front()].str();
  const std::string first = release_channel(core_.keys_for(first_name).key_prefix(), first_name);
  if (core_.wakeups().recent_contention().contended_round_trip(first, core_.clock().now())) {
    phase_ = Phase::taking;
    // Never answered from inside the starting call.
    core_.turn().post([self = shared_from_this(), this] { take_next(); });
    return;
  }
  AcquireOptions once = options_;
  once.retry_count = 0;
  once.wait.reset();
  // The callbacks keep this alive: an acquire always answers once, and a
  // member won after this ended must still be given up (on_member).
  auto self = shared_from_this();
  current_ = launch<AcquireOperation>(core_, resources_, once, [self, this](AcquireResult result) {
    on_first_attempt(std::move(result));
  });
}

void SetTurnOperation::on_first_attempt(AcquireResult result) {
  if (phase_ != Phase::trying) return;
  current_.reset();
  result_.attempts += result.attempts;
  const std::error_code error = result.error;
  const bool contended =
      error == errc::not_acquired || error == errc::no_quorum || error == errc::validity_too_short;
  if (result.ok() || !contended || out_of_time()) {
    const int attempts = result_.attempts;
    result_ = std::move(result);
    result_.attempts = attempts;
    finish(result_.error);
    return;
  }
  phase_ = Phase::taking;
  take_next();
}

bool SetTurnOperation::out_of_time() const {
  return deadline_ && core_.clock().now() >= *deadline_;
}

void SetTurnOperation::take_next() {
  if (phase_ != Phase::taking) return;
  if (held_.size() == order_.size()) return adopt();
  if (out_of_time()) return finish(make_error_code(errc::not_acquired));
  AcquireOptions member = options_;
  member.fair = true;
  member.fenced = false;
  member.payload.reset();
  member.retry_count.reset();
  member.wait.reset();
  if (deadline_) {
    member.wait = std::chrono::ceil<Milliseconds>(*deadline_ - core_.clock().now());
  } else {
    member.retry_count = -1;
  }
  const Resource& resource = resources_[order_[held_.size()]];
  auto self = shared_from_this();
  current_ = launch_prepared<AcquireOperation>(
      core_, [](AcquireOperation& op) { op.skip_courtesy(); }, resource, member,
      [self, this](AcquireResult result) { on_member(std::move(result)); });
}

void SetTurnOperation::on_member(AcquireResult result) {
  if (phase_ != Phase::taking) {
    // Cancelled or aborted meanwhile: a member won all the same is given
    // up with the rest.
    if (result.ok()) release_call_now(*result.lock);
    return;
  }
  current_.reset();
  result_.attempts += result.attempts;
  if (!result.ok()) {
    result_.nodes = std::move(result.nodes);
    return finish(result.error);
  }
  if (result.ticket) {
    result_.places.push_back({resources_[order_[held_.size()]], *result.ticket});
    result_.ticket = result.ticket;
  }
  held_.push_back(std::move(*result.lock));
  schedule_renewal();
  take_next();
}

void SetTurnOperation::adopt() {
  phase_ = Phase::adopting;
  core_.timers().cancel(renewal_timer_);
  renewal_timer_ = TimerQueue::kNone;
  // The set's lock, valid until its earliest member's deadline; the
  // adopt round's success restarts its validity from the round's start,
  // as an extend's does.
  std::vector<LockValue> values(resources_.size(), LockValue(""));
  TimePoint started = held_.front().started;
  TimePoint valid_until = held_.front().valid_until;
  for (std::size_t i = 0; i < held_.size(); ++i) {
    values[order_[i]] = held_[i].value;
    started = std::min(started, held_[i].started);
    valid_until = std::min(valid_until, held_[i].valid_until);
  }
  std::string value = LockValue::random().str();
  if (options_.payload) value.append(":").append(*options_.payload);
  Lock set{resources_.front(), LockValue(value), ttl_, started, valid_until, std::nullopt};
  set.resources = resources_;
  set.kind = LockKind::multi;
  // One call per slot the set's resources are in (slot_parts.hpp).
  MemberCalls calls;
  for (const SlotPart& part : slot_parts(core_, set)) {
    std::vector<LockValue> part_values;
    for (const std::size_t i : part.members) part_values.push_back(values[i]);
    calls.add(adopt_call(part_lock(set, part), part_values, part.keys));
  }
  auto self = shared_from_this();
  current_ = launch<ExtendOperation>(
      core_, std::move(set), ExtendOptions{ttl_},
      [self, this](ExtendResult result) { on_adopted(std::move(result)); }, std::move(calls));
}

void SetTurnOperation::on_adopted(ExtendResult result) {
  if (phase_ != Phase::adopting) {
    // Cancelled or aborted meanwhile: the set's value goes too, wherever
    // it was adopted.
    if (result.ok() && result.lock) release_call_now(*result.lock);
    return;
  }
  current_.reset();
  result_.nodes = std::move(result.nodes);
  if (!result.ok()) {
    // Some nodes may have adopted: the set's value goes with the members.
    if (result.lock) release_call_now(*result.lock);
    return start_over(result.error);
  }
  // The members' own locks go: where the set adopted them, each release
  // finds the set's value and only gives up the member's place in its
  // line; where it did not, it frees the member.
  release_held();
  result_.lock = std::move(result.lock);
  result_.validity = result.validity;
  result_.error.clear();
  if (!options_.fenced.value_or(core_.config().lock.fenced)) return finish({});
  // Fenced: one token for every member, proposed while the set is held.
  phase_ = Phase::fencing;
  auto self = shared_from_this();
  current_ = launch<SetFenceOperation>(
      core_, *result_.lock,
      [self, this](std::error_code error, std::uint64_t token) { on_fenced(error, token); });
}

void SetTurnOperation::on_fenced(std::error_code error, std::uint64_t token) {
  // Cancelled or aborted meanwhile: stop() or abort() gave the set up.
  if (phase_ != Phase::fencing) return;
  current_.reset();
  if (error) return drop_set_and_start_over(error);
  Lock& set = *result_.lock;
  // The validity left after the token's rounds, as a fenced acquire
  // measures it after its phase 2.
  const Microseconds validity =
      std::chrono::duration_cast<Microseconds>(set.valid_until - core_.clock().now());
  if (!validity_sufficient(validity, core_.config().lock.min_validity)) {
    return drop_set_and_start_over(make_error_code(errc::validity_too_short));
  }
  set.fence = token;
  set.fences.assign(set.resources.size(), token);
  result_.validity = std::chrono::floor<Milliseconds>(validity);
  finish({});
}

void SetTurnOperation::drop_set_and_start_over(std::error_code why) {
  if (result_.lock) release_call_now(*result_.lock);
  result_.lock.reset();
  result_.validity = Milliseconds(0);
  start_over(why);
}

void SetTurnOperation::schedule_renewal() {
  core_.timers().cancel(renewal_timer_);
  renewal_timer_ = TimerQueue::kNone;
  if (held_.empty() || renewals_out_ > 0) return;
  TimePoint earliest = held_.front().valid_until;
  for (const Lock& lock : held_) earliest = std::min(earliest, lock.valid_until);
  const TimePoint when = earliest - std::chrono::duration_cast<Microseconds>(ttl_) / 2;
  std::weak_ptr<Operation> weak = weak_from_this();
  renewal_timer_ = core_.timers().schedule_at(when, [weak, this] {
    if (auto self = weak.lock()) {
      renewal_timer_ = TimerQueue::kNone;
      renew_held();
    }
  });
}

void SetTurnOperation::renew_held() {
  if (phase_ != Phase::taking || held_.empty()) return;
  renewals_out_ = held_.size();
  const std::uint64_t holding = holding_;
  auto self = shared_from_this();
  for (std::size_t i = 0; i < held_.size(); ++i) {
    launch<ExtendOperation>(core_, held_[i], ExtendOptions{ttl_},
                            [self, this, i, holding](ExtendResult result) {
                              if (holding == holding_) on_renewed(i, std::move(result));
                            });
  }
}

void SetTurnOperation::on_renewed(std::size_t index, ExtendResult result) {
  if (renewals_out_ > 0) --renewals_out_;
  if (phase_ != Phase::taking) return;
  if (!result.ok()) return start_over(result.error);
  if (result.lock && index < held_.size()) held_[index] = std::move(*result.lock);
  if (renewals_out_ == 0) schedule_renewal();
}

void SetTurnOperation::start_over(std::error_code why) {
  release_held();
  result_.places.clear();
  result_.ticket.reset();
  if (out_of_time()) return finish(why);
  phase_ = Phase::taking;
  take_next();
}

void SetTurnOperation::release_call_now(const Lock& lock) {
  // A cleanup: sent again after a reconnect until the value cannot live
  // on the node any more. No value is ever granted again once released.
  const MemberCalls calls = release_calls(core_, lock, true);
  // A renewal moved the keys' expiry past started + ttl: the last one
  // began before valid_until, so the keys are gone by valid_until + ttl.
  const TimePoint expires_at = lock.valid_until + lock.ttl + core_.drift_for(lock.ttl);
  for (auto& node : core_.nodes()) send_cleanups(*node, calls, expires_at);
}

void SetTurnOperation::release_held() {
  ++holding_;
  renewals_out_ = 0;
  core_.timers().cancel(renewal_timer_);
  renewal_timer_ = TimerQueue::kNone;
  for (const Lock& lock : held_) release_call_now(lock);
  held_.clear();
}

void SetTurnOperation::finish(std::error_code error) {
  if (delivered_) return;
  delivered_ = true;
  phase_ = Phase::done;
  auto keep = shared_from_this();
  if (error) {
    release_held();
    result_.lock.reset();
    result_.validity = Milliseconds(0);
  }
  result_.error = error;
  current_.reset();
  core_.finished(this);
  deliver(callback_, std::move(result_));
}

void SetTurnOperation::stop() {
  // A set adopted and being fenced is held: it goes too.
  if (phase_ == Phase::fencing && result_.lock) release_call_now(*result_.lock);
  phase_ = Phase::done;
  if (auto current = std::move(current_)) current->cancel();
  release_held();
}

void SetTurnOperation::cancel() {
  if (phase_ == Phase::done) return;
  stop();
  core_.turn().post(
      [self = shared_from_this(), this] { finish(make_error_code(errc::cancelled)); });
}

void SetTurnOperation::abort(std::error_code why) {
  if (delivered_) return;
  if (phase_ == Phase::fencing && result_.lock) release_call_now(*result_.lock);
  phase_ = Phase::done;
  // The acquire or round out now ends at once (its callback finds this
  // done and gives up what it won).
  if (auto current = std::move(current_)) current->abort(why);
  finish(why);
}

}  // namespace redlock::detail
