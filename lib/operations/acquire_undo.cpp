// The cleanup of an acquire's failed attempts (docs/algorithm.md,
// "Acquire: one parallel round", step 5; docs/engine.md, "Late replies"):
// what a failed attempt may have stored is undone, at once on the nodes
// that answered and after their answer on those that had not
// (AcquireOperation::Abandoned); late answers to decided attempts are
// settled here.
#include <algorithm>
#include <string>

#include "operations/acquire_operation.hpp"
#include "scripts/reply_parse.hpp"
#include "scripts/script_calls.hpp"

namespace redlock::detail {

namespace {
// Failed attempts remembered for their late answers. An older one's late
// grant is left to the unlock queued behind it on the same connection
// (sent when it is forgotten, if it was still awaited), and to its TTL.
constexpr std::size_t kAbandonedKept = 64;
}  // namespace

void AcquireOperation::handle_stale(std::uint32_t tag, std::size_t node,
                                    const NodeResponse& response) {
  // A grant for an attempt that failed (or was cancelled) must not linger:
  // undo it on that node. A grant for the winning attempt is simply ours —
  // but for a permit only a grant of the permit won.
  const bool won_permit_attempt = kind_ == LockKind::permit && tag == won_tag_;
  if (!parts_.empty() && tag == won_tag_ && tag == attempt_.tag()) {
    // A set across slots won before this node's every part answered (and
    // still this acquire's latest attempt: a win given up since was undone
    // everywhere by its fail_attempt). A part refused there (busy,
    // recovering) makes the node no holder of the set, now or at any
    // extend, and what its other parts granted is undone (slot_parts.hpp).
    // A part that timed out and granted late leaves the node holding the
    // set, as a late grant of one resource does.
    NodeOutcome part;
    if (response.kind != NodeResponse::Kind::reply) return;
    parse_acquire_response(response, 0, part);
    note_if_unmarked(part);
    const bool refused = part.status == NodeStatus::busy || part.status == NodeStatus::recovering;
    if (refused || attempt_.some_part_refused(node)) undo_partial_set(node);
    return;
  }
  auto found = std::find_if(abandoned_.begin(), abandoned_.end(),
                            [tag](const Abandoned& entry) { return entry.tag == tag; });
  if (response.kind != NodeResponse::Kind::reply) {
    if (won_permit_attempt && response.may_have_run) undo_other_permits_on(node);
    if (found != abandoned_.end()) settle_awaited(*found, node, response.may_have_run, -1);
    return;
  }
  NodeOutcome outcome;
  std::int64_t drawn = 0;  // (a fair refusal's draw: too late to count)
  parse_acquire_response(response, 0, outcome, kind_ == LockKind::fair ? &drawn : nullptr);
  note_if_unmarked(outcome);
  // A late answer may say the marker is gone (the next acquire then goes
  // as the script, which is always safe); it does not mark the node: only
  // a counted answer does, as before the decision.
  if (outcome.status == NodeStatus::recovering && outcome.holder_ttl_ms < 0) {
    core_.note_marked(node, false);
  }
  const bool granted = outcome.status == NodeStatus::granted;
  if (found != abandoned_.end()) {
    // A refusal stored nothing; an error reply may have (a script that
    // failed half-way), so it is undone as a grant is. (A node not awaited
    // was undone at the decision, behind the attempt on its connection.)
    const bool stored_nothing =
        outcome.status == NodeStatus::busy || outcome.status == NodeStatus::recovering;
    settle_awaited(*found, node, !stored_nothing, granted ? outcome.permit : -1);
    return;
  }
  if (!granted) return;
  if (won_permit_attempt && outcome.permit != permit_) {
    undo_grant(node, value_, false, grant_expiry(), outcome.permit);
  }
}

void AcquireOperation::undo_partial_set(std::size_t node) {
  undo_grant(node, value_, false, grant_expiry());
}

TimePoint AcquireOperation::grant_expiry() const {
  // Whatever a node stored lives at most a TTL (plus its clock's drift)
  // from the moment it got the request, which is no later than now.
  return core_.clock().now() + ttl_ + core_.drift_for(ttl_);
}

void AcquireOperation::undo_grant(std::size_t node, const LockValue& value, bool announce,
                                  TimePoint expires_at, std::int64_t permit) {
  if (kind_ == LockKind::mutex || kind_ == LockKind::fair) {
    // (A fair waiter's failed grant is undone without giving up its place.)
    // (Announced, it names the next waiter in line as a release does.)
    const std::string line =
        announce ? waiting_key(keys_.key_prefix(), resource_.str()) : std::string();
    send_cleanup_to(*core_.nodes()[node],
                    ReleaseCall{.lock_key = lock_key_,
                                .marker_key = marker_key_,
                                .recovering_key = recovering_key_,
                                .value = value.str(),
                                .channel = announce ? std::string_view(channel_) : kNoChannel,
                                .waiting_set = line},
                    expires_at);
    return;
  }
  send_cleanups(*core_.nodes()[node], undo_calls(value, announce, permit), expires_at);
}

void AcquireOperation::unlock_attempt(bool announce, bool after_answers, bool announce_late) {
  Abandoned attempt{attempt_.tag(), value_, announce_late, 0};
  const TimePoint expires_at = grant_expiry();
  const auto& outcomes = attempt_.outcomes();
  for (std::size_t i = 0; i < core_.nodes().size(); ++i) {
    if (!attempt_.may_have_changed(i)) continue;
    const bool pending = outcomes.size() > i && outcomes[i].status == NodeStatus::pending;
    // (A set's node of several parts is undone at once: one part's late
    // refusal would not say what another part did.)
    if (after_answers && pending && i < 64 && parts_.empty()) {
      attempt.awaiting |= std::uint64_t{1} << i;
      continue;
    }
    const bool granted = outcomes.size() > i && outcomes[i].status == NodeStatus::granted;
    undo_grant(i, value_, announce, expires_at, granted ? outcomes[i].permit : -1);
  }
  abandoned_.push_back(std::move(attempt));
  if (abandoned_.size() <= kAbandonedKept) return;
  // Forgotten from here on: the nodes still to answer are undone now (the
  // undo queues behind the attempt on the node's connection).
  undo_awaited(abandoned_.front());
  abandoned_.pop_front();
}

void AcquireOperation::settle_awaited(Abandoned& attempt, std::size_t node, bool may_have_stored,
                                      std::int64_t permit) {
  if (node >= 64) return;
  const std::uint64_t bit = std::uint64_t{1} << node;
  if ((attempt.awaiting & bit) == 0) return;
  attempt.awaiting &= ~bit;
  if (may_have_stored) undo_grant(node, attempt.value, attempt.announce, grant_expiry(), permit);
}

void AcquireOperation::undo_awaited(Abandoned& attempt) {
  for (std::size_t i = 0; i < core_.nodes().size() && attempt.awaiting != 0; ++i) {
    settle_awaited(attempt, i, true, -1);
  }
}

void AcquireOperation::undo_all_awaited(bool ending) {
  // What still awaits an answer is undone now, behind the attempt on each
  // node's connection as an undo at the decision is: before the next
  // attempt (which the earlier one's grant would refuse there), and when
  // the acquire ends (a process may exit, or its client close, before the
  // answers come). An acquire that ends retries no more: its undos are
  // announced, as a failed attempt's are when no retry follows.
  for (Abandoned& attempt : abandoned_) {
    if (ending) attempt.announce = true;
    undo_awaited(attempt);
  }
}

}  // namespace redlock::detail
