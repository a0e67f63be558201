// The lock kinds beyond the mutex on real nodes: a semaphore's permits (at
// most k holders, one count for all its clients) and a lock over several
// resources at once (all or nothing on each node, exclusion with plain
// locks on the same names).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

std::string permit_key_of(const std::string& semaphore, std::uint32_t permit) {
  return "redlock:sem:" + semaphore + ":" + std::to_string(permit);
}

// How many keys of `pattern` the running nodes hold, all together.
std::size_t keys_matching(RedisCluster& cluster, const std::string& pattern) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    count += cluster.node(i).probe().keys(pattern).size();
  }
  return count;
}

class SemaphoreTest : public ::testing::Test {
 protected:
  RedisCluster cluster{5};
  // How many nodes hold `permit`'s key with its value.
  std::size_t nodes_holding_key(const Lock& permit) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (cluster.node(i).probe().get(permit_key_of(permit.resource.str(), *permit.permit)) ==
          permit.value.str()) {
        ++count;
      }
    }
    return count;
  }
};

TEST_F(SemaphoreTest, GrantsAtMostKPermitsEachToOneHolder) {
  initialise_quorum(cluster);  // no recovery round before the first attempt
  BlockingClient client(config_for(cluster));
  const Semaphore keys("api-keys", 3);
  std::vector<Lock> held;
  std::set<std::uint32_t> permits;
  for (int i = 0; i < 3; ++i) {
    AcquireResult result = client.acquire(keys);
    ASSERT_TRUE(result.ok()) << i << ": " << result.error.message();
    ASSERT_TRUE(result.lock->permit.has_value());
    EXPECT_EQ(result.attempts, 1) << "a free permit on nodes that agree: one round";
    EXPECT_EQ(result.lock->permits, 3u);
    EXPECT_EQ(result.lock->resource.str(), "api-keys");
    EXPECT_TRUE(permits.insert(*result.lock->permit).second) << "permit given twice";
    // The permit is an ordinary lock key holding the holder's value — on
    // every node once the last grants, which came after the decision, land.
    EXPECT_TRUE(eventually([&] { return nodes_holding_key(*result.lock) == cluster.size(); }))
        << nodes_holding_key(*result.lock) << " of " << cluster.size();
    held.push_back(*result.lock);
  }
  EXPECT_EQ(permits, (std::set<std::uint32_t>{0, 1, 2}));

  const AcquireResult fourth = client.acquire(keys);
  EXPECT_EQ(fourth.error, make_error_code(errc::not_acquired));
  // Decided at the third "busy": the nodes still to answer are pending.
  for (const NodeOutcome& node : fourth.nodes) {
    EXPECT_TRUE(node.status == NodeStatus::busy || node.status == NodeStatus::pending)
        << to_string(node.status);
  }

  // A released permit is the next holder's.
  const std::uint32_t freed = *held[1].permit;
  EXPECT_EQ(client.release(held[1]).released, cluster.size());
  const AcquireResult next = client.acquire(keys);
  ASSERT_TRUE(next.ok()) << next.error.message();
  EXPECT_EQ(*next.lock->permit, freed);
}

TEST_F(SemaphoreTest, AnotherCountIsRefusedWhileAPermitIsHeldAndTakenOnceNoneIs) {
  BlockingClient client(config_for(cluster));
  const AcquireResult three = client.acquire(Semaphore("pool", 3));
  ASSERT_TRUE(three.ok()) << three.error.message();

  const AcquireResult five = client.acquire(Semaphore("pool", 5));
  EXPECT_EQ(five.error, make_error_code(errc::invalid_argument));
  std::size_t differing = 0;
  for (const NodeOutcome& node : five.nodes) {
    if (node.status != NodeStatus::permits_differ) continue;
    ++differing;
    EXPECT_EQ(node.holder_ttl_ms, 3) << "the count the node records";
    EXPECT_NE(node.detail.find("3 permits"), std::string::npos) << node.detail;
  }
  EXPECT_GE(differing, 1u);
  // The refused attempt left nothing: only the one permit of the first.
  EXPECT_EQ(keys_matching(cluster, "redlock:sem:pool:*"), cluster.size());

  (void)client.release(*three.lock);
  const AcquireResult changed = client.acquire(Semaphore("pool", 5));
  ASSERT_TRUE(changed.ok()) << "no permit is held: the count may change";
  EXPECT_EQ(changed.lock->permits, 5u);
  EXPECT_EQ(client.acquire(Semaphore("pool", 3)).error, make_error_code(errc::invalid_argument));
}

