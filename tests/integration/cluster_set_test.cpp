// A set of resources in several hash slots over a quorum of real Redis
// Cluster members (docs/algorithm.md, "Key layout", a set across slots):
// each member gets one call per slot, every key in its own resource's slot
// on that slot's master; the set is granted, renewed, extended, fenced and
// released there as one lock; and a member that refuses the set in one
// slot keeps none of it in the others.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cluster_keys.hpp"
#include "cluster_member.hpp"
#include "harness.hpp"
#include "protocol/hash_slot.hpp"

namespace redlock::test {
namespace {

using detail::hash_slot;

class ClusterSet : public ::testing::Test {
 protected:
  ClusterSet() : members_(three_members_of_three_shards()) {
    // One resource in each shard of member 0 (so in three slots).
    std::set<std::size_t> shards;
    for (int i = 0; resources_.size() < 3 && i < 1000; ++i) {
      const std::string name = "set:" + std::to_string(i);
      if (shards.insert(members_[0]->shard_of(hash_slot(name))).second) resources_.push_back(name);
    }
  }

  QuorumConfig config() {
    QuorumConfig quorum = quorum_of(members_);
    quorum.lock.ttl = std::chrono::seconds(10);
    return quorum;
  }

  std::vector<Resource> set() const {
    std::vector<Resource> out;
    for (const std::string& name : resources_) out.emplace_back(name);
    return out;
  }

  // A probe of the master that takes `resource`'s keys in `member`.
  RedisProbe master_for(std::size_t member, const std::string& resource) {
    return master_of(members_, member, resource);
  }

  std::string lock_key(const std::string& resource) {
    return slotted(resource) + "lock:" + resource;
  }

  // Whether every member holds `value` on every resource's key.
  bool every_member_holds(const std::string& value) {
    for (std::size_t member = 0; member < members_.size(); ++member) {
      for (const std::string& resource : resources_) {
        if (master_for(member, resource).get(lock_key(resource)) != value) return false;
      }
    }
    return true;
  }

