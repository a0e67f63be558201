// Nodes that are down, or up but silent: the quorum still decides, quickly.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;
using Stopwatch = SteadyClock;

std::size_t count_status(const AcquireResult& result, NodeStatus status) {
  std::size_t count = 0;
  for (const NodeOutcome& node : result.nodes) count += node.status == status ? 1 : 0;
  return count;
}

class NodeFailure : public ::testing::Test {
 protected:
  RedisCluster cluster{5};
};

TEST_F(NodeFailure, AcquiresWithTwoOfFiveDown) {
  initialise_quorum(cluster);
  cluster.node(0).stop();
  cluster.node(3).stop();
  BlockingClient client(config_for(cluster));
  AcquireResult result = client.acquire(Resource("two-down"));
  ASSERT_TRUE(result.ok()) << result.error.message();
  EXPECT_EQ(count_status(result, NodeStatus::granted), 3u);
  EXPECT_EQ(result.nodes[0].status, NodeStatus::unreachable);
  EXPECT_FALSE(result.nodes[0].detail.empty()) << "an unreachable node says why";
  EXPECT_EQ(client.release(*result.lock).released, 3u);
}

TEST_F(NodeFailure, FailsBoundedWithThreeOfFiveDownAndLeavesNoKey) {
  cluster.node(1).stop();
  cluster.node(2).stop();
  cluster.node(4).stop();
  BlockingClient client(config_for(cluster));
  const auto start = Stopwatch::now();
  AcquireResult result = client.acquire(Resource("three-down"));
  const auto took = Stopwatch::now() - start;
  EXPECT_EQ(result.error, errc::no_quorum);
  // Generous bound: proves the attempt does not hang on dead nodes.
  EXPECT_LT(took, std::chrono::seconds(5));
  // The two live nodes may have granted; the failed attempt unlocked them.
  // A release through the same connections runs after that unlock.
  (void)client.release(Lock{Resource("three-down"), LockValue("x"), milliseconds(1), {}, {}, {}});
  EXPECT_FALSE(cluster.node(0).probe().exists(key_of("three-down")));
  EXPECT_FALSE(cluster.node(3).probe().exists(key_of("three-down")));
}

TEST_F(NodeFailure, SilentNodesDoNotDelayAMajorityOfLiveOnes) {
  // A SIGSTOPped redis-server accepts TCP (the kernel queues it) but never
  // answers: the worst kind of dead.
  BlockingClient client(config_for(cluster));
  AcquireResult warm = client.acquire(Resource("warm-up"));  // connections established
  ASSERT_TRUE(warm.ok());
  (void)client.release(*warm.lock);

  cluster.node(1).pause();
  cluster.node(4).pause();
  const auto start = Stopwatch::now();
  AcquireResult result = client.acquire(Resource("silent"));
  const auto took = Stopwatch::now() - start;
  ASSERT_TRUE(result.ok()) << result.error.message();
  EXPECT_EQ(count_status(result, NodeStatus::granted), 3u);
  // Decided on the third grant, without waiting for the stopped nodes.
  EXPECT_EQ(result.nodes[1].status, NodeStatus::pending);
  EXPECT_EQ(result.nodes[4].status, NodeStatus::pending);
  EXPECT_LT(took, milliseconds(200)) << "must not wait for the node timeout";
  (void)client.release(*result.lock);
}