TEST_F(SemaphoreTest, GrantsSplitOverPermitsNeverMakeAThirdHolderOfTwoPermits) {
  // The state in which a per-node "fewer than k holders" counter would
  // admit a third holder of two permits: A holds permit 0 on nodes
  // {0,1,2}, B permit 1 on {2,3,4}. Each node still has a free permit but
  // node 2; the free ones differ, so no permit can reach a majority.
  initialise_quorum(cluster);
  for (std::size_t i : {0u, 1u, 2u}) {
    ASSERT_TRUE(cluster.node(i).probe().set(permit_key_of("pair", 0), "A", milliseconds(10000)));
  }
  for (std::size_t i : {2u, 3u, 4u}) {
    ASSERT_TRUE(cluster.node(i).probe().set(permit_key_of("pair", 1), "B", milliseconds(10000)));
  }
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    ASSERT_TRUE(cluster.node(i).probe().set("redlock:permits:pair", "2", milliseconds(10000)));
  }
  BlockingClient client(config_for(cluster));
  AcquireOptions options;
  options.retry_count = 3;
  options.retry_delay = milliseconds(5);
  const AcquireResult third = client.acquire(Semaphore("pair", 2), options);
  EXPECT_EQ(third.error, make_error_code(errc::not_acquired));
  EXPECT_EQ(third.attempts, 4);
  // Its grants were undone: A and B still hold exactly what they held.
  ASSERT_TRUE(eventually([&] { return keys_matching(cluster, "redlock:sem:pair:*") == 6; }));
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    const auto zero = cluster.node(i).probe().get(permit_key_of("pair", 0));
    const auto one = cluster.node(i).probe().get(permit_key_of("pair", 1));
    EXPECT_EQ(zero.value_or("A"), "A") << "node " << i;
    EXPECT_EQ(one.value_or("B"), "B") << "node " << i;
  }
}

TEST_F(SemaphoreTest, GrantsOfAnotherPermitThanTheOneWonAreUndone) {
  // Nodes 3 and 4 have permit 0 taken: whenever an attempt tries permit 0
  // first, nodes 0-2 grant it (and win it) while 3 and 4 grant permit 1 —
  // before or after the decision. Those grants must not stay.
  initialise_quorum(cluster);
  for (std::size_t i : {3u, 4u}) {
    ASSERT_TRUE(cluster.node(i).probe().set(permit_key_of("two", 0), "other", milliseconds(60000)));
    ASSERT_TRUE(cluster.node(i).probe().set("redlock:permits:two", "2", milliseconds(60000)));
  }
  BlockingClient client(config_for(cluster));
  int won_zero = 0;
  for (int round = 0; round < 12; ++round) {
    const AcquireResult held = client.acquire(Semaphore("two", 2));
    ASSERT_TRUE(held.ok()) << held.error.message();
    const std::uint32_t other = 1 - *held.lock->permit;
    if (*held.lock->permit == 0) ++won_zero;
    EXPECT_TRUE(eventually([&] {
      for (std::size_t i = 0; i < cluster.size(); ++i) {
        if (cluster.node(i).probe().get(permit_key_of("two", other)) == held.lock->value.str()) {
          return false;
        }
      }
      return true;
    })) << "round "
        << round << ": a grant of permit " << other << " stayed";
    (void)client.release(*held.lock);
  }
  EXPECT_GT(won_zero, 0) << "no attempt tried permit 0 first in 12 (each does with p = 1/2)";
}

TEST_F(SemaphoreTest, FencedPermitsGetTokensOrderedPerPermit) {
  BlockingClient client(config_for(cluster));
  AcquireOptions fenced;
  fenced.fenced = true;
  std::vector<std::uint64_t> tokens_of_permit_0;
  for (int i = 0; i < 3; ++i) {
    AcquireResult one = client.acquire(Semaphore("fenced", 1), fenced);
    ASSERT_TRUE(one.ok()) << one.error.message();
    ASSERT_TRUE(one.lock->fence.has_value());
    tokens_of_permit_0.push_back(*one.lock->fence);
    (void)client.release(*one.lock);
  }
  EXPECT_TRUE(std::is_sorted(tokens_of_permit_0.begin(), tokens_of_permit_0.end()));
  EXPECT_LT(tokens_of_permit_0.front(), tokens_of_permit_0.back());
  // Recorded per permit, in the fence hash's field for it.
  const auto stored = cluster.node(0).probe().command({"HGET", "redlock:fence", "sem:fenced:0"});
  EXPECT_EQ(stored.text, std::to_string(tokens_of_permit_0.back()));
}

