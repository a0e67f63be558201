// The node side changes under a running client: scripts flushed, a node
// restarted. The client must recover by itself.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "harness.hpp"
#include "scripts/scripts.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

TEST(Recovery, ScriptFlushMidRunFallsBackToEval) {
  RedisCluster cluster{3};
  BlockingClient client(config_for(cluster));
  AcquireResult first = client.acquire(Resource("flush"));
  ASSERT_TRUE(first.ok());
  (void)client.release(*first.lock);

  // The release's script (an unfenced first attempt goes as a transaction
  // of plain commands, no script).
  const std::string sha = detail::script(detail::ScriptId::release).sha1;
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

// Acquires and releases until `node` grants again, bounded by 10 s. Every
// attempt must succeed through the other nodes meanwhile.
bool node_grants_again(BlockingClient& client, const std::string& resource, std::size_t node,
                       bool& every_attempt_ok) {
  return eventually(
      [&] {
        AcquireResult attempt = client.acquire(Resource(resource));
        if (!attempt.ok()) {
          every_attempt_ok = false;
          return false;
        }
        (void)client.release(*attempt.lock);
        return attempt.nodes[node].status == NodeStatus::granted;
      },
      std::chrono::seconds(10));
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
  bool every_attempt_ok = true;
  EXPECT_TRUE(node_grants_again(client, "restart", 0, every_attempt_ok))
      << "node 0 never came back";
  EXPECT_TRUE(every_attempt_ok) << "two of three nodes stayed up";
}

TEST(Recovery, NodeDownAtStartIsPickedUpWhenItAppears) {
  RedisCluster cluster{3};
  // A node that missed the quorum's initialisation joins like a node that
  // lost its data: recovered, then held back for max_ttl (= ttl here).
  QuorumConfig config = config_for(cluster, milliseconds(500));
  config.lock.reconnect_min = milliseconds(20);
  config.lock.reconnect_max = milliseconds(100);
  cluster.node(2).stop();
  initialise_quorum(cluster, {0, 1});
  BlockingClient client(config);
  AcquireResult without = client.acquire(Resource("late-node"));
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without.nodes[2].status, NodeStatus::unreachable);
  (void)client.release(*without.lock);

  cluster.node(2).restart();
  bool every_attempt_ok = true;
  EXPECT_TRUE(node_grants_again(client, "late-node", 2, every_attempt_ok));
  EXPECT_TRUE(every_attempt_ok);
}

}  // namespace
}  // namespace redlock::test
