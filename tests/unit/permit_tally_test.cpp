// The votes of a semaphore attempt: a permit is won only by a majority of
// grants of that permit, whatever the grants of others.
#include "protocol/permit_tally.hpp"

#include <gtest/gtest.h>

namespace redlock::detail {
namespace {

TEST(PermitTally, AMajorityOfOnePermitWins) {
  PermitTally tally;
  tally.reset(5, 3);
  tally.grant(1);
  tally.grant(1);
  EXPECT_EQ(tally.decision(), Decision::pending);
  tally.grant(1);
  EXPECT_EQ(tally.decision(), Decision::won);
  EXPECT_EQ(tally.winner(), 1u);
}

TEST(PermitTally, GrantsSplitOverPermitsLoseOnceNoneCanReachAMajority) {
  // The split a per-node counter would count as three holders of two
  // permits: no permit has three grants of five.
  PermitTally tally;
  tally.reset(5, 2);
  tally.grant(0);
  tally.grant(0);
  tally.refuse();
  tally.grant(1);
  EXPECT_EQ(tally.decision(), Decision::pending) << "the last node could make 0 a majority";
  tally.grant(1);
  EXPECT_EQ(tally.decision(), Decision::lost);
  EXPECT_EQ(tally.winner(), std::nullopt);
  EXPECT_EQ(tally.grants(), 4u);
}

TEST(PermitTally, LosesEarlyWhenTheRemainingNodesCannotHelp) {
  PermitTally tally;
  tally.reset(3, 4);
  tally.grant(0);
  tally.grant(2);
  EXPECT_EQ(tally.decision(), Decision::pending);
  tally.refuse();
  EXPECT_EQ(tally.decision(), Decision::lost);
}

TEST(PermitTally, APermitBeyondTheCountIsARefusal) {
  PermitTally tally;
  tally.reset(3, 2);
  tally.grant(2);
  tally.grant(2);
  tally.grant(2);
  EXPECT_EQ(tally.decision(), Decision::lost);
  EXPECT_EQ(tally.grants(), 0u);
}

TEST(PermitTally, ResetForgetsThePreviousAttempt) {
  PermitTally tally;
  tally.reset(3, 2);
  tally.grant(0);
  tally.grant(0);
  ASSERT_EQ(tally.decision(), Decision::won);
  tally.reset(3, 2);
  EXPECT_EQ(tally.decision(), Decision::pending);
  EXPECT_EQ(tally.grants(), 0u);
}

}  // namespace
}  // namespace redlock::detail
