#include "operations/extend_operation.hpp"

#include <string>

#include "protocol/validity.hpp"
#include "scripts/reply_parse.hpp"

namespace redlock::detail {

namespace {
constexpr std::uint32_t kExtendTag = 1;
}

std::error_code extend_request_refusal(const Lock& lock, Milliseconds ttl,
                                       const LockConfig& config) noexcept {
  // Like acquire: a lock may not outlive the recovery delay of a node that
  // lost its data.
  const bool beyond_max_ttl = config.amnesia_defence && ttl > effective_max_ttl(config);
  if (ttl.count() <= 0 || lock.value.empty() || lock.resource.empty() || beyond_max_ttl) {
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

void count_extend_answer(const NodeResponse& response, NodeOutcome& outcome, QuorumTally& votes,
                         std::size_t& not_held) {
  parse_flag_response(response, NodeStatus::extended, outcome);
  if (outcome.status == NodeStatus::extended) {
    votes.yes();
  } else {
    if (outcome.status == NodeStatus::not_held) ++not_held;
    votes.no();
  }
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

ExtendOperation::ExtendOperation(ClientCore& core, Lock lock, const ExtendOptions& options,
                                 AsyncClient::ExtendCallback callback)
    : Operation(core),
      lock_(std::move(lock)),
      ttl_(options.ttl.value_or(lock_.ttl)),
      callback_(std::move(callback)),
      tally_(core.nodes().size()) {}

void ExtendOperation::fail_later(std::error_code error) {
  finished_ = true;
  core_.turn().post([self = shared_from_this(), this, error] { complete(error); });
}

void ExtendOperation::start() {
  if (!core_.config_problem().empty()) return fail_later(make_error_code(errc::config_error));
  started_ = core_.clock().now();
  const std::error_code refused = extend_refusal(lock_, ttl_, core_.config().lock, started_);
  if (refused) return fail_later(refused);

  auto& nodes = core_.nodes();
  result_.nodes.resize(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    result_.nodes[i].node = i;
    result_.nodes[i].name = nodes[i]->config().name;
    result_.nodes[i].status = NodeStatus::pending;
  }
  open_ = true;
  const std::string key = lock_key(core_.config().lock.key_prefix, lock_.resource.str());
  const std::string ttl_text = std::to_string(ttl_.count());
  request_.emplace(PreparedRequest(script(ScriptId::extend), {key}, {lock_.value.str(), ttl_text}));
  auto self = shared_from_this();
  for (auto& node : nodes) node->send_prepared(*request_, started_, self, kExtendTag);
}

void ExtendOperation::on_response(std::size_t node, std::uint32_t tag,
                                  const NodeResponse& response) {
  if (tag != kExtendTag || !open_ || response.late) return;
  count_extend_answer(response, result_.nodes[node], tally_, not_held_);
  if (tally_.decision() != Decision::pending) decide();
}

void ExtendOperation::decide() {
  open_ = false;
  const RoundTiming timing{started_, core_.clock().now(), lock_.valid_until};
  const ExtendVerdict verdict = extend_verdict(
      tally_, not_held_, ttl_, timing, core_.drift_for(ttl_), core_.config().lock.min_validity);
  if (verdict.error) {
    complete(verdict.error);
    return;
  }
  // Validity counts from the extend's own start, not from the acquisition.
  lock_.ttl = ttl_;
  lock_.valid_until = started_ + verdict.validity;
  result_.validity = std::chrono::floor<Milliseconds>(verdict.validity);
  complete({});
}

void ExtendOperation::complete(std::error_code error) {
  auto keep = shared_from_this();
  core_.finished(this);
  finished_ = true;
  result_.error = error;
  result_.lock = lock_;
  deliver(callback_, std::move(result_));
}

void ExtendOperation::cancel() {
  if (finished_) return;
  open_ = false;
  fail_later(make_error_code(errc::cancelled));
}

void ExtendOperation::abort(std::error_code why) {
  if (finished_) return;
  open_ = false;
  complete(why);
}

}  // namespace redlock::detail
