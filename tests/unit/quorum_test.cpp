// Quorum decisions for N = 1..7: table tests over every order of votes that
// matters — the first moment a round is decided, and that it always settles.
#include "protocol/quorum.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protocol/same_server.hpp"
#include "redlock/error.hpp"

namespace redlock::detail {
namespace {

TEST(Majority, IsHalfPlusOne) {
  const std::vector<std::pair<std::size_t, std::size_t>> table = {{1, 1}, {2, 2}, {3, 2}, {4, 3},
                                                                  {5, 3}, {6, 4}, {7, 4}};
  for (auto [nodes, need] : table) EXPECT_EQ(majority(nodes), need) << "N=" << nodes;
}

// Applies votes ("y"/"n" characters) and returns the decision after each.
std::vector<Decision> replay(std::size_t nodes, const std::string& votes) {
  QuorumTally tally(nodes);
  std::vector<Decision> decisions;
  for (char vote : votes) {
    if (vote == 'y')
      tally.yes();
    else
      tally.no();
    decisions.push_back(tally.decision());
  }
  return decisions;
}

struct Case {
  std::size_t nodes;
  std::string votes;
  // Index of the vote after which the round is decided, and how.
  std::size_t decided_after;
  Decision outcome;
};

TEST(QuorumTally, DecidesAtTheFirstCertainVote) {
  const std::vector<Case> table = {
      {1, "y", 0, Decision::won},
      {1, "n", 0, Decision::lost},
      {2, "yy", 1, Decision::won},
      {2, "yn", 1, Decision::lost},
      {2, "n", 0, Decision::lost},  // one no out of two: a majority of 2 is impossible
      {3, "yy", 1, Decision::won},
      {3, "ynn", 2, Decision::lost},
      {3, "nyy", 2, Decision::won},
      {3, "nn", 1, Decision::lost},
      {4, "yyy", 2, Decision::won},
      {4, "yynn", 3, Decision::lost},  // 2-2 split settles as lost, never hangs
      {4, "nn", 1, Decision::lost},
      {4, "nyyy", 3, Decision::won},
      {5, "yyy", 2, Decision::won},
      {5, "nnn", 2, Decision::lost},
      {5, "ynyny", 4, Decision::won},
      {5, "nynyn", 4, Decision::lost},
      {7, "yyyy", 3, Decision::won},
      {7, "nnnn", 3, Decision::lost},
      {7, "yyynnny", 6, Decision::won},
      {7, "nnnyyyn", 6, Decision::lost},
  };
  for (const Case& c : table) {
    const auto decisions = replay(c.nodes, c.votes);
    for (std::size_t i = 0; i < decisions.size(); ++i) {
      const Decision expected = i < c.decided_after ? Decision::pending : c.outcome;
      EXPECT_EQ(decisions[i], expected)
          << "N=" << c.nodes << " votes=" << c.votes << " after vote " << i;
    }
  }
}

TEST(QuorumTally, EveryCompleteRoundSettles) {
  for (std::size_t nodes = 1; nodes <= 7; ++nodes) {
    for (unsigned mask = 0; mask < (1u << nodes); ++mask) {
      QuorumTally tally(nodes);
      for (std::size_t i = 0; i < nodes; ++i) {
        if (mask & (1u << i))
          tally.yes();
        else
          tally.no();
      }
      const bool won = tally.yes_count() >= majority(nodes);
      EXPECT_EQ(tally.decision(), won ? Decision::won : Decision::lost)
          << "N=" << nodes << " mask=" << mask;
      EXPECT_EQ(tally.pending(), 0u);
    }
  }
}

TEST(QuorumTally, NeverWinsAndLosesForTheSameVotes) {
  // Won requires yes >= N/2+1; lost requires no >= N - N/2; both together
  // would need more votes than nodes.
  for (std::size_t nodes = 1; nodes <= 7; ++nodes) {
    EXPECT_GT(majority(nodes) + (nodes - majority(nodes) + 1), nodes);
  }
}

TEST(FailureReason, BusyMajorityMeansNotAcquired) {
  EXPECT_EQ(acquire_failure_reason(5, 3), errc::not_acquired);
  EXPECT_EQ(acquire_failure_reason(5, 2), errc::no_quorum);
  EXPECT_EQ(acquire_failure_reason(4, 2), errc::not_acquired);  // 2 of 4 busy: 3 impossible
  EXPECT_EQ(acquire_failure_reason(3, 0), errc::no_quorum);
  EXPECT_EQ(acquire_failure_reason(1, 1), errc::not_acquired);
}

TEST(FailureReason, NotHeldMajorityMeansLost) {
  EXPECT_EQ(extend_failure_reason(5, 3), errc::lost);
  EXPECT_EQ(extend_failure_reason(5, 1), errc::no_quorum);
  EXPECT_EQ(extend_failure_reason(2, 1), errc::lost);
}

}  // namespace
}  // namespace redlock::detail

namespace redlock::detail {
namespace {

TEST(EarlierSameServer, NamesTheFirstEarlierNodeWithTheSameRunId) {
  const std::vector<std::string_view> run_ids{"a", "", "b", "a", "", "a", "b"};
  const std::vector<std::optional<std::size_t>> same = earlier_same_server(run_ids);
  const std::vector<std::optional<std::size_t>> expected{
      std::nullopt, std::nullopt, std::nullopt, 0, std::nullopt, 0, 2};
  EXPECT_EQ(same, expected);
}

TEST(MembersNotIndependent, OneClusterNamedTwiceSharesAMasterNodeId) {
  const std::vector<MemberServers> members{
      {true, {"r1", "r2"}, {"n1", "n2"}},
      {false, {"r9"}, {}},
      {true, {"r3", "r4"}, {"n3", "n2"}},
  };
  const std::vector<SharedMembers> found = members_not_independent(members);
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0].first, 0U);
  EXPECT_EQ(found[0].second, 2U);
  EXPECT_TRUE(found[0].same_cluster);
  EXPECT_EQ(found[0].shared, "n2");
}

TEST(MembersNotIndependent, AServerInAClusterAndInAnotherMemberIsShared) {
  const std::vector<MemberServers> members{
      {false, {"r1"}, {}},
      {true, {"r2", "r1"}, {"n1", "n2"}},
  };
  const std::vector<SharedMembers> found = members_not_independent(members);
  ASSERT_EQ(found.size(), 1U);
  EXPECT_FALSE(found[0].same_cluster);
  EXPECT_EQ(found[0].shared, "r1");
}

TEST(MembersNotIndependent, TwoSingleMembersAndUnknownIdsAreNotListed) {
  // Two single members on one server are earlier_same_server's (one
  // master, a warning); an unknown id matches nothing.
  const std::vector<MemberServers> members{
      {false, {"r1"}, {}},
      {false, {"r1"}, {}},
      {true, {"", "r2"}, {"", "n1"}},
      {true, {""}, {""}},
  };
  EXPECT_TRUE(members_not_independent(members).empty());
}

}  // namespace
}  // namespace redlock::detail