  std::vector<std::unique_ptr<ShardedMember>> members_;
  std::vector<std::string> resources_;
};

TEST_F(ClusterSet, ASetAcrossSlotsIsOneLockHeldInEachResourcesOwnSlot) {
  ASSERT_EQ(resources_.size(), 3U);
  BlockingClient client(config());
  AcquireOptions fenced;
  fenced.fenced = true;
  const AcquireResult held = client.acquire(set(), fenced);
  ASSERT_TRUE(held.ok()) << held.error.message();
  ASSERT_TRUE(held.lock->fence.has_value());
  const std::string value = held.lock->value.str();
  EXPECT_TRUE(every_member_holds(value));
  // The token is in each resource's own slot's fence hash, on every member.
  for (std::size_t member = 0; member < members_.size(); ++member) {
    for (const std::string& resource : resources_) {
      const Reply token =
          master_for(member, resource).command({"HGET", slotted(resource) + "fence", resource});
      EXPECT_EQ(token.text, std::to_string(*held.lock->fence)) << resource;
    }
  }
  // A single lock on one of them waits for the set, then is fenced after it.
  BlockingClient other(config());
  EXPECT_FALSE(other.acquire(Resource(resources_[1])).ok());

  const ExtendResult extended = client.extend(*held.lock);
  ASSERT_TRUE(extended.ok()) << extended.error.message();
  EXPECT_TRUE(every_member_holds(value));
  EXPECT_FALSE(client.release(*extended.lock).error);
  for (std::size_t member = 0; member < members_.size(); ++member) {
    for (const std::string& resource : resources_) {
      EXPECT_FALSE(master_for(member, resource).exists(lock_key(resource))) << resource;
    }
  }
  const AcquireResult after = other.acquire(Resource(resources_[1]), fenced);
  ASSERT_TRUE(after.ok()) << after.error.message();
  EXPECT_GT(*after.lock->fence, *held.lock->fence);
  EXPECT_FALSE(other.release(*after.lock).error);
}

// A fenced set across slots that has to wait takes its members one at a
// time in their lines, adopts them slot by slot (one adopt_all per slot)
// and fences the adopted set in every slot: its token is above the
// holder's it waited for, and stored in each resource's own slot.
TEST_F(ClusterSet, AFencedSetAcrossSlotsWaitsItsTurnAndIsAdoptedAndFencedSlotBySlot) {
  ASSERT_EQ(resources_.size(), 3U);
  BlockingClient holder(config());
  BlockingClient client(config());
  AcquireOptions fenced;
  fenced.fenced = true;
  const AcquireResult single = holder.acquire(Resource(resources_[2]), fenced);
  ASSERT_TRUE(single.ok()) << single.error.message();
  AcquireOptions waits = fenced;
  waits.wait = std::chrono::seconds(20);
  // The holder lets go once the set has its place in the held resource's
  // line on every member, so that the set is served at its turn.
  std::thread release([&] {
    const std::string& busy = resources_[2];
    const std::string line = slotted(busy) + "queue:" + busy;
    EXPECT_TRUE(eventually([&] {
      for (std::size_t member = 0; member < members_.size(); ++member) {
        if (master_for(member, busy).command({"ZCARD", line}).integer != 1) return false;
      }
      return true;
    })) << "the set took no place in the line of "
        << busy;
    EXPECT_FALSE(holder.release(*single.lock).error);
  });
  const AcquireResult held = client.acquire(set(), waits);
  release.join();
  ASSERT_TRUE(held.ok()) << held.error.message();
  ASSERT_TRUE(held.lock->fence.has_value());
  EXPECT_GT(*held.lock->fence, *single.lock->fence);
  EXPECT_FALSE(held.places.empty()) << "the set did not wait its turn";
  EXPECT_TRUE(every_member_holds(held.lock->value.str()));
  for (std::size_t member = 0; member < members_.size(); ++member) {
    for (const std::string& resource : resources_) {
      const Reply token =
          master_for(member, resource).command({"HGET", slotted(resource) + "fence", resource});
      EXPECT_EQ(token.text, std::to_string(*held.lock->fence)) << resource;
    }
  }
  EXPECT_FALSE(client.release(*held.lock).error);
}

// A guard renews a set across slots part by part: its keys outlive three
// TTLs on every member, and go with the guard.
TEST_F(ClusterSet, AGuardRenewsASetAcrossSlotsInEverySlot) {
  ASSERT_EQ(resources_.size(), 3U);
  BlockingClient client(config());
  // Every slot marked first (each slot's first use is a recovery round),
  // so that the short TTL below times the renewals alone.
  const AcquireResult first = client.acquire(set());
  ASSERT_TRUE(first.ok()) << first.error.message();
  ASSERT_FALSE(client.release(*first.lock).error);
  GuardOptions options;
  options.acquire.ttl = std::chrono::milliseconds(1000);
  options.acquire.retry_count = 3;
  std::string value;
  {
    Guard guard = client.lock(set(), options);
    ASSERT_TRUE(guard.valid()) << guard.error().message();
    value = guard.lock().value.str();
    std::this_thread::sleep_for(std::chrono::milliseconds(3000));
    EXPECT_TRUE(guard.valid()) << guard.error().message();
    EXPECT_TRUE(every_member_holds(value));
  }
  for (std::size_t member = 0; member < members_.size(); ++member) {
    for (const std::string& resource : resources_) {
      EXPECT_NE(master_for(member, resource).get(lock_key(resource)), value) << resource;
    }
  }
}

// Member 0 refuses the set in one slot (another value holds that
// resource's key there) and grants it in the others; the other members
// grant it whole, so the set is held. Member 0 keeps none of it: what its
// other slots granted is undone, whether its answer came before the
// decision or after.
TEST_F(ClusterSet, AMemberThatRefusesASetInOneSlotKeepsNoneOfItInTheOthers) {
  ASSERT_EQ(resources_.size(), 3U);
  BlockingClient client(config());
  // Once held and released, so that every slot carries its marker (a key
  // found in a slot without one would make the slot recover first).
  const AcquireResult first = client.acquire(set());
  ASSERT_TRUE(first.ok()) << first.error.message();
  ASSERT_FALSE(client.release(*first.lock).error);
  const std::string refused = resources_[1];
  ASSERT_EQ(
      master_for(0, refused).command({"SET", lock_key(refused), "someone", "PX", "60000"}).text,
      "OK");
  const AcquireResult held = client.acquire(set());
  ASSERT_TRUE(held.ok()) << held.error.message();
  const std::string value = held.lock->value.str();
  EXPECT_TRUE(eventually([&] {
    return master_for(0, resources_[0]).get(lock_key(resources_[0])) != value &&
           master_for(0, resources_[2]).get(lock_key(resources_[2])) != value;
  })) << "member 0 still holds the set's other slots";
  EXPECT_EQ(master_for(0, refused).get(lock_key(refused)), "someone");
  for (std::size_t member = 1; member < members_.size(); ++member) {
    for (const std::string& resource : resources_) {
      EXPECT_EQ(master_for(member, resource).get(lock_key(resource)), value) << resource;
    }
  }
  // Extends count member 0 as not holding it, and still win.
  const ExtendResult extended = client.extend(*held.lock);
  EXPECT_TRUE(extended.ok()) << extended.error.message();
  EXPECT_FALSE(client.release(*held.lock).error);
}

}  // namespace
}  // namespace redlock::test
