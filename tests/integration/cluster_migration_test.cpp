// A cluster member's slots moving and its shards failing while locks are
// held (docs/safety.md, "A cluster as a member"), on three real members of
// three shards: a slot migrated between acquire and extend takes the lock
// with it, and the extend follows the MOVED to the new master; while a
// slot is half moved its calls are refused (TRYAGAIN), never half applied;
// a shard master down costs that member its vote for that shard's slots
// only.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cluster_keys.hpp"
#include "cluster_member.hpp"
#include "harness.hpp"
#include "protocol/hash_slot.hpp"

namespace redlock::test {
namespace {

using detail::hash_slot;

class ClusterMigration : public ::testing::Test {
 protected:
  explicit ClusterMigration(bool full_coverage = true) {
    ShardedMemberOptions options;
    options.shards = 3;
    options.replicas_per_shard = 0;
    // A shard down leaves the others serving their slots.
    if (!full_coverage) {
      options.server.extra_arguments = {"--cluster-require-full-coverage", "no"};
    }
    for (int i = 0; i < 3; ++i) members_.push_back(std::make_unique<ShardedMember>(options));
  }

  QuorumConfig config() {
    QuorumConfig quorum = quorum_of(members_);
    quorum.lock.ttl = std::chrono::seconds(10);
    return quorum;
  }