TEST_F(SemaphoreTest, AGuardRenewsItsPermitAndReleasesIt) {
  BlockingClient client(config_for(cluster, milliseconds(300)));
  {
    Guard guard = client.lock(Semaphore("renewed", 2));
    ASSERT_TRUE(guard.owns_lock()) << guard.error().message();
    const std::string key = permit_key_of("renewed", *guard.lock().permit);
    // Past the TTL several times over, and past the count's first expiry
    // (twice the TTL), the permit and the count are kept, and the count
    // never expires before the permit (read together, atomically).
    int count_outlived = 0;
    int samples = 0;
    ASSERT_TRUE(eventually([&] {
      const Reply both = cluster.node(0).probe().command(
          {"EVAL", "return {redis.call('PTTL', KEYS[1]), redis.call('PTTL', KEYS[2])}", "2",
           "redlock:permits:renewed", key});
      ++samples;
      if (both.kind != Reply::Kind::array || both.elements.size() != 2 ||
          both.elements[0].integer < both.elements[1].integer) {
        ++count_outlived;
      }
      return guard.renewals() >= 8;
    }));
    EXPECT_EQ(count_outlived, 0) << "of " << samples << " samples";
    EXPECT_TRUE(guard.valid());
    EXPECT_EQ(cluster.node(0).probe().get(key), guard.lock().value.str());
    EXPECT_EQ(cluster.node(0).probe().get("redlock:permits:renewed"), "2");
  }
  EXPECT_EQ(keys_matching(cluster, "redlock:sem:renewed:*"), 0u);
}

TEST_F(SemaphoreTest, AReleaseWakesAWaiter) {
  QuorumConfig config = config_for(cluster);
  BlockingClient holder(config);
  BlockingClient waiter(config);
  const AcquireResult held = holder.acquire(Semaphore("one", 1));
  ASSERT_TRUE(held.ok());
  AcquireResult waited;
  std::atomic<bool> done{false};
  std::thread waiting([&] {
    AcquireOptions patient;
    patient.retry_delay = milliseconds(60000);  // the fallback would take ~a minute
    patient.wait = milliseconds(10000);
    waited = waiter.acquire(Semaphore("one", 1), patient);
    done = true;
  });
  // Released once the waiter listens on every node (bounded wait).
  EXPECT_TRUE(subscribers_become(cluster, "redlock:released:sem:one", 1));
  (void)holder.release(*held.lock);
  EXPECT_TRUE(eventually([&] { return done.load(); }, milliseconds(3000)))
      << "not woken by the release";
  waiting.join();
  EXPECT_TRUE(waited.ok()) << waited.error.message();
}

TEST_F(SemaphoreTest, RefusesCountsOutOfRangeAndEmptyNames) {
  BlockingClient client(config_for(cluster));
  EXPECT_EQ(client.acquire(Semaphore("s", 0)).error, make_error_code(errc::invalid_argument));
  EXPECT_EQ(client.acquire(Semaphore("s", Semaphore::kMaxPermits + 1)).error,
            make_error_code(errc::invalid_argument));
  EXPECT_EQ(client.acquire(Semaphore("", 2)).error, make_error_code(errc::invalid_argument));
}

class MultiLockTest : public ::testing::Test {
 protected:
  RedisCluster cluster{5};
  std::vector<Resource> names(std::initializer_list<const char*> list) {
    std::vector<Resource> out;
    for (const char* name : list) out.emplace_back(name);
    return out;
  }
};

TEST_F(MultiLockTest, HoldsEveryResourceOnEveryNodeAndReleasesThemAll) {
  BlockingClient client(config_for(cluster));
  const AcquireResult held = client.acquire(names({"a", "b", "c"}));
  ASSERT_TRUE(held.ok()) << held.error.message();
  EXPECT_EQ(held.lock->resource.str(), "a");
  ASSERT_EQ(held.lock->resources.size(), 3u);
  for (const char* name : {"a", "b", "c"}) {
    // On every node once the grants that came after the decision land.
    EXPECT_TRUE(eventually([&] { return nodes_holding(cluster, name) == cluster.size(); })) << name;
    EXPECT_EQ(cluster.node(2).probe().get(key_of(name)), held.lock->value.str());
  }
  const ExtendResult extended = client.extend(*held.lock);
  EXPECT_TRUE(extended.ok()) << extended.error.message();
  EXPECT_EQ(client.release(*held.lock).released, cluster.size());
  for (const char* name : {"a", "b", "c"}) EXPECT_EQ(nodes_holding(cluster, name), 0u) << name;
}

