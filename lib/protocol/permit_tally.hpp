// The votes of one attempt at a semaphore permit (docs/algorithm.md,
// "Semaphores"): each node grants the first permit it has free, so the
// grants of one attempt may name different permits. The attempt holds
// permit j when a majority granted j — permit j is then an ordinary quorum
// lock, held by this attempt alone — and is lost once no permit can reach a
// majority with the nodes still to answer. Pure; reused from attempt to
// attempt without allocating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "protocol/quorum.hpp"

namespace redlock::detail {

class PermitTally {
 public:
  // Starts an attempt over `nodes` nodes and `permits` permits.
  void reset(std::size_t nodes, std::uint32_t permits);

  // One node's answer (each node once per attempt): it granted `permit`
  // (which must be below the permit count; any other answer is a refusal).
  void grant(std::uint32_t permit) noexcept;
  void refuse() noexcept;

  // Won once some permit has a majority of grants; lost once no permit can
  // reach one with the nodes that have not answered; pending otherwise.
  [[nodiscard]] Decision decision() const noexcept;
  // The permit a majority granted, once won.
  [[nodiscard]] std::optional<std::uint32_t> winner() const noexcept;
  // Grants of any permit so far.
  [[nodiscard]] std::size_t grants() const noexcept { return grants_; }

 private:
  std::size_t nodes_ = 0;
  std::size_t answered_ = 0;
  std::size_t grants_ = 0;
  std::vector<std::size_t> counts_;
  std::size_t best_count_ = 0;
  std::uint32_t best_ = 0;
};

}  // namespace redlock::detail
