// Phase 2 of fenced acquires: the proposal logic, and a model of N nodes
// showing that two proposers of the same token never both succeed.
#include "protocol/fence_round.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace redlock::detail {
namespace {

TEST(FenceRound, MajorityOfStoresWins) {
  FenceRound round(5, 8);
  round.answer({true, 8});
  round.answer({true, 8});
  EXPECT_EQ(round.decision(), Decision::pending);
  round.answer({true, 8});
  EXPECT_EQ(round.decision(), Decision::won);
}

TEST(FenceRound, EchoingOurValueWithoutStoringIsNotAVote) {
  // A node that already holds 8 (another proposer's) answers {0, 8}.
  FenceRound round(3, 8);
  round.answer({false, 8});
  round.answer({false, 8});
  EXPECT_EQ(round.decision(), Decision::lost);
  EXPECT_TRUE(round.overtaken());
}

TEST(FenceRound, HigherCounterOvertakesAndSetsTheNextProposal) {
  FenceRound round(3, 8);
  round.answer({true, 8});
  round.answer({false, 12});
  round.answer({false, 11});
  EXPECT_EQ(round.decision(), Decision::lost);
  EXPECT_EQ(round.highest_seen(), 12u);
  EXPECT_EQ(next_proposal(round, 1, 3), std::optional<std::uint64_t>(13));
  EXPECT_EQ(next_proposal(round, 3, 3), std::nullopt) << "bounded re-proposals";
}

TEST(FenceRound, LostForLackOfAnswersIsNotRetried) {
  FenceRound round(3, 5);
  round.answer({true, 5});
  round.no_answer();
  round.no_answer();
  EXPECT_EQ(round.decision(), Decision::lost);
  EXPECT_FALSE(round.overtaken());
  EXPECT_EQ(next_proposal(round, 1, 3), std::nullopt);
}

TEST(FenceRound, TokensStayBelowTwoToThe53) {
  EXPECT_EQ(first_proposal(0), std::optional<std::uint64_t>(1));
  EXPECT_EQ(first_proposal(kMaxFenceToken - 1), std::optional<std::uint64_t>(kMaxFenceToken));
  EXPECT_EQ(first_proposal(kMaxFenceToken), std::nullopt);
}

// A node of the model: the fence script's rule.
struct ModelNode {
  std::uint64_t counter = 0;
  FenceAnswer propose(std::uint64_t value) {
    if (counter < value) {
      counter = value;
      return {true, value};
    }
    return {false, counter};
  }
};

TEST(FenceRoundModel, TwoProposersOfTheSameTokenNeverBothWin) {
  // Every node sees both proposals, in either order (bit i of `order`), and
  // any node may lose either reply (bits of `lost_a` / `lost_b`).
  for (std::size_t nodes : {1u, 2u, 3u, 4u, 5u, 7u}) {
    const unsigned combos = 1u << nodes;
    for (unsigned order = 0; order < combos; ++order) {
      for (unsigned lost_a = 0; lost_a < combos; ++lost_a) {
        for (unsigned lost_b = 0; lost_b < combos; lost_b += (nodes > 4 ? 3 : 1)) {
          std::vector<ModelNode> cluster(nodes);
          FenceRound a(nodes, 8);
          FenceRound b(nodes, 8);
          for (std::size_t i = 0; i < nodes; ++i) {
            const bool a_first = (order >> i & 1u) == 0;
            const FenceAnswer first = cluster[i].propose(8);
            const FenceAnswer second = cluster[i].propose(8);
            const FenceAnswer& to_a = a_first ? first : second;
            const FenceAnswer& to_b = a_first ? second : first;
            if ((lost_a >> i & 1u) != 0)
              a.no_answer();
            else
              a.answer(to_a);
            if ((lost_b >> i & 1u) != 0)
              b.no_answer();
            else
              b.answer(to_b);
          }
          ASSERT_FALSE(a.decision() == Decision::won && b.decision() == Decision::won)
              << "N=" << nodes << " order=" << order;
        }
      }
    }
  }
}

TEST(FenceRoundModel, LaterProposalAfterAFinishedOneIsHigher) {
  // A's round finished on a majority; B reads counters from any majority
  // (they intersect A's), so B's first proposal exceeds A's token.
  constexpr std::size_t kNodes = 5;
  for (unsigned a_majority = 0; a_majority < (1u << kNodes); ++a_majority) {
    if (__builtin_popcount(a_majority) < 3) continue;
    for (unsigned b_majority = 0; b_majority < (1u << kNodes); ++b_majority) {
      if (__builtin_popcount(b_majority) < 3) continue;
      std::vector<ModelNode> cluster(kNodes);
      for (std::size_t i = 0; i < kNodes; ++i) cluster[i].counter = 4;
      for (std::size_t i = 0; i < kNodes; ++i) {
        if ((a_majority >> i & 1u) != 0) (void)cluster[i].propose(5);  // A's token 5
      }
      std::uint64_t highest = 0;
      for (std::size_t i = 0; i < kNodes; ++i) {
        if ((b_majority >> i & 1u) != 0) highest = std::max(highest, cluster[i].counter);
      }
      ASSERT_GT(*first_proposal(highest), 5u);
    }
  }
}

}  // namespace
}  // namespace redlock::detail
