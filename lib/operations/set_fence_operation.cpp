#include "operations/set_fence_operation.hpp"

#include <utility>

#include "kinds/multi.hpp"
#include "operations/slot_parts.hpp"
#include "redlock/error.hpp"
#include "scripts/reply_parse.hpp"

namespace redlock::detail {

SetFenceOperation::SetFenceOperation(ClientCore& core, Lock set, Callback callback)
    : Operation(core), set_(std::move(set)), callback_(std::move(callback)) {}

void SetFenceOperation::start() {
  // Every counter may still be 0 (never fenced): then 1 wins at once.
  // Otherwise the lost round reports the highest.
  propose(*first_proposal(0));
}

void SetFenceOperation::request_recovery() {
  // A node awaiting its second merge: a recovery round merges it.
  if (recovery_requested_) return;
  recovery_requested_ = true;
  recover_parts(core_.recovery(), slot_parts(core_, set_), [](bool) {});
}

void SetFenceOperation::propose(std::uint64_t token) {
  ++rounds_;
  // One call per slot the set's resources are in (slot_parts.hpp).
  const MemberCalls calls = fence_all_calls(core_, set_.resources, token);
  round_.open(core_.config().nodes, core_.clock().now(), set_.valid_until, calls.parts());
  proposal_.emplace(core_.nodes().size(), token);
  auto self = shared_from_this();
  for (auto& node : core_.nodes())
    send_calls(*node, calls, false, round_.started(), self, round_.tag());
}

void SetFenceOperation::on_response(std::size_t node, std::uint32_t tag,
                                    const NodeResponse& response) {
  if (finished_) return;
  if (!round_.counts(tag, response)) {
    if (answers_unmerged(response)) request_recovery();
    return;
  }
  bool unmerged = false;
  const bool counted = count_fence_answer(round_, node, response, *proposal_, nullptr, &unmerged);
  if (unmerged) request_recovery();
  if (!counted) return;
  const Decision decision = proposal_->decision();
  if (decision == Decision::pending) return;
  (void)round_.close(core_.clock().now());
  if (decision == Decision::won) return complete({}, proposal_->proposal());
  const auto next = next_proposal(*proposal_, rounds_, kMaxFenceRounds);
  if (next && core_.clock().now() < set_.valid_until) return propose(*next);
  complete(make_error_code(errc::fencing_failed), 0);
}

void SetFenceOperation::complete(std::error_code error, std::uint64_t token) {
  if (finished_) return;
  finished_ = true;
  auto keep = shared_from_this();
  if (round_.is_open()) (void)round_.close(core_.clock().now());
  core_.finished(this);
  if (callback_) {
    auto callback = std::move(callback_);
    callback(error, token);
  }
}

void SetFenceOperation::cancel() {
  if (finished_) return;
  (void)round_.close(core_.clock().now());
  core_.turn().post(
      [self = shared_from_this(), this] { complete(make_error_code(errc::cancelled), 0); });
}

void SetFenceOperation::abort(std::error_code why) { complete(why, 0); }

}  // namespace redlock::detail
