// The rules every operation's round shares, without a network: which
// answers count, when it is decided, its timing against the lock's
// deadline, and which nodes a failed round must clean up.
#include "operations/quorum_round.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <vector>

namespace redlock::detail {
namespace {

using std::chrono::milliseconds;

const TimePoint kRoundT0 = TimePoint(std::chrono::seconds(1000));

std::vector<NodeConfig> nodes(std::size_t count) {
  std::vector<NodeConfig> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i].name = "n" + std::to_string(i);
  return out;
}

NodeResponse reply() { return NodeResponse{}; }

NodeResponse timeout(bool may_have_run) {
  NodeResponse response;
  response.kind = NodeResponse::Kind::timeout;
  response.may_have_run = may_have_run;
  return response;
}

TEST(QuorumRound, EveryNodeStartsPendingUnderItsName) {
  QuorumRound round;
  round.open(nodes(3), kRoundT0);
  ASSERT_EQ(round.outcomes().size(), 3U);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(round.outcomes()[i].node, i);
    EXPECT_EQ(round.outcomes()[i].name, "n" + std::to_string(i));
    EXPECT_EQ(round.outcomes()[i].status, NodeStatus::pending);
  }
}

TEST(QuorumRound, CountsOnlyItsOwnTimelyAnswersWhileOpen) {
  QuorumRound round;
  round.open(nodes(3), kRoundT0);
  const std::uint32_t first = round.tag();
  EXPECT_TRUE(round.counts(first, reply()));
  NodeResponse late = reply();
  late.late = true;
  EXPECT_FALSE(round.counts(first, late));
  round.open(nodes(3), kRoundT0);
  EXPECT_NE(round.tag(), first);
  EXPECT_FALSE(round.counts(first, reply())) << "an older round's answer";
  (void)round.close(kRoundT0);
  EXPECT_FALSE(round.counts(round.tag(), reply())) << "after the decision";
}

TEST(QuorumRound, TagsOfTwoKindsOfRoundsNeverMeetAndNeverTakeTheCleanupTag) {
  QuorumRound attempts;
  QuorumRound proposals(0x80000000u);
  std::set<std::uint32_t> seen;
  for (int i = 0; i < 1000; ++i) {
    attempts.open(nodes(1), kRoundT0);
    proposals.open(nodes(1), kRoundT0);
    EXPECT_TRUE(seen.insert(attempts.tag()).second);
    EXPECT_TRUE(seen.insert(proposals.tag()).second);
    EXPECT_EQ(attempts.tag() & 0x80000000u, 0U);
    EXPECT_NE(proposals.tag() & 0x80000000u, 0U);
  }
  EXPECT_EQ(seen.count(kCleanupTag), 0U);
}

TEST(QuorumRound, IsDecidedAtTheDecidingVote) {
  QuorumRound round;
  round.open(nodes(5), kRoundT0);
  EXPECT_EQ(round.vote(true), Decision::pending);
  EXPECT_EQ(round.vote(false), Decision::pending);
  EXPECT_EQ(round.vote(true), Decision::pending);
  EXPECT_EQ(round.vote(true), Decision::won);
  QuorumRound refused;
  refused.open(nodes(5), kRoundT0);
  EXPECT_EQ(refused.vote(false), Decision::pending);
  EXPECT_EQ(refused.vote(false), Decision::pending);
  EXPECT_EQ(refused.vote(false), Decision::lost);
}

TEST(QuorumRound, ItsTimingCarriesTheLocksDeadline) {
  QuorumRound round;
  round.open(nodes(3), kRoundT0, kRoundT0 + milliseconds(40));
  const RoundTiming timing = round.close(kRoundT0 + milliseconds(42));
  EXPECT_EQ(timing.started, kRoundT0);
  EXPECT_EQ(timing.elapsed(), milliseconds(42));
  EXPECT_FALSE(timing.decided_in_time());
  QuorumRound acquire;
  acquire.open(nodes(3), kRoundT0);
  EXPECT_TRUE(acquire.close(kRoundT0 + std::chrono::hours(1)).decided_in_time())
      << "no lock, no deadline";
}

