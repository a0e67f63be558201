// One quorum round: a request to every node, what each node answered with
// its latency, the votes, and the rules every operation shares
// (docs/engine.md, "The quorum round"):
//
//   * an answer counts only for the round it was sent in, and only once: a
//     late answer (after its timeout was counted) or one to an older round
//     never changes a decision;
//   * the round is decided at the deciding answer (a majority of yes, or so
//     many no that a majority is out of reach), never later;
//   * a round decided at or after its lock's deadline is lost, whatever the
//     votes (RoundTiming, decided by the operation's pure verdict);
//   * which nodes may hold something the round's request did, for the
//     cleanup of a failed round: every node but those whose answer proves
//     nothing changed there (busy, recovering) or whose request provably
//     never left this client (NodeResponse::may_have_run).
//
// Acquire, extend, release, fence and a guard's renewals each run their
// rounds on one of these; what they add is their script, how an answer
// votes, and their verdict. Loop thread only; a value member of its
// operation, reused from round to round without allocating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "protocol/quorum.hpp"
#include "protocol/validity.hpp"
#include "redlock/config.hpp"
#include "redlock/outcome.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

// Tag for requests whose answers an operation does not wait for (the unlock
// of a failed attempt). Round tags never take it.
inline constexpr std::uint32_t kCleanupTag = 0xffffffffu;

class QuorumRound {
 public:
  // `tag_bit` (0 or 0x80000000) is or-ed into every tag, so that two kinds
  // of rounds of one operation (an acquire's votes and its fencing) never
  // take each other's answers. `keep_outcomes`: record every node's NodeOutcome (for the
  // result handed to the user); without it outcome() is a scratch value.
  explicit QuorumRound(std::uint32_t tag_bit = 0, bool keep_outcomes = true) noexcept
      : tag_bit_(tag_bit), keep_outcomes_(keep_outcomes) {}

  // Opens the next round over `nodes`: a fresh tag, every node pending (by
  // name, in configuration order), no votes. `started` is t0, read before
  // the first request is queued; `deadline` the deadline of the lock the
  // round acts on (TimePoint::max() for none).
  // `parts`: how many calls the round's request to each node is (a set
  // whose resources are in several hash slots of a cluster member is one
  // call per slot, slot_parts.hpp); a node's answer is then counted once
  // every part's has come (whole()).
  void open(const std::vector<NodeConfig>& nodes, TimePoint started,
            TimePoint deadline = TimePoint::max(), std::uint32_t parts = 1);

  // Starts keeping every node's outcome from the next open() on (a guard
  // that reports its loss node by node).
  void keep_outcomes() noexcept { keep_outcomes_ = true; }

  [[nodiscard]] std::uint32_t tag() const noexcept { return tag_; }
  [[nodiscard]] std::uint32_t parts() const noexcept { return parts_; }
  [[nodiscard]] bool is_open() const noexcept { return open_; }
  [[nodiscard]] TimePoint started() const noexcept { return started_; }
  [[nodiscard]] TimePoint deadline() const noexcept { return deadline_; }

  // Whether `response`, to a request sent with `tag`, is an answer this
  // round counts: the round is open, the tag is its own, and the answer is
  // not late.
  [[nodiscard]] bool counts(std::uint32_t tag, const NodeResponse& response) const noexcept {
    return open_ && tag == tag_ && !response.late;
  }

  // Takes in a counted answer before the operation parses it: remembers a
  // request that provably never left (nothing to clean up there). Returns
  // the node's outcome, for the operation's parser to fill; in a round of
  // several parts, the part's own outcome, which whole() then merges.
  NodeOutcome& answer(std::size_t node, const NodeResponse& response);
  // After the operation parsed a counted answer into `answered`, answer()'s
  // outcome: the node's outcome to count, or null while some part of the
  // node's request is still unanswered. One part: `answered` itself.
  // Several: their merge (merge_part), and the node is unchanged only when
  // every part's request provably never left.
  [[nodiscard]] NodeOutcome* whole(std::size_t node, NodeOutcome& answered);
  // In a round of several parts (kept after the round closed, for its late
  // answers): whether some part of the node's request may have stored
  // something there (it may have run, and its answer is not a refusal:
  // busy, recovering, not held) — undone before a refusal of the whole
  // counts; and whether some part was refused so, which makes the node no
  // holder of the whole whatever its other parts say.
  [[nodiscard]] bool some_part_stored(std::size_t node) const noexcept {
    return part_state_ && node < part_state_->size() && (*part_state_)[node].stored;
  }
  [[nodiscard]] bool some_part_refused(std::size_t node) const noexcept {
    return part_state_ && node < part_state_->size() && (*part_state_)[node].refused;
  }
  // The node's answer proves its request changed nothing there (a busy or
  // recovering answer to an acquire).
  void unchanged(std::size_t node) noexcept;

  // Counts the node's vote (each node once per round) and returns the
  // decision so far.
  Decision vote(bool yes) noexcept;
  [[nodiscard]] Decision decision() const noexcept { return votes_.decision(); }
  [[nodiscard]] const QuorumTally& votes() const noexcept { return votes_; }

  // Closes the round at `now` (the moment of its deciding answer, or of its
  // cancellation): later answers no longer count. Returns its timing, for
  // the operation's verdict.
  RoundTiming close(TimePoint now) noexcept;

  // Whether the round's request may have changed something on `node`: it
  // may have run there, and no answer proved otherwise.
  [[nodiscard]] bool may_have_changed(std::size_t node) const noexcept;

  [[nodiscard]] std::vector<NodeOutcome>& outcomes() noexcept { return outcomes_; }
  [[nodiscard]] std::vector<NodeOutcome> take_outcomes() noexcept { return std::move(outcomes_); }

 private:
  std::uint32_t tag_bit_;
  std::uint32_t tag_ = 0;
  bool keep_outcomes_;
  bool open_ = false;
  TimePoint started_{};
  TimePoint deadline_ = TimePoint::max();
  QuorumTally votes_{0};
  // Which nodes' answers proved nothing changed there: the first 64 nodes
  // in bits, any further ones in the vector (none, so allocating nothing,
  // for every quorum of up to 64 nodes). A round is a member of every held
  // lock's state, so it stays small; a round without outcomes parses each
  // answer into one scratch outcome per thread rather than one of its own.
  std::uint64_t unchanged_low_ = 0;
  std::unique_ptr<std::vector<bool>> unchanged_high_;
  std::vector<NodeOutcome> outcomes_;
  // Rounds of several parts only (none otherwise, so that a guard's round
  // stays small): per node, the parts still unanswered and what the
  // answered ones showed; and whether the part answer() took last may
  // have run (read by whole()).
  struct PartState {
    std::uint32_t left = 0;
    bool ran = false;
    bool stored = false;
    bool refused = false;
  };
  std::uint32_t parts_ = 1;
  bool part_ran_ = false;
  std::unique_ptr<std::vector<PartState>> part_state_;
};

// Merges one part's answer into a node's answer to a request of several
// parts: the node's status is its worst part's (a refusal, a timeout or an
// error of any part outweighs every grant), with that part's detail; the
// fence counter and latency are the highest of any part. `first`: the
// node's first part (copied).
void merge_part(NodeOutcome& whole, const NodeOutcome& part, bool first);

}  // namespace redlock::detail
