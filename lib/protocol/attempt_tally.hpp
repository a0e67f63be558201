// How one acquire attempt's answers decide it, as its lock kind counts
// them (docs/engine.md, "Lock kinds"): each kind's rules
// (kinds/kind.hpp, KindRules::attempt_tally) hand its acquire one of
// these, and the acquire asks it alone whether the attempt is won, lost or
// pending, and why a lost one was lost. Pure; reused from attempt to
// attempt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "protocol/quorum.hpp"

namespace redlock::detail {

class AttemptTally {
 public:
  AttemptTally() = default;
  AttemptTally(const AttemptTally&) = delete;
  AttemptTally& operator=(const AttemptTally&) = delete;
  virtual ~AttemptTally() = default;

  // Starts an attempt over `nodes` nodes.
  virtual void reset(std::size_t nodes) = 0;
  // One node's answer, each node once per attempt: a grant (naming the
  // permit it granted, or -1 where the kind has none), a refusal of any
  // kind, or a conflict — a node that records another permit count, which
  // loses this attempt and every retry.
  virtual void grant(std::int64_t permit) noexcept = 0;
  virtual void refuse() noexcept = 0;
  virtual void conflict() noexcept = 0;

  [[nodiscard]] virtual Decision decision() const noexcept = 0;
  // Lost by a conflict: retrying cannot change it.
  [[nodiscard]] virtual bool conflicted() const noexcept = 0;
  // Of a lost attempt that met `busy` nodes held by others: whether its
  // grants and the others split the nodes (a rival racing for the same
  // majority: the retry pauses less), and how many nodes count as held
  // by others for the failure's reason (acquire_failure_reason).
  [[nodiscard]] virtual bool split(std::size_t busy) const noexcept = 0;
  [[nodiscard]] virtual std::size_t held_elsewhere(std::size_t busy) const noexcept = 0;
  // Of a won attempt: the permit won (0 where the kind has none).
  [[nodiscard]] virtual std::uint32_t winner() const noexcept = 0;
};

// One key, or one set of keys granted together: won by a majority of
// grants (QuorumTally).
[[nodiscard]] std::unique_ptr<AttemptTally> one_key_tally();
// A semaphore of `permits` permits: won when a majority granted one same
// permit (PermitTally); grants of different permits split the nodes as a
// rival does.
[[nodiscard]] std::unique_ptr<AttemptTally> permit_tally(std::uint32_t permits);

}  // namespace redlock::detail
