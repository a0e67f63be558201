// Extend: by quorum, compare-and-PEXPIRE, never resurrecting a lost key.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

class Extend : public ::testing::Test {
 protected:
  RedisCluster cluster{5};
};

TEST_F(Extend, MovesTheDeadlineAndResetsTheTtlOnTheNodes) {
  QuorumConfig config = config_for(cluster, milliseconds(5000));
  config.lock.max_ttl = milliseconds(20000);  // the extend below asks for more than ttl
  BlockingClient client(config);
  AcquireResult held = client.acquire(Resource("renew"));
  ASSERT_TRUE(held.ok());
  // Let the lock age measurably, so a reset TTL is distinguishable.
  const auto aged = std::chrono::steady_clock::now() + milliseconds(300);
  while (cluster.node(0).probe().pttl(key_of("renew")) > 4700 &&
         std::chrono::steady_clock::now() < aged + milliseconds(2000)) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_LE(cluster.node(0).probe().pttl(key_of("renew")), 4700);

  ExtendOptions options;
  options.ttl = milliseconds(20000);
  ExtendResult extended = client.extend(*held.lock, options);
  ASSERT_TRUE(extended.ok()) << extended.error.message();
  EXPECT_GT(extended.lock->valid_until, held.lock->valid_until);
  EXPECT_GT(extended.validity.count(), 19000);
  EXPECT_EQ(extended.lock->ttl, milliseconds(20000));
  std::size_t extended_nodes = 0;
  for (const auto& node : extended.nodes) extended_nodes += node.status == NodeStatus::extended;
  EXPECT_GE(extended_nodes, 3u);
  EXPECT_GT(cluster.node(0).probe().pttl(key_of("renew")), 15000);
  (void)client.release(*extended.lock);
}

TEST_F(Extend, AnExpiredLockIsRefusedWithoutAskingTheNodes) {
  BlockingClient client(config_for(cluster));
  AcquireResult held = client.acquire(Resource("expired-locally"));
  ASSERT_TRUE(held.ok());
  Lock stale = *held.lock;
  stale.valid_until = SteadyClock::now() - milliseconds(1);
  ExtendResult result = client.extend(stale);
  EXPECT_EQ(result.error, errc::lost);
  EXPECT_TRUE(result.nodes.empty());
  (void)client.release(*held.lock);
}

TEST_F(Extend, AfterExpiryOnTheNodesItIsRefusedAndRecreatesNothing) {
  BlockingClient client(config_for(cluster, milliseconds(150)));
  AcquireResult held = client.acquire(Resource("gone"));
  ASSERT_TRUE(held.ok());
  // Wait (bounded) until every node has expired the key.
  ASSERT_TRUE(eventually([&] { return nodes_holding(cluster, "gone") == 0; }));

  // Pretend our local deadline had not passed (a fast local clock), so the
  // request reaches the nodes: they must refuse and create nothing.
  Lock pretend = *held.lock;
  pretend.valid_until = SteadyClock::now() + std::chrono::seconds(60);
  ExtendResult result = client.extend(pretend);
  EXPECT_EQ(result.error, errc::lost);
  for (const auto& node : result.nodes) {
    EXPECT_TRUE(node.status == NodeStatus::not_held || node.status == NodeStatus::pending)
        << to_string(node.status);
  }
  EXPECT_EQ(result.lock->valid_until, pretend.valid_until) << "a refused extend moves nothing";
  EXPECT_EQ(nodes_holding(cluster, "gone"), 0u);
}

TEST_F(Extend, SomeoneElsesLockCannotBeExtended) {
  BlockingClient client(config_for(cluster));
  AcquireResult held = client.acquire(Resource("theirs"));
  ASSERT_TRUE(held.ok());
  Lock forged = *held.lock;
  forged.value = LockValue::random();
  ExtendResult result = client.extend(forged);
  EXPECT_EQ(result.error, errc::lost);
  (void)client.release(*held.lock);
}

}  // namespace
}  // namespace redlock::test

namespace redlock::test {
namespace {

TEST(ExtendLimits, BeyondMaxTtlIsRefused) {
  RedisCluster cluster{3};
  BlockingClient client(config_for(cluster, std::chrono::milliseconds(2000)));
  AcquireResult held = client.acquire(Resource("bounded"));
  ASSERT_TRUE(held.ok());
  ExtendOptions longer;
  longer.ttl = std::chrono::milliseconds(60000);  // max_ttl defaults to ttl (2 s)
  EXPECT_EQ(client.extend(*held.lock, longer).error, errc::invalid_argument);
  (void)client.release(*held.lock);
}

}  // namespace
}  // namespace redlock::test