TEST_F(NodeFailure, ThreeSilentNodesFailAfterTheNodeTimeout) {
  QuorumConfig config = config_for(cluster);
  config.lock.node_timeout = milliseconds(100);
  BlockingClient client(config);
  AcquireResult warm = client.acquire(Resource("warm-up"));
  ASSERT_TRUE(warm.ok());
  (void)client.release(*warm.lock);

  for (std::size_t i : {0u, 2u, 3u}) cluster.node(i).pause();
  const auto start = Stopwatch::now();
  AcquireResult result = client.acquire(Resource("silent-majority"));
  const auto took = Stopwatch::now() - start;
  EXPECT_EQ(result.error, errc::no_quorum);
  EXPECT_EQ(count_status(result, NodeStatus::timeout), 3u);
  EXPECT_NE(result.nodes[0].detail.find("100 ms"), std::string::npos) << result.nodes[0].detail;
  EXPECT_GE(took, milliseconds(100));
  EXPECT_LT(took, milliseconds(2000)) << "bounded by the node timeout, not hanging";

  // The grants on nodes 1 and 4 were undone.
  (void)client.release(
      Lock{Resource("silent-majority"), LockValue("x"), milliseconds(1), {}, {}, {}});
  EXPECT_FALSE(cluster.node(1).probe().exists(key_of("silent-majority")));
  EXPECT_FALSE(cluster.node(4).probe().exists(key_of("silent-majority")));

  // Once resumed, the late grants that were queued behind the stop are
  // undone by the unlocks queued behind them on the same connections.
  for (std::size_t i : {0u, 2u, 3u}) cluster.node(i).resume();
  (void)client.release(
      Lock{Resource("silent-majority"), LockValue("x"), milliseconds(1), {}, {}, {}});
  EXPECT_EQ(nodes_holding(cluster, "silent-majority"), 0u);
}

TEST_F(NodeFailure, UnreachableNodeIsNamed) {
  QuorumConfig config = config_for(cluster);
  const std::uint16_t dead_port = cluster.node(4).port();
  initialise_quorum(cluster);
  cluster.node(4).stop();
  config.nodes[4].name = "the-dead-one";
  BlockingClient client(config);
  AcquireResult result = client.acquire(Resource("named"));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.nodes[4].name, "the-dead-one");
  EXPECT_EQ(result.nodes[4].status, NodeStatus::unreachable);
  EXPECT_NE(result.nodes[4].detail.find("refused"), std::string::npos)
      << result.nodes[4].detail << " (port " << dead_port << ")";
  (void)client.release(*result.lock);
}

// Releases with a 100 ms node timeout, at a majority or not.
QuorumConfig release_config(const RedisCluster& cluster, bool at_majority) {
  QuorumConfig config = config_for(cluster);
  config.lock.node_timeout = milliseconds(100);
  config.lock.release_at_majority = at_majority;
  return config;
}

std::size_t count_release_status(const ReleaseResult& result, NodeStatus status) {
  std::size_t count = 0;
  for (const NodeOutcome& node : result.nodes) count += node.status == status ? 1 : 0;
  return count;
}

// Without release_at_majority a release waits for every node: a silent one
// costs the node timeout and is reported as such.
TEST_F(NodeFailure, ReleaseNotAtMajorityWaitsForEveryNode) {
  BlockingClient client(release_config(cluster, false));
  AcquireResult result = client.acquire(Resource("wait-all"));
  ASSERT_TRUE(result.ok());
  cluster.node(2).pause();
  const ReleaseResult released = client.release(*result.lock);
  cluster.node(2).resume();
  EXPECT_EQ(released.error, make_error_code(errc::timeout));
  EXPECT_EQ(released.released, 4u);
  EXPECT_EQ(released.nodes[2].status, NodeStatus::timeout);
}

// A release's requests wait at least kReleaseMinTimeout (250 ms) for an
// answer, whatever the node timeout: with a 10 ms node timeout, a node
// that stalls for 100 ms (a loaded machine) still answers the release in
// time, and the lock is gone from it, not left there for its TTL.
TEST_F(NodeFailure, AReleaseWaitsForANodeThatStallsLongerThanTheNodeTimeout) {
  QuorumConfig config = release_config(cluster, false);
  config.lock.node_timeout = milliseconds(10);
  BlockingClient client(config);
  AcquireResult result = client.acquire(Resource("slow-release"));
  ASSERT_TRUE(result.ok());
  ASSERT_TRUE(eventually([&] { return nodes_holding(cluster, "slow-release") == cluster.size(); }));
  cluster.node(2).pause();
  std::future<ReleaseResult> releasing =
      std::async(std::launch::async, [&] { return client.release(*result.lock); });
  std::this_thread::sleep_for(milliseconds(100));  // the stall
  cluster.node(2).resume();
  const ReleaseResult released = releasing.get();
  EXPECT_FALSE(released.error) << released.error.message();
  EXPECT_EQ(released.nodes[2].status, NodeStatus::released);
  EXPECT_EQ(nodes_holding(cluster, "slow-release"), 0U);
}

