#include "operations/quorum_round.hpp"

#include <chrono>

namespace redlock::detail {

namespace {
// Nodes whose "unchanged" mark is a bit of QuorumRound::unchanged_low_.
constexpr std::size_t kLowNodes = 64;
}  // namespace

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
  unchanged_low_ = 0;
  if (nodes.size() > kLowNodes) {
    if (!unchanged_high_) unchanged_high_ = std::make_unique<std::vector<bool>>();
    unchanged_high_->assign(nodes.size() - kLowNodes, false);
  }
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
  if (response.kind != NodeResponse::Kind::reply && !response.may_have_run) unchanged(node);
  if (!keep_outcomes_) {
    // Read by the caller before the next answer is parsed, on this thread.
    thread_local NodeOutcome scratch;
    scratch.node = 0;
    scratch.name.clear();
    scratch.status = NodeStatus::not_asked;
    scratch.latency = Microseconds(0);
    scratch.holder_ttl_ms = -1;
    scratch.permit = -1;
    scratch.fence_counter = 0;
    scratch.detail.clear();
    return scratch;
  }
  return outcomes_[node];
}

void QuorumRound::unchanged(std::size_t node) noexcept {
  if (node < kLowNodes) {
    unchanged_low_ |= std::uint64_t{1} << node;
  } else {
    (*unchanged_high_)[node - kLowNodes] = true;
  }
}

bool QuorumRound::may_have_changed(std::size_t node) const noexcept {
  if (node < kLowNodes) return (unchanged_low_ & (std::uint64_t{1} << node)) == 0;
  return !(*unchanged_high_)[node - kLowNodes];
}

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
