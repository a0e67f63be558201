// The amnesia defence's decision: initialise a brand-new quorum, recover a
// node that lost its data from enough marked nodes, or wait.
#include "protocol/recovery_plan.hpp"

#include <gtest/gtest.h>

namespace redlock::detail {
namespace {

NodeProbe marked(FenceEntries fence = {}, bool locks = false) {
  NodeProbe probe;
  probe.answered = true;
  probe.marked = true;
  probe.has_locks = locks;
  probe.fence = std::move(fence);
  return probe;
}
NodeProbe blank() {
  NodeProbe probe;
  probe.answered = true;
  return probe;
}
NodeProbe silent() { return NodeProbe{}; }

// A node whose only data is a lock key, no marker anywhere: it may hold a
// lock some client still uses, so this is never a brand-new quorum.
TEST(RecoveryPlan, LockKeysAloneAreNeverTakenForABrandNewQuorum) {
  NodeProbe with_locks = blank();
  with_locks.has_locks = true;
  const auto plan = plan_recovery({blank(), with_locks, blank()});
  EXPECT_EQ(plan.action, RecoveryAction::recover);
  EXPECT_TRUE(plan.delayed);
}

TEST(RecoveryPlan, AllMarkedNeedsNothing) {
  const auto plan = plan_recovery({marked(), marked(), silent()});
  EXPECT_EQ(plan.action, RecoveryAction::none);
  EXPECT_TRUE(plan.targets.empty());
}

TEST(RecoveryPlan, BrandNewQuorumIsInitialisedWithoutDelay) {
  const auto plan = plan_recovery({blank(), blank(), blank(), blank(), blank()});
  EXPECT_EQ(plan.action, RecoveryAction::initialise);
  EXPECT_FALSE(plan.delayed);
  EXPECT_EQ(plan.targets.size(), 5u);
}

TEST(RecoveryPlan, BrandNewNeedsEveryNodeToAnswer) {
  EXPECT_EQ(plan_recovery({blank(), blank(), blank()}).action, RecoveryAction::initialise);
  EXPECT_EQ(plan_recovery({blank()}).action, RecoveryAction::initialise);  // N = 1
  EXPECT_EQ(plan_recovery({blank(), silent(), silent()}).action, RecoveryAction::wait);
}

TEST(RecoveryPlan, EmptyNodesWithOneSilentAreRecoveredWithTheDelay) {
  // A majority that lost its data while the third node is unreachable looks
  // exactly like a brand-new quorum with one node down: only the delay is
  // safe for both.
  const auto plan = plan_recovery({blank(), blank(), silent()});
  EXPECT_EQ(plan.action, RecoveryAction::recover);
  EXPECT_TRUE(plan.delayed);
  EXPECT_EQ(plan.targets, (std::vector<std::size_t>{0, 1}));
  EXPECT_TRUE(plan.merged_fence.empty());
  EXPECT_NE(plan.reason.find("only 2 of 3 answered"), std::string::npos) << plan.reason;
}

TEST(RecoveryPlan, AmnesiacNodeIsRecoveredWithMergedCountersAndADelay) {
  const auto plan = plan_recovery({marked({{"a", 7}, {"b", 2}}), marked({{"a", 9}}), blank(),
                                   marked({{"b", 4}, {"c", 1}}), silent()});
  EXPECT_EQ(plan.action, RecoveryAction::recover);
  EXPECT_TRUE(plan.delayed);
  EXPECT_EQ(plan.targets, (std::vector<std::size_t>{2}));
  EXPECT_EQ(plan.merged_fence, (FenceEntries{{"a", 9}, {"b", 4}, {"c", 1}}));
}

TEST(RecoveryPlan, TooFewMarkedSourcesMeansWait) {
  // N = 5 needs 3 marked nodes besides the amnesiac ones.
  const auto plan = plan_recovery({marked({{"a", 7}}), marked(), blank(), silent(), silent()});
  EXPECT_EQ(plan.action, RecoveryAction::wait);
  EXPECT_TRUE(plan.targets.empty());
  EXPECT_NE(plan.reason.find("3"), std::string::npos) << plan.reason;
}

TEST(RecoveryPlan, SourcesNeededIntersectEveryWriteMajority) {
  EXPECT_EQ(recovery_sources_needed(1), 1u);
  EXPECT_EQ(recovery_sources_needed(2), 1u);
  EXPECT_EQ(recovery_sources_needed(3), 2u);
  EXPECT_EQ(recovery_sources_needed(4), 2u);
  EXPECT_EQ(recovery_sources_needed(5), 3u);
  EXPECT_EQ(recovery_sources_needed(7), 4u);
}

TEST(RecoveryPlan, DataWithoutAnyMarkerIsRecoveredConservatively) {
  // Lock keys but no markers: never taken for a brand-new quorum.
  NodeProbe with_lock = blank();
  with_lock.has_locks = true;
  NodeProbe with_fence = blank();
  with_fence.fence = {{"x", 3}};
  const auto plan = plan_recovery({with_lock, blank(), with_fence});
  EXPECT_EQ(plan.action, RecoveryAction::recover);
  EXPECT_TRUE(plan.delayed);
  EXPECT_EQ(plan.targets.size(), 3u);
  EXPECT_EQ(plan.merged_fence, (FenceEntries{{"x", 3}}));
}

TEST(RecoveryPlan, SeveralAmnesiacNodesRecoverTogether) {
  const auto plan =
      plan_recovery({marked({{"r", 5}}), marked({{"r", 6}}), blank(), blank(), marked({{"r", 6}})});
  EXPECT_EQ(plan.action, RecoveryAction::recover);
  EXPECT_EQ(plan.targets, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(plan.merged_fence, (FenceEntries{{"r", 6}}));
}

// A node recovered with a delay takes the others' counters once more when
// its delay is over, from nodes that need no second merge themselves: the
// first merge cannot have seen a token a round in flight at its crash won
// with its answer from before the crash.
NodeProbe unmerged(FenceEntries fence, bool recovering) {
  NodeProbe probe = marked(std::move(fence));
  probe.unmerged = true;
  probe.recovering = recovering;
  return probe;
}

TEST(RecoveryPlan, ARecoveredNodeIsMergedAgainOnceItsDelayIsOver) {
  const auto plan = plan_recovery(
      {unmerged({{"doc", 1}}, false), marked({{"doc", 11}}), marked({{"doc", 1}, {"other", 4}})});
  EXPECT_EQ(plan.action, RecoveryAction::remerge);
  EXPECT_EQ(plan.targets, (std::vector<std::size_t>{0}));
  EXPECT_EQ(plan.merged_fence, (FenceEntries{{"doc", 11}, {"other", 4}}));
}

TEST(RecoveryPlan, NoSecondMergeWhileTheDelayLasts) {
  const auto plan =
      plan_recovery({unmerged({{"doc", 1}}, true), marked({{"doc", 11}}), marked({{"doc", 1}})});
  EXPECT_EQ(plan.action, RecoveryAction::none);
  EXPECT_TRUE(plan.targets.empty());
}

TEST(RecoveryPlan, TheSecondMergeWaitsForEnoughNodesThatNeedNone) {
  // N = 3 needs two sources; the other unmerged node is none, a silent one
  // neither.
  EXPECT_EQ(plan_recovery({unmerged({}, false), silent(), marked({{"doc", 1}})}).action,
            RecoveryAction::wait);
  const auto plan =
      plan_recovery({unmerged({}, false), unmerged({{"doc", 9}}, false), marked({{"doc", 1}})});
  EXPECT_EQ(plan.action, RecoveryAction::wait);
  EXPECT_TRUE(plan.targets.empty());
}

TEST(RecoveryPlan, AnUnmarkedNodeIsRecoveredBeforeAnySecondMerge) {
  const auto plan = plan_recovery({unmerged({{"doc", 1}}, false), blank(), marked({{"doc", 11}})});
  EXPECT_EQ(plan.action, RecoveryAction::recover);
  EXPECT_EQ(plan.targets, (std::vector<std::size_t>{1}));
}

}  // namespace
}  // namespace redlock::detail
