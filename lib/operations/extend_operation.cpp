#include "operations/extend_operation.hpp"

#include <string>

#include "kinds/kind.hpp"
#include "protocol/validity.hpp"
#include "scripts/reply_parse.hpp"

namespace redlock::detail {

std::error_code extend_request_refusal(const Lock& lock, Milliseconds ttl,
                                       const LockConfig& config) noexcept {
  // Like acquire: a lock may not outlive the recovery delay of a node that
  // lost its data.
  const bool beyond_max_ttl = config.amnesia_defence && ttl > effective_max_ttl(config);
  if (ttl.count() <= 0 || !well_formed(lock) || beyond_max_ttl) {
    return make_error_code(errc::invalid_argument);
  }
  return {};
}

std::error_code extend_refusal(const Lock& lock, Milliseconds ttl, const LockConfig& config,
                               TimePoint now) noexcept {
  if (const std::error_code refused = extend_request_refusal(lock, ttl, config)) return refused;
  if (!lock.valid_at(now)) return make_error_code(errc::lost);
  return {};
}

ExtendVerdict extend_verdict(const QuorumTally& votes, std::size_t not_held, Milliseconds ttl,
                             const RoundTiming& timing, Milliseconds drift,
                             Milliseconds min_validity) noexcept {
  if (!timing.decided_in_time()) return {make_error_code(errc::lost), Microseconds(0)};
  switch (votes.decision()) {
    case Decision::pending:
      return {make_error_code(errc::no_quorum), Microseconds(0)};
    case Decision::lost:
      return {extend_failure_reason(votes.nodes(), not_held), Microseconds(0)};
    case Decision::won:
      break;
  }
  const Microseconds validity = validity_left(ttl, timing.elapsed(), drift);
  if (!validity_sufficient(validity, min_validity)) {
    return {make_error_code(errc::validity_too_short), Microseconds(0)};
  }
  return {std::error_code{}, validity};
}

Decision count_extend_answer(QuorumRound& round, std::size_t node, const NodeResponse& response,
                             std::size_t& not_held) {
  NodeOutcome& part = round.answer(node, response);
  parse_flag_response(response, NodeStatus::extended, part);
  const NodeOutcome* outcome = round.whole(node, part);
  if (outcome == nullptr) return round.decision();
  if (outcome->status == NodeStatus::not_held) ++not_held;
  return round.vote(outcome->status == NodeStatus::extended);
}

ExtendOperation::ExtendOperation(ClientCore& core, Lock lock, const ExtendOptions& options,
                                 AsyncClient::ExtendCallback callback)
    : Operation(core),
      lock_(std::move(lock)),
      ttl_(options.ttl.value_or(lock_.ttl)),
      callback_(std::move(callback)) {}

ExtendOperation::ExtendOperation(ClientCore& core, Lock lock, const ExtendOptions& options,
                                 AsyncClient::ExtendCallback callback, MemberCalls calls)
    : ExtendOperation(core, std::move(lock), options, std::move(callback)) {
  calls_ = std::move(calls);
}

void ExtendOperation::fail_later(std::error_code error) {
  finished_ = true;
  core_.turn().post([self = shared_from_this(), this, error] { complete(error); });
}

void ExtendOperation::start() {
  if (!core_.config_problem().empty()) return fail_later(make_error_code(errc::config_error));
  const TimePoint started = core_.clock().now();
  const std::error_code refused = extend_refusal(lock_, ttl_, core_.config().lock, started);
  if (refused) return fail_later(refused);
  if (!lock_keys_allowed(core_, lock_)) return fail_later(make_error_code(errc::invalid_argument));

  auto& nodes = core_.nodes();
  request_.emplace(calls_ ? *calls_ : extend_calls(core_, lock_, ttl_));
  round_.open(core_.config().nodes, started, lock_.valid_until, request_->parts());
  auto self = shared_from_this();
  for (auto& node : nodes) request_->send(*node, started, self, round_.tag());
  deadline_timer_ = core_.timers().schedule_after(
      std::chrono::ceil<Microseconds>(lock_.valid_until - started), [self, this] {
        deadline_timer_ = TimerQueue::kNone;
        if (round_.is_open()) decide();
      });
}

void ExtendOperation::on_response(std::size_t node, std::uint32_t tag,
                                  const NodeResponse& response) {
  if (!round_.counts(tag, response)) return;
  if (count_extend_answer(round_, node, response, not_held_) != Decision::pending) decide();
}

void ExtendOperation::decide() {
  const RoundTiming timing = round_.close(core_.clock().now());
  core_.timers().cancel(deadline_timer_);
  deadline_timer_ = TimerQueue::kNone;
  const ExtendVerdict verdict =
      extend_verdict(round_.votes(), not_held_, ttl_, timing, core_.drift_for(ttl_),
                     core_.config().lock.min_validity);
  if (verdict.error) {
    complete(verdict.error);
    return;
  }
  // Validity counts from the extend's own start, not from the acquisition.
  // A set's adoption is the attempt that won its lock: the lock starts
  // with it.
  if (calls_) lock_.started = timing.started;
  lock_.ttl = ttl_;
  lock_.valid_until = timing.started + verdict.validity;
  result_.validity = std::chrono::floor<Milliseconds>(verdict.validity);
  complete({});
}

void ExtendOperation::complete(std::error_code error) {
  auto keep = shared_from_this();
  core_.finished(this);
  finished_ = true;
  result_.error = error;
  result_.lock = lock_;
  result_.nodes = round_.take_outcomes();
  deliver(callback_, std::move(result_));
}

void ExtendOperation::cancel() {
  if (finished_) return;
  if (round_.is_open()) (void)round_.close(core_.clock().now());
  core_.timers().cancel(deadline_timer_);
  deadline_timer_ = TimerQueue::kNone;
  fail_later(make_error_code(errc::cancelled));
}

void ExtendOperation::abort(std::error_code why) {
  if (finished_) return;
  if (round_.is_open()) (void)round_.close(core_.clock().now());
  core_.timers().cancel(deadline_timer_);
  deadline_timer_ = TimerQueue::kNone;
  complete(why);
}

}  // namespace redlock::detail