// The default reports a release at a majority (docs/performance.md, "The
// default release").
TEST(ReleaseDefault, ReportsAtAMajority) { EXPECT_TRUE(LockConfig{}.release_at_majority); }

// With release_at_majority the release reports at the third deletion: the
// silent node is still pending (its timeout never ran), the others that
// answered by then are released.
TEST_F(NodeFailure, ReleaseAtMajorityDoesNotWaitForASilentNode) {
  BlockingClient client(release_config(cluster, true));
  AcquireResult result = client.acquire(Resource("at-majority"));
  ASSERT_TRUE(result.ok());
  cluster.node(1).pause();
  cluster.node(3).pause();
  const ReleaseResult released = client.release(*result.lock);
  EXPECT_FALSE(released.error) << released.error.message();
  EXPECT_EQ(released.released, 3u);
  EXPECT_EQ(count_release_status(released, NodeStatus::released), 3u);
  EXPECT_EQ(released.nodes[1].status, NodeStatus::pending);
  EXPECT_EQ(released.nodes[3].status, NodeStatus::pending);
  // The silent nodes were asked all the same: once they answer, their copy
  // of the lock is gone too.
  cluster.node(1).resume();
  cluster.node(3).resume();
  EXPECT_TRUE(eventually([&] { return nodes_holding(cluster, "at-majority") == 0; }));
}

// A majority deleted the lock: success, whatever another node answered
// before the majority was reached (its outcome still says so).
TEST_F(NodeFailure, ReleaseAtMajorityIsASuccessDespiteAnEarlierErrorReply) {
  BlockingClient client(release_config(cluster, true));
  AcquireResult result = client.acquire(Resource("one-bad"));
  ASSERT_TRUE(result.ok());
  RedisProbe probe = cluster.node(0).probe();
  ASSERT_EQ(probe.command({"DEL", key_of("one-bad")}).kind, Reply::Kind::integer);
  ASSERT_EQ(probe.command({"HSET", key_of("one-bad"), "f", "v"}).kind, Reply::Kind::integer);
  const ReleaseResult released = client.release(*result.lock);
  EXPECT_FALSE(released.error) << released.error.message();
  EXPECT_GE(released.released, 3u);
  EXPECT_TRUE(released.nodes[0].status == NodeStatus::error ||
              released.nodes[0].status == NodeStatus::pending)
      << static_cast<int>(released.nodes[0].status);
}

// Too few deletions for a majority: it waits for every node as before.
TEST_F(NodeFailure, ReleaseAtMajorityWaitsForAllWhenNoMajorityDeleted) {
  BlockingClient client(release_config(cluster, true));
  AcquireResult result = client.acquire(Resource("short"));
  ASSERT_TRUE(result.ok());
  for (std::size_t i : {0u, 1u, 2u}) {
    ASSERT_EQ(cluster.node(i).probe().command({"DEL", key_of("short")}).kind, Reply::Kind::integer);
  }
  const ReleaseResult released = client.release(*result.lock);
  EXPECT_FALSE(released.error) << released.error.message();
  EXPECT_EQ(released.released, 2u);
  EXPECT_EQ(count_release_status(released, NodeStatus::not_held), 3u);
  EXPECT_EQ(count_release_status(released, NodeStatus::pending), 0u);
}

}  // namespace
}  // namespace redlock::test