  std::vector<std::unique_ptr<ShardedMember>> members_;
};

TEST_F(ClusterMigration, ASlotMigratedBetweenAcquireAndExtendTakesTheLockAndTheExtendFollows) {
  BlockingClient client(config());
  const std::string resource = "invoice:9";
  const std::uint16_t slot = hash_slot(resource);
  AcquireOptions short_lived;
  short_lived.ttl = std::chrono::seconds(5);
  const AcquireResult held = client.acquire(Resource(resource), short_lived);
  ASSERT_TRUE(held.ok()) << held.error.message();
  const std::size_t from = members_[0]->shard_of(slot);
  const std::size_t to = (from + 1) % members_[0]->shards();
  // Every key of the slot moves: the lock with its marker, recovering key
  // and fence hash.
  std::vector<std::string> keys;
  const Reply in_slot = members_[0]->master(from).probe().command(
      {"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), "100"});
  for (const Reply& key : in_slot.elements) keys.push_back(key.text);
  ASSERT_GE(keys.size(), 2U) << "the lock and its slot's marker";
  ASSERT_TRUE(members_[0]->begin_slot_move(slot, to));
  ASSERT_TRUE(members_[0]->migrate_keys(slot, to, keys));
  ASSERT_TRUE(members_[0]->end_slot_move(slot, to));

  const ExtendResult extended = client.extend(*held.lock, ExtendOptions{std::chrono::seconds(10)});
  ASSERT_TRUE(extended.ok()) << extended.error.message();
  RedisProbe target(members_[0]->master(to).port());
  const std::string lock_key = slotted(resource) + "lock:" + resource;
  EXPECT_EQ(target.get(lock_key), held.lock->value.str()) << "the lock moved with its slot";
  EXPECT_TRUE(target.exists(slotted(resource) + "node")) << "and so did the slot's marker";
  // The extend reached the new master after the MOVED (it is decided at a
  // majority, so read it there): 10 s from now, beyond the acquire's 5.
  EXPECT_TRUE(eventually([&] { return target.pttl(lock_key) > 6000; }))
      << "member 0's copy was not extended on the master it moved to";
  ASSERT_FALSE(client.release(*extended.lock).error);
  EXPECT_FALSE(target.exists(lock_key));
}

TEST_F(ClusterMigration, WhileASlotIsHalfMovedItsCallsAreRefusedNeverHalfApplied) {
  BlockingClient warm(config());
  const std::string resource = "invoice:10";
  const std::uint16_t slot = hash_slot(resource);
  // The slot's marker exists on every member; no lock is held.
  const AcquireResult first = warm.acquire(Resource(resource));
  ASSERT_TRUE(first.ok()) << first.error.message();
  ASSERT_FALSE(warm.release(*first.lock).error);
  const std::size_t from = members_[0]->shard_of(slot);
  const std::size_t to = (from + 1) % members_[0]->shards();
  // The marker has moved, the recovering key and fence hash (if any) not:
  // an acquire's keys are split between the two masters.
  ASSERT_TRUE(members_[0]->begin_slot_move(slot, to));
  ASSERT_TRUE(members_[0]->migrate_keys(slot, to, {slotted(resource) + "node"}));

  auto metrics = std::make_shared<Metrics>();
  ClientOptions options;
  options.metrics = metrics;
  BlockingClient client(config(), options);
  AcquireOptions once;
  once.fair = false;
  const AcquireResult held = client.acquire(Resource(resource), once);
  ASSERT_TRUE(held.ok()) << "members 1 and 2 are a majority: " << held.error.message();
  const std::string lock_key = slotted(resource) + "lock:" + resource;
  RedisProbe source(members_[0]->master(from).port());
  RedisProbe target(members_[0]->master(to).port());
  // Member 0 was asked again after each TRYAGAIN and never granted: its
  // keys are on neither end.
  EXPECT_TRUE(eventually([&] {
    for (const NodeMetricsSnapshot& node : metrics->snapshot().nodes) {
      for (const ShardMetricsSnapshot& shard : node.shards) {
        if (shard.try_again > 0 || shard.asked > 0) return true;
      }
    }
    return false;
  })) << "no TRYAGAIN or ASK counted for the half-moved slot";
  EXPECT_FALSE(source.exists(lock_key));
  EXPECT_FALSE(target.exists(lock_key));
  // (Member 0's release meets the same refusals.)
  (void)client.release(*held.lock);

  // Once the slot is the target's, member 0 grants there.
  ASSERT_TRUE(members_[0]->end_slot_move(slot, to));
  const AcquireResult after = client.acquire(Resource(resource), once);
  ASSERT_TRUE(after.ok()) << after.error.message();
  EXPECT_TRUE(eventually([&] { return target.get(lock_key) == after.lock->value.str(); }))
      << "member 0 did not grant on the slot's new master";
}

// A waiter's shard subscription follows its resource's slot: the slot
// moves on every member while the waiter waits in line, each old master
// ends the subscription, the client subscribes again at the new master,
// and the holder's release there still wakes the waiter.
TEST_F(ClusterMigration, AWaiterIsStillWokenAfterItsResourcesSlotMoved) {
  BlockingClient a(config());
  BlockingClient b(config());
  const std::string resource = "invoice:11";
  const std::uint16_t slot = hash_slot(resource);
  const AcquireResult held = a.acquire(Resource(resource));
  ASSERT_TRUE(held.ok()) << held.error.message();
  std::future<AcquireResult> waited = waiter_woken_only_by_a_release(b, resource);
  const std::string wake_channels = slotted(resource) + "released:@*";
  for (auto& member : members_) {
    const std::size_t from = member->shard_of(slot);
    ASSERT_TRUE(
        eventually([&] { return shard_channels(member->master(from), wake_channels) == 1; }));
  }
  for (auto& member : members_) {
    const std::size_t from = member->shard_of(slot);
    const std::size_t to = (from + 1) % member->shards();
    ASSERT_TRUE(member->move_slot(slot, to));
    EXPECT_TRUE(eventually([&] { return shard_channels(member->master(to), wake_channels) == 1; }))
        << "not subscribed again at the slot's new master";
    EXPECT_EQ(shard_channels(member->master(from), wake_channels), 0U);
  }
  expect_woken_by_the_release(a, *held.lock, b, waited);
}

class ClusterShardDown : public ClusterMigration {
 protected:
  ClusterShardDown() : ClusterMigration(false) {}
};

TEST_F(ClusterShardDown, AShardMasterDownCostsItsMemberTheVoteForThatShardsSlotsOnly) {
  BlockingClient client(config());
  const std::string down_resource = "alpha";
  std::string up_resource;
  for (int i = 0; up_resource.empty(); ++i) {
    const std::string candidate = "beta-" + std::to_string(i);
    if (members_[0]->shard_of(hash_slot(candidate)) !=
        members_[0]->shard_of(hash_slot(down_resource))) {
      up_resource = candidate;
    }
  }
  AcquireOptions once;
  once.fair = false;
  // Both slots marked on every member first.
  for (const std::string& name : {down_resource, up_resource}) {
    const AcquireResult warm = client.acquire(Resource(name), once);
    ASSERT_TRUE(warm.ok()) << warm.error.message();
    ASSERT_FALSE(client.release(*warm.lock).error);
  }
  members_[0]->master(members_[0]->shard_of(hash_slot(down_resource))).kill9();
  const AcquireResult down = client.acquire(Resource(down_resource), once);
  ASSERT_TRUE(down.ok()) << "members 1 and 2 are a majority: " << down.error.message();
  EXPECT_NE(down.nodes[0].status, NodeStatus::granted);
  const AcquireResult up = client.acquire(Resource(up_resource), once);
  ASSERT_TRUE(up.ok()) << up.error.message();
  RedisProbe kept(members_[0]->master(members_[0]->shard_of(hash_slot(up_resource))).port());
  EXPECT_TRUE(eventually([&] {
    return kept.get(slotted(up_resource) + "lock:" + up_resource) == up.lock->value.str();
  })) << "member 0's other shards stopped granting";
}

}  // namespace
}  // namespace redlock::test
