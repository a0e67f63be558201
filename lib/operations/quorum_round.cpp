#include "operations/quorum_round.hpp"

#include <chrono>

namespace redlock::detail {

void QuorumRound::open(const std::vector<NodeConfig>& nodes, TimePoint started,
                       TimePoint deadline) {
  // Tags count up in the low 31 bits, beside tag_bit_ (the high bit or
  // none), skip 0 and never take kCleanupTag.
  constexpr std::uint32_t kCounterBits = 0x7fffffffu;
  do {
    tag_ = ((tag_ + 1) & kCounterBits) | tag_bit_;
  } while ((tag_ & kCounterBits) == 0 || tag_ == kCleanupTag);
  open_ = true;
  started_ = started;
  deadline_ = deadline;
  votes_ = QuorumTally(nodes.size());
  unchanged_.assign(nodes.size(), false);
  if (!keep_outcomes_) return;
  outcomes_.resize(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    NodeOutcome& outcome = outcomes_[i];
    outcome.node = i;
    if (outcome.name != nodes[i].name) outcome.name = nodes[i].name;
    outcome.status = NodeStatus::pending;
    outcome.detail.clear();
    outcome.latency = Microseconds(0);
    outcome.holder_ttl_ms = -1;
    outcome.fence_counter = 0;
    outcome.permit = -1;
  }
}

NodeOutcome& QuorumRound::answer(std::size_t node, const NodeResponse& response) {
  if (response.kind != NodeResponse::Kind::reply && !response.may_have_run) {
    unchanged_[node] = true;
  }
  if (!keep_outcomes_) {
    scratch_ = NodeOutcome{};
    return scratch_;
  }
  return outcomes_[node];
}

void QuorumRound::unchanged(std::size_t node) noexcept { unchanged_[node] = true; }

Decision QuorumRound::vote(bool yes) noexcept {
  if (yes) {
    votes_.yes();
  } else {
    votes_.no();
  }
  return votes_.decision();
}

RoundTiming QuorumRound::close(TimePoint now) noexcept {
  open_ = false;
  return RoundTiming{started_, now, deadline_};
}

}  // namespace redlock::detail
