// Each kind's tally of an acquire attempt (protocol/attempt_tally.hpp):
// when it is won, lost or pending, and what a lost one tells the retry.
#include "protocol/attempt_tally.hpp"

#include <gtest/gtest.h>

#include "kinds/kind.hpp"

namespace redlock::detail {
namespace {

TEST(AttemptTally, OneKeyIsWonByAMajorityOfGrants) {
  auto tally = one_key_tally();
  tally->reset(5);
  tally->grant(-1);
  tally->grant(-1);
  EXPECT_EQ(tally->decision(), Decision::pending);
  tally->refuse();
  tally->grant(-1);
  EXPECT_EQ(tally->decision(), Decision::won);
  EXPECT_EQ(tally->winner(), 0U);
}

TEST(AttemptTally, OneKeyLostWithGrantsAndHeldNodesIsASplit) {
  auto tally = one_key_tally();
  tally->reset(3);
  tally->grant(-1);
  tally->refuse();
  tally->refuse();
  EXPECT_EQ(tally->decision(), Decision::lost);
  EXPECT_TRUE(tally->split(1)) << "a grant here, a rival's there";
  EXPECT_FALSE(tally->split(0)) << "no rival: failures, not a split";
  EXPECT_EQ(tally->held_elsewhere(2), 2U);
  EXPECT_FALSE(tally->conflicted());
}

TEST(AttemptTally, PermitsAreWonOnlyByAMajorityOfOnePermit) {
  auto tally = permit_tally(3);
  tally->reset(3);
  tally->grant(0);
  tally->grant(1);
  EXPECT_EQ(tally->decision(), Decision::pending);
  tally->grant(1);
  EXPECT_EQ(tally->decision(), Decision::won);
  EXPECT_EQ(tally->winner(), 1U);
}

TEST(AttemptTally, GrantsOfDifferentPermitsSplitTheNodesAsARivalDoes) {
  auto tally = permit_tally(3);
  tally->reset(3);
  tally->grant(0);
  tally->grant(1);
  tally->grant(2);
  EXPECT_EQ(tally->decision(), Decision::lost);
  EXPECT_TRUE(tally->split(0));
  // The three grants count as nodes held elsewhere, beside the busy ones.
  EXPECT_EQ(tally->held_elsewhere(0), 3U);
}

TEST(AttemptTally, APermitOutsideTheCountIsARefusal) {
  auto tally = permit_tally(2);
  tally->reset(3);
  tally->grant(5);
  tally->grant(-1);
  EXPECT_EQ(tally->decision(), Decision::lost);
  EXPECT_FALSE(tally->split(0));
}

TEST(AttemptTally, AConflictLosesAtOnceUntilTheNextAttempt) {
  auto tally = permit_tally(2);
  tally->reset(5);
  tally->grant(0);
  tally->conflict();
  EXPECT_EQ(tally->decision(), Decision::lost);
  EXPECT_TRUE(tally->conflicted());
  EXPECT_FALSE(tally->split(0)) << "another count is no rival";
  tally->reset(5);
  EXPECT_FALSE(tally->conflicted());
  EXPECT_EQ(tally->decision(), Decision::pending);
}

TEST(AttemptTally, EachKindHasItsTally) {
  Lock permit{Resource("s"), LockValue("v"), Milliseconds(1000), {}, {}, std::nullopt};
  permit.kind = LockKind::permit;
  permit.permit = 0;
  permit.permits = 2;
  auto semaphore = rules_of(LockKind::permit).attempt_tally(permit);
  semaphore->reset(3);
  semaphore->grant(0);
  semaphore->grant(1);
  semaphore->grant(0);
  EXPECT_EQ(semaphore->decision(), Decision::won);
  EXPECT_EQ(semaphore->winner(), 0U);
  Lock mutex{Resource("m"), LockValue("v"), Milliseconds(1000), {}, {}, std::nullopt};
  auto key = rules_of(LockKind::mutex).attempt_tally(mutex);
  key->reset(3);
  key->grant(0);
  key->grant(1);
  EXPECT_EQ(key->decision(), Decision::won) << "any two grants of its one key";
}

}  // namespace
}  // namespace redlock::detail
