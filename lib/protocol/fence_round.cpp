#include "protocol/fence_round.hpp"

#include <algorithm>

namespace redlock::detail {

void FenceRound::answer(const FenceAnswer& answer) noexcept {
  highest_seen_ = std::max(highest_seen_, answer.current);
  if (answer.stored && answer.current == proposal_) {
    tally_.yes();
    return;
  }
  if (answer.current >= proposal_) overtaken_ = true;
  tally_.no();
}

std::optional<std::uint64_t> first_proposal(std::uint64_t highest_counter) noexcept {
  if (highest_counter >= kMaxFenceToken) return std::nullopt;
  return highest_counter + 1;
}

std::optional<std::uint64_t> next_proposal(const FenceRound& lost, int rounds_done,
                                           int max_rounds) noexcept {
  // Without being overtaken, a lost round means too few nodes answered;
  // proposing again cannot help.
  if (!lost.overtaken() || rounds_done >= max_rounds) return std::nullopt;
  return first_proposal(std::max(lost.highest_seen(), lost.proposal()));
}

}  // namespace redlock::detail
