#include "extend_operation.hpp"

#include <string>

#include "reply_parse.hpp"

namespace redlock::detail {

namespace {
constexpr std::uint32_t kExtendTag = 1;
}

ExtendOperation::ExtendOperation(ClientCore& core, Lock lock, const ExtendOptions& options,
                                 AsyncClient::ExtendCallback callback)
    : Operation(core),
      lock_(std::move(lock)),
      ttl_(options.ttl.value_or(lock_.ttl)),
      lock_key_(redlock::detail::lock_key(core.config().lock.key_prefix, lock_.resource.str())),
      callback_(std::move(callback)),
      tally_(core.nodes().size()) {}

void ExtendOperation::fail_later(std::error_code error) {
  finished_ = true;
  core_.turn().post([self = shared_from_this(), this, error] { complete(error); });
}

void ExtendOperation::start() {
  if (!core_.config_problem().empty()) return fail_later(make_error_code(errc::config_error));
  const LockConfig& config = core_.config().lock;
  // Like acquire: a lock may not outlive the recovery delay of a node that
  // lost its data.
  const bool beyond_max_ttl = config.amnesia_defence && ttl_ > effective_max_ttl(config);
  if (ttl_.count() <= 0 || lock_.value.empty() || lock_.resource.empty() || beyond_max_ttl) {
    return fail_later(make_error_code(errc::invalid_argument));
  }
  started_ = core_.clock().now();
  // An expired lock is never extended: another client may hold it by now,
  // and extending would make two holders.
  if (!lock_.valid_at(started_)) return fail_later(make_error_code(errc::lost));

  auto& nodes = core_.nodes();
  result_.nodes.resize(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    result_.nodes[i].node = i;
    result_.nodes[i].name = nodes[i]->config().name;
    result_.nodes[i].status = NodeStatus::pending;
  }
  open_ = true;
  const std::string ttl_text = std::to_string(ttl_.count());
  auto self = shared_from_this();
  for (auto& node : nodes) {
    node->send(extend_script(), {lock_key_}, {lock_.value.str(), ttl_text}, false, self,
               kExtendTag);
  }
}

void ExtendOperation::on_response(std::size_t node, std::uint32_t tag,
                                  const NodeResponse& response) {
  if (tag != kExtendTag || !open_ || response.late) return;
  NodeOutcome& outcome = result_.nodes[node];
  parse_flag_response(response, NodeStatus::extended, outcome);
  if (outcome.status == NodeStatus::extended) {
    tally_.yes();
  } else {
    if (outcome.status == NodeStatus::not_held) ++not_held_;
    tally_.no();
  }
  if (tally_.decision() != Decision::pending) decide();
}

void ExtendOperation::decide() {
  open_ = false;
  if (tally_.decision() == Decision::lost) {
    complete(extend_failure_reason(tally_.nodes(), not_held_));
    return;
  }
  const TimePoint now = core_.clock().now();
  const Microseconds validity =
      validity_left(ttl_, elapsed_between(started_, now), core_.drift_for(ttl_));
  if (!validity_sufficient(validity, core_.config().lock.min_validity)) {
    complete(make_error_code(errc::validity_too_short));
    return;
  }
  // Validity counts from the extend's own start, not from the acquisition.
  lock_.ttl = ttl_;
  lock_.valid_until = started_ + validity;
  result_.validity = std::chrono::floor<Milliseconds>(validity);
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
