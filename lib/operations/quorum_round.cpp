#include "operations/quorum_round.hpp"

#include <algorithm>
#include <chrono>

namespace redlock::detail {

namespace {
// Nodes whose "unchanged" mark is a bit of QuorumRound::unchanged_low_.
constexpr std::size_t kLowNodes = 64;
}  // namespace

void QuorumRound::open(const std::vector<NodeConfig>& nodes, TimePoint started, TimePoint deadline,
                       std::uint32_t parts) {
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
  parts_ = parts < 1 ? 1 : parts;
  if (parts_ > 1) {
    if (!part_state_) part_state_ = std::make_unique<std::vector<PartState>>();
    part_state_->assign(nodes.size(), PartState{.left = parts_});
  } else if (part_state_) {
    part_state_.reset();
  }
  // (A round of several parts merges into the nodes' own outcomes.)
  if (!keep_outcomes_ && parts_ == 1) return;
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

namespace {
// An answer's outcome where the round keeps none, or a part's before it
// is merged: read by the caller before the next answer is parsed, on this
// thread.
NodeOutcome& fresh_scratch(std::size_t node) {
  thread_local NodeOutcome scratch;
  scratch.node = node;
  scratch.name.clear();
  scratch.status = NodeStatus::not_asked;
  scratch.latency = Microseconds(0);
  scratch.holder_ttl_ms = -1;
  scratch.permit = -1;
  scratch.fence_counter = 0;
  scratch.detail.clear();
  return scratch;
}
}  // namespace

NodeOutcome& QuorumRound::answer(std::size_t node, const NodeResponse& response) {
  const bool ran = response.kind == NodeResponse::Kind::reply || response.may_have_run;
  if (parts_ > 1) {
    part_ran_ = ran;
    return fresh_scratch(node);
  }
  if (!ran) unchanged(node);
  if (!keep_outcomes_) return fresh_scratch(0);
  return outcomes_[node];
}

NodeOutcome* QuorumRound::whole(std::size_t node, NodeOutcome& answered) {
  if (parts_ == 1) return &answered;
  PartState& state = (*part_state_)[node];
  if (state.left == 0) return nullptr;  // (every part counted already)
  NodeOutcome& merged = outcomes_[node];
  const NodeStatus status = answered.status;
  const bool refused = status == NodeStatus::busy || status == NodeStatus::recovering ||
                       status == NodeStatus::not_held;
  state.ran = state.ran || part_ran_;
  state.stored = state.stored || (part_ran_ && !refused);
  state.refused = state.refused || refused;
  merge_part(merged, answered, state.left == parts_);
  if (--state.left > 0) return nullptr;
  if (!state.ran) unchanged(node);
  return &merged;
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

namespace {
// How much a status outweighs a grant in a merged answer: a node's answer
// to several parts is as good as its worst part's.
int weight(NodeStatus status) noexcept {
  switch (status) {
    case NodeStatus::granted:
    case NodeStatus::extended:
    case NodeStatus::released:
      return 0;
    case NodeStatus::not_held:
      return 1;
    case NodeStatus::busy:
      return 2;
    case NodeStatus::replicas_short:
      return 3;
    case NodeStatus::permits_differ:
      return 4;
    case NodeStatus::recovering:
      return 5;
    case NodeStatus::error:
      return 6;
    case NodeStatus::timeout:
      return 7;
    case NodeStatus::unreachable:
      return 8;
    case NodeStatus::pending:
    case NodeStatus::not_asked:
      return 9;
  }
  return 9;
}
}  // namespace

void merge_part(NodeOutcome& whole, const NodeOutcome& part, bool first) {
  if (first) {
    const std::size_t node = whole.node;
    std::string name = std::move(whole.name);
    whole = part;
    whole.node = node;
    whole.name = std::move(name);
    return;
  }
  whole.latency = std::max(whole.latency, part.latency);
  whole.fence_counter = std::max(whole.fence_counter, part.fence_counter);
  const int was = weight(whole.status);
  const int is = weight(part.status);
  if (is > was) {
    whole.status = part.status;
    whole.detail = part.detail;
    whole.holder_ttl_ms = part.holder_ttl_ms;
    whole.permit = part.permit;
  } else if (is == was && part.status == NodeStatus::recovering) {
    // A part without its slot's marker (-1) outweighs one in its delay.
    whole.holder_ttl_ms = std::min(whole.holder_ttl_ms, part.holder_ttl_ms);
  }
}

}  // namespace redlock::detail
