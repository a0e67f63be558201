// The node side changes under a running client: scripts flushed, a node
// restarted. The client must recover by itself.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "harness.hpp"
#include "scripts.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

TEST(Recovery, ScriptFlushMidRunFallsBackToEval) {
  RedisCluster cluster{3};
  BlockingClient client(config_for(cluster));
  AcquireResult first = client.acquire(Resource("flush"));
  ASSERT_TRUE(first.ok());
  (void)client.release(*first.lock);

  const std::string sha = detail::acquire_script().sha1;
  auto cached_on_node0 = [&] {
    const Reply reply = cluster.node(0).probe().command({"SCRIPT", "EXISTS", sha});
    return reply.kind == Reply::Kind::array && reply.elements.size() == 1 &&
           reply.elements[0].integer == 1;
  };
  ASSERT_TRUE(cached_on_node0()) << "loaded at connect";
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    ASSERT_TRUE(cluster.node(i).probe().command({"SCRIPT", "FLUSH"}).is_ok());
  }
  ASSERT_FALSE(cached_on_node0());
  AcquireResult second = client.acquire(Resource("flush"));
  ASSERT_TRUE(second.ok()) << second.error.message();
  for (const auto& node : second.nodes) {
    EXPECT_NE(node.status, NodeStatus::error) << node.detail;
  }
  EXPECT_EQ(client.extend(*second.lock).error, std::error_code());
  EXPECT_EQ(client.release(*second.lock).released, 3u);

  // The EVAL fallback cached the script again.
  EXPECT_TRUE(cached_on_node0());
}

TEST(Recovery, RestartedNodeIsReconnected) {
  // With persistence, so the node comes back with its data (its amnesia
  // is the AmnesiaTest's subject).
  RedisCluster cluster{3, Persistence::aof_always};
  QuorumConfig config = config_for(cluster);
  config.lock.reconnect_min = milliseconds(20);
  config.lock.reconnect_max = milliseconds(200);
  BlockingClient client(config);
  AcquireResult before = client.acquire(Resource("restart"));
  ASSERT_TRUE(before.ok());
  (void)client.release(*before.lock);

  cluster.node(0).kill9();
  cluster.node(0).restart();

  // The first request after the restart may find the old socket dead; the
  // client reconnects with backoff. Bounded poll for node 0 to grant again.
  bool node0_granted = false;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!node0_granted && std::chrono::steady_clock::now() < give_up) {
    AcquireResult attempt = client.acquire(Resource("restart"));
    ASSERT_TRUE(attempt.ok()) << "two of three nodes stayed up";
    node0_granted = attempt.nodes[0].status == NodeStatus::granted;
    (void)client.release(*attempt.lock);
    if (!node0_granted) std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_TRUE(node0_granted) << "node 0 never came back";
}

TEST(Recovery, NodeDownAtStartIsPickedUpWhenItAppears) {
  RedisCluster cluster{3};
  // A node that missed the quorum's initialisation joins like a node that
  // lost its data: recovered, then held back for max_ttl (= ttl here).
  QuorumConfig config = config_for(cluster, milliseconds(500));
  config.lock.reconnect_min = milliseconds(20);
  config.lock.reconnect_max = milliseconds(100);
  cluster.node(2).stop();
  BlockingClient client(config);
  AcquireResult without = client.acquire(Resource("late-node"));
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without.nodes[2].status, NodeStatus::unreachable);
  (void)client.release(*without.lock);

  cluster.node(2).restart();
  bool granted = false;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!granted && std::chrono::steady_clock::now() < give_up) {
    AcquireResult attempt = client.acquire(Resource("late-node"));
    ASSERT_TRUE(attempt.ok());
    granted = attempt.nodes[2].status == NodeStatus::granted;
    (void)client.release(*attempt.lock);
    if (!granted) std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_TRUE(granted);
}

}  // namespace
}  // namespace redlock::test
