// Phase 2 of a fenced acquire (docs/algorithm.md, "Fenced acquire"): an ABD-style majority
// max-register. Pure logic; the operation sends and counts.
//
// The proposer offers T = M + 1, where M is the highest counter its granting
// majority reported. Each node stores T only if its counter is strictly
// smaller, and says whether it did. T is the token once a majority stored
// it. Because a node stores a given value at most once, two proposers of the
// same T can never both collect a majority.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "protocol/quorum.hpp"

namespace redlock::detail {

// Tokens stay below 2^53: Lua numbers on the node are doubles.
inline constexpr std::uint64_t kMaxFenceToken = (std::uint64_t{1} << 53) - 1;

// The proposal rounds one fenced acquire tries before fencing_failed.
inline constexpr int kMaxFenceRounds = 3;

// One node's answer to a proposal.
struct FenceAnswer {
  bool stored = false;        // the node took our value
  std::uint64_t current = 0;  // the node's counter after the call
};

class FenceRound {
 public:
  FenceRound(std::size_t nodes, std::uint64_t proposal) noexcept
      : tally_(nodes), proposal_(proposal) {}

  void answer(const FenceAnswer& answer) noexcept;
  // A node that timed out, failed or was unreachable.
  void no_answer() noexcept { tally_.no(); }

  [[nodiscard]] Decision decision() const noexcept { return tally_.decision(); }
  [[nodiscard]] std::uint64_t proposal() const noexcept { return proposal_; }
  // The highest counter any node reported (including our own proposal when
  // a node stored it).
  [[nodiscard]] std::uint64_t highest_seen() const noexcept { return highest_seen_; }
  // Some node holds a counter at least as high as our proposal that is not
  // ours: a newer (or concurrent) acquisition exists.
  [[nodiscard]] bool overtaken() const noexcept { return overtaken_; }

 private:
  QuorumTally tally_;
  std::uint64_t proposal_;
  std::uint64_t highest_seen_ = 0;
  bool overtaken_ = false;
};

// The first proposal: one more than the highest counter of the granting
// nodes. nullopt when that would pass kMaxFenceToken.
[[nodiscard]] std::optional<std::uint64_t> first_proposal(std::uint64_t highest_counter) noexcept;

// After a lost round: propose again above everything seen, if tries remain
// (`rounds_done` counts rounds so far) and the token stays in range.
[[nodiscard]] std::optional<std::uint64_t> next_proposal(const FenceRound& lost, int rounds_done,
                                                         int max_rounds) noexcept;

}  // namespace redlock::detail