TEST_F(MultiLockTest, APlainLockOnOneNameKeepsTheWholeSetOutAndNothingStays) {
  BlockingClient client(config_for(cluster));
  const AcquireResult b = client.acquire(Resource("b"));
  ASSERT_TRUE(b.ok());
  const AcquireResult both = client.acquire(names({"a", "b"}));
  EXPECT_EQ(both.error, make_error_code(errc::not_acquired));
  EXPECT_EQ(nodes_holding(cluster, "a"), 0u) << "a node granted part of the set";
  (void)client.release(*b.lock);

  const AcquireResult set = client.acquire(names({"a", "b"}));
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(client.acquire(Resource("b")).error, make_error_code(errc::not_acquired));
  EXPECT_EQ(client.acquire(names({"b", "c"})).error, make_error_code(errc::not_acquired));
  EXPECT_TRUE(client.acquire(Resource("c")).ok()) << "c is not in the set";
}

TEST_F(MultiLockTest, ANodeGrantsAllOrNothing) {
  initialise_quorum(cluster);
  // Node 0 has b taken by someone else: it grants neither a nor b.
  ASSERT_TRUE(cluster.node(0).probe().set(key_of("b"), "other", milliseconds(10000)));
  BlockingClient client(config_for(cluster));
  const AcquireResult held = client.acquire(names({"a", "b"}));
  ASSERT_TRUE(held.ok()) << held.error.message();
  // Busy, or still pending when the other four decided first.
  EXPECT_TRUE(held.nodes[0].status == NodeStatus::busy ||
              held.nodes[0].status == NodeStatus::pending)
      << to_string(held.nodes[0].status);
  EXPECT_FALSE(cluster.node(0).probe().exists(key_of("a")));
  EXPECT_EQ(cluster.node(0).probe().get(key_of("b")), "other");
  // The acquire answers at a majority; the fourth grant may still be on
  // its way.
  EXPECT_TRUE(eventually([&] { return nodes_holding(cluster, "a") == 4u; }))
      << nodes_holding(cluster, "a");
}

TEST_F(MultiLockTest, FencedSetsGetATokenAboveEveryEarlierTokenOfEachResource) {
  BlockingClient client(config_for(cluster));
  AcquireOptions fenced;
  fenced.fenced = true;
  std::uint64_t a_token = 0;
  for (int i = 0; i < 3; ++i) {
    const AcquireResult a = client.acquire(Resource("a"), fenced);
    ASSERT_TRUE(a.ok());
    a_token = *a.lock->fence;
    (void)client.release(*a.lock);
  }
  const AcquireResult set = client.acquire(names({"a", "b"}), fenced);
  ASSERT_TRUE(set.ok()) << set.error.message();
  ASSERT_EQ(set.lock->fences.size(), 2u);
  EXPECT_GT(set.lock->fences[0], a_token);
  EXPECT_GT(set.lock->fences[1], 0u);
  EXPECT_EQ(set.lock->fence, set.lock->fences[0]);
  (void)client.release(*set.lock);
  const AcquireResult b = client.acquire(Resource("b"), fenced);
  ASSERT_TRUE(b.ok());
  EXPECT_GT(*b.lock->fence, set.lock->fences[1]) << "b's next holder comes after the set";
}

TEST_F(MultiLockTest, AnExtendFailsOnceAMajorityLostOneOfTheResources) {
  BlockingClient client(config_for(cluster));
  const AcquireResult held = client.acquire(names({"x", "y"}));
  ASSERT_TRUE(held.ok());
  for (std::size_t i : {0u, 1u, 2u}) {
    (void)cluster.node(i).probe().command({"DEL", key_of("y")});
  }
  EXPECT_EQ(client.extend(*held.lock).error, make_error_code(errc::lost));
}

TEST_F(MultiLockTest, RefusesEmptyDuplicateOrTooManyNames) {
  BlockingClient client(config_for(cluster));
  EXPECT_EQ(client.acquire(std::vector<Resource>{}).error, make_error_code(errc::invalid_argument));
  EXPECT_EQ(client.acquire(names({"a", "a"})).error, make_error_code(errc::invalid_argument));
  EXPECT_EQ(client.acquire(names({"a", ""})).error, make_error_code(errc::invalid_argument));
  std::vector<Resource> many;
  for (int i = 0; i < 65; ++i) many.emplace_back("r" + std::to_string(i));
  EXPECT_EQ(client.acquire(many).error, make_error_code(errc::invalid_argument));
  many.pop_back();
  EXPECT_TRUE(client.acquire(many).ok()) << "64 names are allowed";
}

