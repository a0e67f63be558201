#include "protocol/permit_tally.hpp"

#include <algorithm>

namespace redlock::detail {

void PermitTally::reset(std::size_t nodes, std::uint32_t permits) {
  nodes_ = nodes;
  answered_ = 0;
  grants_ = 0;
  counts_.assign(permits, 0);
  best_count_ = 0;
  best_ = 0;
}

void PermitTally::grant(std::uint32_t permit) noexcept {
  ++answered_;
  if (permit >= counts_.size()) return;
  ++grants_;
  const std::size_t count = ++counts_[permit];
  if (count > best_count_) {
    best_count_ = count;
    best_ = permit;
  }
}

void PermitTally::refuse() noexcept { ++answered_; }

Decision PermitTally::decision() const noexcept {
  const std::size_t needed = majority(nodes_);
  if (best_count_ >= needed) return Decision::won;
  const std::size_t pending = nodes_ - std::min(answered_, nodes_);
  return best_count_ + pending < needed ? Decision::lost : Decision::pending;
}

std::optional<std::uint32_t> PermitTally::winner() const noexcept {
  if (decision() != Decision::won) return std::nullopt;
  return best_;
}

}  // namespace redlock::detail