TEST(QuorumRound, CleanupSkipsNodesItsRequestNeverReachedOrProvablyLeftAlone) {
  QuorumRound round;
  round.open(nodes(4), kRoundT0);
  (void)round.answer(0, reply());         // a grant, say
  (void)round.answer(1, timeout(true));   // written, unanswered: may have run
  (void)round.answer(2, timeout(false));  // never left this client
  (void)round.answer(3, reply());
  round.unchanged(3);  // a busy answer
  EXPECT_TRUE(round.may_have_changed(0));
  EXPECT_TRUE(round.may_have_changed(1));
  EXPECT_FALSE(round.may_have_changed(2));
  EXPECT_FALSE(round.may_have_changed(3));
  round.open(nodes(4), kRoundT0);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(round.may_have_changed(i)) << "a new round";
}

TEST(QuorumRound, CleanupMarksHoldBeyondTheSixtyFourthNode) {
  QuorumRound round;
  round.open(nodes(130), kRoundT0);
  round.unchanged(63);
  round.unchanged(64);
  (void)round.answer(129, timeout(false));
  for (std::size_t i = 0; i < 130; ++i) {
    EXPECT_EQ(round.may_have_changed(i), i != 63 && i != 64 && i != 129) << i;
  }
  round.open(nodes(130), kRoundT0);
  for (std::size_t i = 0; i < 130; ++i) EXPECT_TRUE(round.may_have_changed(i)) << "a new round";
  round.open(nodes(3), kRoundT0);
  round.unchanged(2);
  EXPECT_FALSE(round.may_have_changed(2));
  EXPECT_TRUE(round.may_have_changed(1));
}

TEST(QuorumRound, WithoutOutcomesEveryAnswerStartsFromAFreshScratch) {
  QuorumRound renewal(0, false);
  renewal.open(nodes(3), kRoundT0);
  NodeOutcome& first = renewal.answer(0, reply());
  first.status = NodeStatus::error;
  first.detail = "ERR boom";
  first.holder_ttl_ms = 5;
  NodeOutcome& second = renewal.answer(1, reply());
  EXPECT_EQ(second.status, NodeStatus::not_asked);
  EXPECT_TRUE(second.detail.empty());
  EXPECT_EQ(second.holder_ttl_ms, -1);
  EXPECT_EQ(second.permit, -1);
  EXPECT_EQ(second.fence_counter, 0);
}

TEST(QuorumRound, WithoutOutcomesItKeepsNone) {
  QuorumRound renewal(0, false);
  renewal.open(nodes(3), kRoundT0);
  EXPECT_TRUE(renewal.outcomes().empty());
  NodeOutcome& scratch = renewal.answer(1, reply());
  scratch.status = NodeStatus::extended;
  EXPECT_TRUE(renewal.outcomes().empty());
}

// A round of several parts (a set across hash slots, slot_parts.hpp): a
// node's answer counts once every part has come, as its worst part's, and
// the round remembers that some part granted beside a refused one.
TEST(QuorumRound, ANodeOfSeveralPartsCountsOnceAsItsWorstPart) {
  QuorumRound round;
  round.open(nodes(3), kRoundT0, TimePoint::max(), 2);
  const auto part = [&round](std::size_t node, NodeStatus status, std::int64_t counter) {
    NodeOutcome& outcome = round.answer(node, reply());
    outcome.status = status;
    outcome.fence_counter = counter;
    return round.whole(node, outcome);
  };
  EXPECT_EQ(part(0, NodeStatus::granted, 7), nullptr) << "a part still to come";
  NodeOutcome* both = part(0, NodeStatus::granted, 9);
  ASSERT_NE(both, nullptr);
  EXPECT_EQ(both->status, NodeStatus::granted);
  EXPECT_EQ(both->fence_counter, 9) << "the highest counter of its parts";
  EXPECT_EQ(both->name, "n0");
  EXPECT_FALSE(round.some_part_refused(0));
  EXPECT_EQ(part(1, NodeStatus::granted, 3), nullptr);
  NodeOutcome* split = part(1, NodeStatus::busy, 0);
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->status, NodeStatus::busy) << "a refusal in one slot refuses the set";
  EXPECT_TRUE(round.some_part_stored(1));
  EXPECT_TRUE(round.some_part_refused(1));
  EXPECT_TRUE(round.may_have_changed(1)) << "one part granted: there is something to undo";
  EXPECT_EQ(part(1, NodeStatus::granted, 0), nullptr) << "no third part counts";
}