TEST_F(MultiLockTest, AGuardRenewsTheWholeSet) {
  BlockingClient client(config_for(cluster, milliseconds(300)));
  {
    Guard guard = client.lock(names({"p", "q"}));
    ASSERT_TRUE(guard.owns_lock()) << guard.error().message();
    ASSERT_TRUE(eventually([&] { return guard.renewals() >= 4; }));
    EXPECT_TRUE(guard.valid());
    EXPECT_EQ(nodes_holding(cluster, "p"), cluster.size());
    EXPECT_EQ(nodes_holding(cluster, "q"), cluster.size());
  }
  EXPECT_EQ(nodes_holding(cluster, "p"), 0u);
  EXPECT_EQ(nodes_holding(cluster, "q"), 0u);
}

TEST(Inspect, ShowsTheHolderItsValidityAndFenceAndWritesNothing) {
  RedisCluster cluster{5};
  BlockingClient client(config_for(cluster, milliseconds(10000)));
  const Inspection free = client.inspect(Resource("doc"));
  ASSERT_TRUE(free.ok()) << free.error.message();
  EXPECT_FALSE(free.holder.has_value());
  ASSERT_EQ(free.nodes.size(), 5u);
  for (const NodeInspection& node : free.nodes) {
    EXPECT_TRUE(node.answered) << node.detail;
    EXPECT_FALSE(node.key.value.has_value());
    EXPECT_EQ(node.key.pttl_ms, -2);
  }

  AcquireOptions fenced;
  fenced.fenced = true;
  const AcquireResult held = client.acquire(Resource("doc"), fenced);
  ASSERT_TRUE(held.ok());
  const Inspection seen = client.inspect(Resource("doc"));
  ASSERT_TRUE(seen.ok());
  ASSERT_TRUE(seen.holder.has_value());
  EXPECT_EQ(seen.holder->value, held.lock->value.str());
  EXPECT_GT(seen.holder->validity, milliseconds(9000));
  EXPECT_LE(seen.holder->validity, milliseconds(10000));
  EXPECT_EQ(seen.holder->fence, *held.lock->fence);
  EXPECT_EQ(seen.fence, *held.lock->fence);
  EXPECT_EQ(seen.nodes[3].key.value, held.lock->value.str());
  // Read only: the lock is as it was, and can still be released by its value.
  EXPECT_EQ(client.release(*held.lock).released, cluster.size());
}

TEST(Inspect, ASplitShowsNoHolderAndAMinorityAnsweringIsNoQuorum) {
  RedisCluster cluster{3};
  initialise_quorum(cluster);
  ASSERT_TRUE(cluster.node(0).probe().set(key_of("split"), "a", milliseconds(10000)));
  ASSERT_TRUE(cluster.node(1).probe().set(key_of("split"), "b", milliseconds(10000)));
  QuorumConfig config = config_for(cluster);
  BlockingClient client(config);
  const Inspection split = client.inspect(Resource("split"));
  ASSERT_TRUE(split.ok());
  EXPECT_FALSE(split.holder.has_value());
  EXPECT_EQ(split.nodes[0].key.value, "a");
  EXPECT_EQ(split.nodes[1].key.value, "b");

  cluster.node(1).stop();
  cluster.node(2).stop();
  const Inspection alone = client.inspect(Resource("split"));
  EXPECT_EQ(alone.error, make_error_code(errc::no_quorum));
  EXPECT_FALSE(alone.nodes[1].answered);
  EXPECT_FALSE(alone.nodes[1].detail.empty());
}

TEST(Inspect, ASemaphoreShowsEachHeldPermitAndTheRecordedCount) {
  RedisCluster cluster{3};
  BlockingClient client(config_for(cluster));
  const AcquireResult first = client.acquire(Semaphore("keys", 4));
  const AcquireResult second = client.acquire(Semaphore("keys", 4));
  ASSERT_TRUE(first.ok() && second.ok());
  const Inspection seen = client.inspect(Semaphore("keys", 4));
  ASSERT_TRUE(seen.ok()) << seen.error.message();
  ASSERT_EQ(seen.holders.size(), 2u);
  std::set<std::string> values{seen.holders[0].value, seen.holders[1].value};
  EXPECT_EQ(values, (std::set<std::string>{first.lock->value.str(), second.lock->value.str()}));
  for (const HolderView& holder : seen.holders) {
    ASSERT_TRUE(holder.permit.has_value());
    EXPECT_TRUE(*holder.permit == *first.lock->permit || *holder.permit == *second.lock->permit);
  }
  EXPECT_EQ(seen.nodes[0].permits_recorded, 4u);
  EXPECT_EQ(seen.nodes[0].permits.size(), 4u);
  // Asked with a smaller count, the permits of the recorded one are shown.
  EXPECT_EQ(client.inspect(Semaphore("keys", 1)).nodes[0].permits.size(), 4u);
}

}  // namespace
}  // namespace redlock::test
