// Acquire and release against N real redis-server processes.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "harness.hpp"

namespace redlock::test {
namespace {

class AcquireRelease : public ::testing::TestWithParam<std::size_t> {
 protected:
  RedisCluster cluster{GetParam()};
};

TEST_P(AcquireRelease, AcquireSetsOurValueOnEveryNodeAndReleaseRemovesIt) {
  BlockingClient client(config_for(cluster));
  const Resource resource("basic");
  AcquireResult acquired = client.acquire(resource);
  ASSERT_TRUE(acquired.ok()) << acquired.error.message();
  const Lock& lock = *acquired.lock;
  EXPECT_EQ(lock.value.str().size(), 32u);
  EXPECT_GT(acquired.validity.count(), 9000);
  EXPECT_LE(acquired.validity.count(), 10000 - 102);
  ASSERT_EQ(acquired.nodes.size(), GetParam());

  std::size_t granted = 0;
  for (const NodeOutcome& node : acquired.nodes) {
    if (node.status == NodeStatus::granted) ++granted;
  }
  EXPECT_GE(granted, GetParam() / 2 + 1);

  // Wait for stragglers is not needed: release goes to every node.
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    RedisProbe probe = cluster.node(i).probe();
    const auto value = probe.get(key_of("basic"));
    if (acquired.nodes[i].status == NodeStatus::granted) {
      ASSERT_TRUE(value.has_value()) << "node " << i;
      EXPECT_EQ(*value, lock.value.str());
      const long long pttl = probe.pttl(key_of("basic"));
      EXPECT_GT(pttl, 0);
      EXPECT_LE(pttl, 10000);
    }
  }

  ReleaseResult released = client.release(lock);
  EXPECT_FALSE(released.error) << released.error.message();
  EXPECT_EQ(released.released, GetParam());
  EXPECT_EQ(nodes_holding(cluster, "basic"), 0u);
}

TEST_P(AcquireRelease, SecondAcquirerIsRefusedWhileHeld) {
  BlockingClient first(config_for(cluster));
  BlockingClient second(config_for(cluster));
  AcquireResult held = first.acquire(Resource("contended"));
  ASSERT_TRUE(held.ok());

  AcquireResult refused = second.acquire(Resource("contended"));
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.error, errc::not_acquired);
  for (const NodeOutcome& node : refused.nodes) {
    if (node.status == NodeStatus::busy) {
      EXPECT_GT(node.holder_ttl_ms, 0) << "busy answers carry the holder's PTTL";
    }
  }
  // The refused attempt left nothing of its own behind: every node holds the
  // first holder's value, or nothing where the second's request came first
  // and its clean-up deleted its own value (the first's reply from that
  // node was not needed: the first held a majority without it).
  std::size_t holding = 0;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    const std::optional<std::string> value = cluster.node(i).probe().get(key_of("contended"));
    if (!value) continue;
    EXPECT_EQ(*value, held.lock->value.str()) << "node " << i;
    if (*value == held.lock->value.str()) ++holding;
  }
  EXPECT_GE(holding, cluster.size() / 2 + 1);

  (void)first.release(*held.lock);
  AcquireResult after_release = second.acquire(Resource("contended"));
  EXPECT_TRUE(after_release.ok()) << after_release.error.message();
  (void)second.release(*after_release.lock);
}

INSTANTIATE_TEST_SUITE_P(Nodes, AcquireRelease, ::testing::Values(1, 3, 5),
                         [](const auto& param_info) {
                           return "N" + std::to_string(param_info.param);
                         });

class FiveNodes : public ::testing::Test {
 protected:
  RedisCluster cluster{5};
};

TEST_F(FiveNodes, PartialGrantsAreUndoneWhenTheMajorityIsHeldElsewhere) {
  BlockingClient client(config_for(cluster));
  // Initialise the quorum first: lock keys on unmarked nodes would make the
  // amnesia defence hold every node back (see docs/engine.md).
  AcquireResult warm = client.acquire(Resource("warm-up"));
  ASSERT_TRUE(warm.ok());
  (void)client.release(*warm.lock);
  // Another holder has nodes 0, 1, 2; our attempt can win only 3 and 4.
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(cluster.node(i).probe().set(key_of("partial"), "someone-else",
                                            std::chrono::milliseconds(30000)));
  }
  AcquireResult result = client.acquire(Resource("partial"));
  EXPECT_EQ(result.error, errc::not_acquired);

  std::size_t granted = 0;
  for (const NodeOutcome& node : result.nodes) {
    if (node.status == NodeStatus::granted) ++granted;
  }
  // The outcome may be decided before nodes 3 and 4 answer; either way their
  // grants must be gone once the unlock has run.
  EXPECT_LE(granted, 2u);
  // A blocking release through the same connections runs after the unlock
  // (a connection's commands execute in order), so the check is not racy.
  Lock probe_lock{Resource("partial"), LockValue("not-a-holder"), std::chrono::seconds(1), {}, {},
                  std::nullopt};
  (void)client.release(probe_lock);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(cluster.node(i).probe().get(key_of("partial")), "someone-else");
  }
  for (std::size_t i = 3; i < 5; ++i) {
    EXPECT_FALSE(cluster.node(i).probe().exists(key_of("partial"))) << "node " << i;
  }
}

TEST_F(FiveNodes, ReleaseNeverDeletesAnotherHoldersValue) {
  BlockingClient client(config_for(cluster));
  AcquireResult held = client.acquire(Resource("mine"));
  ASSERT_TRUE(held.ok());
  // Node 2's copy expired and someone else took it there.
  ASSERT_TRUE(
      cluster.node(2).probe().set(key_of("mine"), "other-value", std::chrono::milliseconds(30000)));
  ReleaseResult released = client.release(*held.lock);
  EXPECT_EQ(released.released, 4u);
  EXPECT_EQ(released.nodes[2].status, NodeStatus::not_held);
  EXPECT_EQ(cluster.node(2).probe().get(key_of("mine")), "other-value");
  EXPECT_EQ(nodes_holding(cluster, "mine"), 1u);
}

TEST_F(FiveNodes, ResourceNamesAreBinarySafe) {
  BlockingClient client(config_for(cluster));
  const std::string name = std::string("quote\" nul\0 émoji ✓", 22);
  AcquireResult held = client.acquire(Resource(name));
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(cluster.node(0).probe().get(key_of(name)), held.lock->value.str());
  EXPECT_EQ(client.release(*held.lock).released, 5u);
}

TEST_F(FiveNodes, KeyPrefixIsHonoured) {
  QuorumConfig config = config_for(cluster);
  config.lock.key_prefix = "app7:";
  BlockingClient client(config);
  AcquireResult held = client.acquire(Resource("job"));
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE(cluster.node(0).probe().exists("app7:lock:job"));
  EXPECT_FALSE(cluster.node(0).probe().exists("redlock:lock:job"));
  (void)client.release(*held.lock);
}

}  // namespace
}  // namespace redlock::test
