// A fence round in flight across a node's crash and recovery (docs/safety.md, "Fencing after a
// node forgot"): a proposer may count a node's "stored T" from before the node restarted empty
// and was recovered from nodes that did not have T yet, and win T with one more node whose copy
// of its request came late. The recovered node must not let a later proposer, decided by it and
// a node without T, hand out T or less: it stores no token until its counters were merged again
// once its delay was over.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

class FenceRecovery : public ::testing::Test {
 protected:
  RedisCluster cluster{3};  // no persistence: a restart loses everything
  static constexpr long long kToken = 11;

  QuorumConfig config() {
    QuorumConfig quorum = config_for(cluster, milliseconds(1500));
    quorum.lock.amnesia_defence = true;
    return quorum;
  }
  std::string counter_on(std::size_t i, const std::string& field) {
    return cluster.node(i).probe().command({"HGET", "redlock:fence", field}).text;
  }

  // Plays the interleaving up to the moment a later proposer would be
  // decided by nodes 0 and 2: P's proposal of kToken stored on node 0;
  // node 0 restarts empty and is recovered from nodes 1 and 2 (counter 1);
  // P's late copy stores kToken on node 1, which P counts with node 0's
  // answer from before the crash; node 0's delay runs out; node 1 stops.
  void play_the_round_across_the_crash() {
    {
      BlockingClient setup(config());
      AcquireOptions fenced;
      fenced.fenced = true;
      const AcquireResult first = setup.acquire(Resource("doc"), fenced);
      ASSERT_TRUE(first.ok()) << first.error.message();
      (void)setup.release(*first.lock);
    }
    ASSERT_EQ(counter_on(0, "doc"), "1");
    ASSERT_EQ(cluster.node(0)
                  .probe()
                  .command({"HSET", "redlock:fence", "doc", std::to_string(kToken)})
                  .integer,
              0);
    cluster.node(0).kill9();
    cluster.node(0).restart();
    {
      // Any acquire sees node 0 without its marker and recovers it.
      BlockingClient recoverer(config());
      (void)recoverer.acquire(Resource("elsewhere"));
      ASSERT_TRUE(eventually([&] { return cluster.node(0).probe().exists("redlock:node"); }))
          << "node 0 was not recovered";
    }
    ASSERT_EQ(counter_on(0, "doc"), "1");
    (void)cluster.node(1).probe().command({"HSET", "redlock:fence", "doc", std::to_string(kToken)});
    ASSERT_TRUE(eventually([&] { return cluster.node(0).probe().pttl("redlock:recovering") == -2; },
                           milliseconds(5000)))
        << "node 0's recovery delay did not end";
    cluster.node(1).pause();
  }
};

TEST_F(FenceRecovery, ATokenWonAcrossACrashIsNeverHandedOutAgainNorUndercut) {
  play_the_round_across_the_crash();
  if (HasFatalFailure()) return;
  BlockingClient q(config());
  AcquireOptions fenced;
  fenced.fenced = true;
  fenced.wait = milliseconds(1500);
  const AcquireResult got = q.acquire(Resource("doc"), fenced);
  if (got.ok()) {
    ASSERT_TRUE(got.lock->fence.has_value());
    EXPECT_GT(*got.lock->fence, static_cast<std::uint64_t>(kToken))
        << "a token at or below one already won";
    (void)q.release(*got.lock);
  }
  // Once node 1 answers again, node 0's counters are merged with its and
  // fenced acquires go on above the token.
  cluster.node(1).resume();
  std::optional<std::uint64_t> token;
  ASSERT_TRUE(eventually(
      [&] {
        const AcquireResult again = q.acquire(Resource("doc"), fenced);
        if (!again.ok()) return false;
        token = again.lock->fence;
        (void)q.release(*again.lock);
        return true;
      },
      milliseconds(10000)))
      << "no fenced acquire after node 1 came back";
  ASSERT_TRUE(token.has_value());
  EXPECT_GT(*token, static_cast<std::uint64_t>(kToken));
  EXPECT_TRUE(eventually([&] { return counter_on(0, "doc") != "1"; }))
      << "node 0's counters were never merged again";
}

// The second merge waits for the delay: within it, node 0 refuses as it
// always did; after it, a recovery round merges it and clears the mark.
TEST_F(FenceRecovery, ARecoveredNodeIsMergedAgainAfterItsDelayAndOnlyThen) {
  {
    BlockingClient setup(config());
    const AcquireResult warm = setup.acquire(Resource("warm-up"));
    ASSERT_TRUE(warm.ok());
    (void)setup.release(*warm.lock);
  }
  (void)cluster.node(2).probe().command({"HSET", "redlock:fence", "doc", "7"});
  (void)cluster.node(1).probe().command({"HSET", "redlock:fence", "doc", "7"});
  cluster.node(0).kill9();
  cluster.node(0).restart();
  BlockingClient client(config());
  (void)client.acquire(Resource("elsewhere"));
  RedisProbe zero = cluster.node(0).probe();
  ASSERT_TRUE(eventually([&] { return zero.exists("redlock:node"); }));
  EXPECT_EQ(zero.command({"HEXISTS", "redlock:fence", ""}).integer, 1)
      << "recovered with a delay but not marked for its second merge";
  EXPECT_GT(zero.pttl("redlock:recovering"), 0);
  ASSERT_TRUE(
      eventually([&] { return zero.pttl("redlock:recovering") == -2; }, milliseconds(5000)));
  (void)cluster.node(1).probe().command({"HSET", "redlock:fence", "doc", "9"});
  (void)cluster.node(2).probe().command({"HSET", "redlock:fence", "doc", "9"});
  AcquireOptions fenced;
  fenced.fenced = true;
  fenced.wait = milliseconds(3000);
  const AcquireResult got = client.acquire(Resource("doc"), fenced);
  ASSERT_TRUE(got.ok()) << got.error.message();
  EXPECT_GT(*got.lock->fence, 9U);
  (void)client.release(*got.lock);
  EXPECT_TRUE(eventually([&] {
    return zero.command({"HEXISTS", "redlock:fence", ""}).integer == 0;
  }));
  EXPECT_NE(counter_on(0, "doc"), "7");
}

}  // namespace
}  // namespace redlock::test
