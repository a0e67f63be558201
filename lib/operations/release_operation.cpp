#include "operations/release_operation.hpp"

#include "kinds/fair.hpp"
#include "operations/slot_parts.hpp"
#include "scripts/reply_parse.hpp"

namespace redlock::detail {

ReleaseOperation::ReleaseOperation(ClientCore& core, Lock lock,
                                   AsyncClient::ReleaseCallback callback)
    : Operation(core), lock_(std::move(lock)), callback_(std::move(callback)) {}

void ReleaseOperation::fail_later(std::error_code error) {
  finished_ = true;
  core_.turn().post([self = shared_from_this(), this, error] { complete(error); });
}

void ReleaseOperation::start() {
  if (!core_.config_problem().empty()) return fail_later(make_error_code(errc::config_error));
  if (!well_formed(lock_) || !lock_keys_allowed(core_, lock_)) {
    return fail_later(make_error_code(errc::invalid_argument));
  }
  const KeySpace keys = core_.keys_for(lock_.resource.str());
  // A mutex this client found contended: the release offers a place at the
  // back of the line for its next acquire (docs/algorithm.md,
  // "Waiting in line", rejoining). The common, uncontended case builds no channel name.
  // A fair lock's release draws the client's next ticket in the same call
  // instead ("Fair locks", the next ticket drawn in the release).
  std::string rejoin;
  const LockKind kind = kind_of(lock_);
  const bool comes_back = (kind == LockKind::mutex || kind == LockKind::fair) &&
                          core_.wakeups().recent_contention().size() > 0;
  if (comes_back) {
    channel_ = release_channel(keys.key_prefix(), lock_.resource.str());
    const TimePoint now = core_.clock().now();
    if (kind == LockKind::mutex) {
      rejoin_ = core_.wakeups().offer_rejoin(channel_, lock_.resource.str(), now);
      if (rejoin_) rejoin = rejoin_argument(rejoin_->id, core_.wakeups().rejoin_lease());
    } else {
      drawing_ =
          core_.wakeups().recent_contention().contended_round_trip(channel_, now).has_value();
    }
  }
  // t0 of a pre-claim's validity: read before any node can record it.
  const TimePoint started = core_.clock().now();
  // A fair lock's release that draws also records the releaser's next
  // place with a claim, for its next acquire to adopt ("Fair locks", the
  // pre-claim), unless that acquire could not (a fenced lock, whose next
  // acquire makes no claim; a value with a payload; a node whose grants
  // must be replicated).
  if (drawing_ && !lock_.fence && lock_.value.str().find(':') == std::string::npos &&
      !core_.any_replicated_node()) {
    claim_ = core_.wakeups().pre_claim(lock_.resource, lock_.ttl, started);
  }
  MemberCalls calls;
  if (drawing_) {
    const std::string pre_claim =
        claim_
            ? claim_argument(claim_->ttl, claim_->tag, keys.amnesia_defence(), claim_->value.str())
            : std::string();
    const std::string next_place =
        claim_ ? std::to_string(kFairQueueEntryTtl.count()) + ":" + claim_->place.id
               : std::string();
    calls = MemberCalls(fair_release_call(
        lock_, keys, true,
        FairReleaseExtras{.draw = true, .pre_claim = pre_claim, .next_place = next_place}));
  } else {
    // (A set across slots: one call per slot, slot_parts.hpp.)
    calls = release_calls(core_, lock_, true, rejoin);
  }
  auto& nodes = core_.nodes();
  round_.open(core_.config().nodes, started, TimePoint::max(), calls.parts());
  // Every node, also those that did not grant: a grant may have landed after
  // its reply timed out.
  auto self = shared_from_this();
  for (auto& node : nodes) send_calls(*node, calls, false, round_.started(), self, round_.tag());
}

void ReleaseOperation::on_response(std::size_t node, std::uint32_t tag,
                                   const NodeResponse& response) {
  const bool unreachable = response.kind == NodeResponse::Kind::unreachable;
  const bool left_unsent = response.kind == NodeResponse::Kind::timeout && !response.may_have_run;
  if ((rejoin_ || drawing_) && tag == round_.tag()) note_comeback(node, response);
  if (finished_) {
    // Reported already, at a majority (release_at_majority): a node still
    // to answer that the release never reached gets it once it is back.
    if (reported_at_majority_ && tag == round_.tag() && !response.late &&
        (unreachable || left_unsent)) {
      resend_when_reachable(node);
    }
    return;
  }
  if (!round_.counts(tag, response)) return;
  NodeOutcome& part = round_.answer(node, response);
  Comeback comeback;  // (noted above)
  parse_flag_response(response, NodeStatus::released, part, &comeback);
  if (unreachable || left_unsent) resend_when_reachable(node);
  const NodeOutcome* outcome = round_.whole(node, part);
  if (outcome == nullptr) return;
  (void)round_.vote(outcome->status == NodeStatus::released);
  const QuorumTally& votes = round_.votes();
  result_.released = votes.yes_count();
  const bool majority_released =
      core_.config().lock.release_at_majority && votes.yes_count() >= core_.quorum();
  if (votes.pending() == 0 || majority_released) {
    (void)round_.close(core_.clock().now());
    core_.metrics().releases.fetch_add(1, std::memory_order_relaxed);
    // A majority deleted the lock: that is a release, whatever an earlier
    // answer said (the same failure arriving later would never be heard).
    reported_at_majority_ = votes.pending() > 0;
    complete(reported_at_majority_ ? std::error_code() : summary());
  }
}

void ReleaseOperation::note_comeback(std::size_t node, const NodeResponse& response) {
  // Read here, also after the release was reported at a majority: the
  // answers still to come say where the place was taken or the ticket
  // drawn.
  NodeOutcome scratch;
  Comeback comeback;
  parse_flag_response(response, NodeStatus::released, scratch, &comeback);
  if (comeback.rejoined && rejoin_) core_.wakeups().rejoined(rejoin_->number, node);
  if (comeback.drawn == 0 || !drawing_) return;
  // (A node that drew also recorded the pre-claim's place at its count.)
  if (claim_ && node < claim_->counts.size()) {
    claim_->counts[node] = comeback.drawn;
    claim_->first_and_free = claim_->first_and_free || comeback.first_and_free;
  }
  ++draws_;
  draw_max_ = std::max(draw_max_, comeback.drawn);
  // The highest counter of a majority: above every ticket recorded on a
  // majority before this release began (as a ticket_draw round's).
  if (draws_ != core_.quorum()) return;
  claim_handed_ = true;
  core_.wakeups().note_drawn_ticket(channel_, {draw_max_, round_.started(), claim_},
                                    core_.clock().now());
}

void ReleaseOperation::resend_when_reachable(std::size_t node) {
  if (round_.parts() > 1) {
    if (resent_.empty()) resent_.assign(core_.nodes().size(), false);
    if (resent_[node]) return;
    resent_[node] = true;
  }
  // The release did not reach the node, or the connection was reset under
  // it: the value may live there for another TTL. It goes to the node once
  // the node is reachable again.
  const TimePoint expires_at = core_.clock().now() + lock_.ttl + core_.drift_for(lock_.ttl);
  send_cleanups(*core_.nodes()[node], release_calls(core_, lock_, false), expires_at);
}

std::error_code ReleaseOperation::summary() {
  bool timed_out = false;
  bool failed = false;
  for (const NodeOutcome& outcome : round_.outcomes()) {
    if (outcome.status == NodeStatus::timeout) timed_out = true;
    if (outcome.status == NodeStatus::unreachable || outcome.status == NodeStatus::error) {
      failed = true;
    }
  }
  if (timed_out) return make_error_code(errc::timeout);
  if (failed) return make_error_code(errc::node_error);
  return {};
}

void ReleaseOperation::complete(std::error_code error) {
  auto keep = shared_from_this();
  // A pre-claim that made no ticket (fewer than a majority drew, so far):
  // no acquire will adopt it. (Counts still to come fill it in if it was
  // handed on.)
  if (claim_ && !claim_handed_) {
    core_.wakeups().withdraw(*claim_);
    claim_.reset();
  }
  core_.finished(this);
  finished_ = true;
  result_.error = error;
  result_.nodes = round_.take_outcomes();
  deliver(callback_, std::move(result_));
}

void ReleaseOperation::cancel() {
  if (finished_) return;
  fail_later(make_error_code(errc::cancelled));
}

void ReleaseOperation::abort(std::error_code why) {
  if (finished_) return;
  complete(why);
}

}  // namespace redlock::detail