TEST(QuorumRound, ANodeOfSeveralPartsIsUnchangedOnlyWhenNoPartLeft) {
  QuorumRound round;
  round.open(nodes(2), kRoundT0, TimePoint::max(), 2);
  for (int i = 0; i < 2; ++i) (void)round.whole(0, round.answer(0, timeout(false)));
  EXPECT_FALSE(round.may_have_changed(0));
  (void)round.whole(1, round.answer(1, timeout(false)));
  NodeOutcome* whole = round.whole(1, round.answer(1, timeout(true)));
  ASSERT_NE(whole, nullptr);
  EXPECT_TRUE(round.may_have_changed(1)) << "one part may have run";
  round.open(nodes(2), kRoundT0);
  EXPECT_FALSE(round.some_part_stored(1)) << "a round of one part keeps no parts";
}

// A part stored but short of its replicas, beside a slot that is
// recovering: the node's answer is the recovery, and what the first part
// stored is still known, to be undone.
TEST(QuorumRound, APartThatStoredIsKnownWhateverOutweighsIt) {
  QuorumRound round;
  round.open(nodes(1), kRoundT0, TimePoint::max(), 2);
  NodeOutcome& short_of_replicas = round.answer(0, reply());
  short_of_replicas.status = NodeStatus::replicas_short;
  EXPECT_EQ(round.whole(0, short_of_replicas), nullptr);
  NodeOutcome& recovering = round.answer(0, reply());
  recovering.status = NodeStatus::recovering;
  NodeOutcome* whole = round.whole(0, recovering);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(whole->status, NodeStatus::recovering);
  EXPECT_TRUE(round.some_part_stored(0));
  EXPECT_TRUE(round.some_part_refused(0));
  EXPECT_TRUE(round.may_have_changed(0));
}

// A round that keeps no outcomes (a guard's renewals) still merges a
// node's parts, and its answers start from a fresh scratch each.
TEST(QuorumRound, WithoutOutcomesANodeOfSeveralPartsIsStillMerged) {
  QuorumRound renewal(0, false);
  renewal.open(nodes(3), kRoundT0, TimePoint::max(), 2);
  NodeOutcome& first = renewal.answer(1, reply());
  first.status = NodeStatus::extended;
  EXPECT_EQ(renewal.whole(1, first), nullptr);
  NodeOutcome& second = renewal.answer(1, reply());
  EXPECT_EQ(second.status, NodeStatus::not_asked) << "a fresh scratch";
  second.status = NodeStatus::not_held;
  NodeOutcome* whole = renewal.whole(1, second);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(whole->status, NodeStatus::not_held);
  EXPECT_EQ(renewal.vote(whole->status == NodeStatus::extended), Decision::pending)
      << "one no of three";
}

TEST(QuorumRound, AMergedPartKeepsTheWorstStatusAndItsDetail) {
  NodeOutcome whole;
  whole.node = 2;
  whole.name = "n2";
  NodeOutcome recovering;
  recovering.status = NodeStatus::recovering;
  recovering.holder_ttl_ms = 400;
  recovering.latency = Microseconds(50);
  merge_part(whole, recovering, true);
  EXPECT_EQ(whole.name, "n2");
  EXPECT_EQ(whole.status, NodeStatus::recovering);
  NodeOutcome unmarked = recovering;
  unmarked.holder_ttl_ms = -1;
  unmarked.latency = Microseconds(80);
  merge_part(whole, unmarked, false);
  EXPECT_EQ(whole.holder_ttl_ms, -1) << "a slot without its marker outweighs one in its delay";
  EXPECT_EQ(whole.latency, Microseconds(80));
  NodeOutcome failed;
  failed.status = NodeStatus::error;
  failed.detail = "ERR boom";
  merge_part(whole, failed, false);
  EXPECT_EQ(whole.status, NodeStatus::error);
  EXPECT_EQ(whole.detail, "ERR boom");
  NodeOutcome granted;
  granted.status = NodeStatus::granted;
  merge_part(whole, granted, false);
  EXPECT_EQ(whole.status, NodeStatus::error) << "a grant never outweighs a failed part";
}

}  // namespace
}  // namespace redlock::detail
