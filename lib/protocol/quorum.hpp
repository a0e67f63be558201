// Quorum decisions: pure functions over vote counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <system_error>

namespace redlock::detail {

// A majority of n nodes.
[[nodiscard]] constexpr std::size_t majority(std::size_t nodes) noexcept { return nodes / 2 + 1; }

enum class Decision { pending, won, lost };

// Counts the votes of one round (an acquire attempt, an extend). Decides as
// soon as the outcome is certain: won once a majority said yes, lost once so
// many said no that a majority can no longer be reached. With every node
// counted a round always settles, for odd and even N alike.
class QuorumTally {
 public:
  explicit QuorumTally(std::size_t nodes) noexcept : nodes_(static_cast<std::uint32_t>(nodes)) {}

  // Each node must be counted at most once per round.
  void yes() noexcept { ++yes_; }
  void no() noexcept { ++no_; }

  [[nodiscard]] Decision decision() const noexcept;
  [[nodiscard]] std::size_t yes_count() const noexcept { return yes_; }
  [[nodiscard]] std::size_t no_count() const noexcept { return no_; }
  [[nodiscard]] std::size_t pending() const noexcept { return nodes_ - yes_ - no_; }
  [[nodiscard]] std::size_t nodes() const noexcept { return nodes_; }

 private:
  // Narrow (a quorum has at most kMaxNodes): a tally is part of every held
  // lock's state.
  std::uint32_t nodes_;
  std::uint32_t yes_ = 0;
  std::uint32_t no_ = 0;
};

// Why a lost acquire round failed: not_acquired when the "busy" answers alone
// make a majority impossible (the lock is held elsewhere), no_quorum otherwise
// (failures and timeouts share the blame).
[[nodiscard]] std::error_code acquire_failure_reason(std::size_t nodes, std::size_t busy) noexcept;

// Why a lost extend round failed: lost when the "not held" answers alone make
// a majority impossible, no_quorum otherwise.
[[nodiscard]] std::error_code extend_failure_reason(std::size_t nodes,
                                                    std::size_t not_held) noexcept;

}  // namespace redlock::detail
