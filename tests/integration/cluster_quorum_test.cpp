// A quorum of three members that are each a real Redis Cluster of three
// shards (docs/algorithm.md, "Key layout"): every key a lock call names —
// the lock, its fence counter, the node rules' marker, recovering key and
// fence hash — is in the slot of the resource's name, so the calls run on
// the one master of that slot in each member; every lock kind works there;
// a shard that lost its data is recovered for the slot a lock needs, with
// the delay, while its other slots and the other members keep granting.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <optional>
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

// Three members of three shards each, without replicas.
class ClusterQuorum : public ::testing::Test {
 protected:
  ClusterQuorum() : members_(three_members_of_three_shards()) {}

  QuorumConfig config() {
    QuorumConfig quorum = quorum_of(members_);
    quorum.lock.ttl = std::chrono::seconds(10);
    return quorum;
  }

  // A probe of the master that takes `resource`'s keys in `member`.
  RedisProbe master_for(std::size_t member, const std::string& resource) {
    return master_of(members_, member, resource);
  }

  std::vector<std::unique_ptr<ShardedMember>> members_;
};

TEST_F(ClusterQuorum, ALocksKeysAreAllInItsResourcesSlotOnItsMasterInEveryMember) {
  BlockingClient client(config());
  AcquireOptions fenced;
  fenced.fenced = true;
  const std::string resource = "orders:42";
  const AcquireResult held = client.acquire(Resource(resource), fenced);
  ASSERT_TRUE(held.ok()) << held.error.message();
  ASSERT_TRUE(held.lock->fence.has_value());
  const std::string prefix = slotted(resource);
  const std::string lock_key = prefix + "lock:" + resource;
  for (std::size_t member = 0; member < members_.size(); ++member) {
    SCOPED_TRACE("member " + std::to_string(member));
    RedisProbe master = master_for(member, resource);
    EXPECT_EQ(master.get(lock_key), held.lock->value.str());
    EXPECT_TRUE(master.exists(prefix + "node")) << "no marker in the resource's slot";
    const Reply token = master.command({"HGET", prefix + "fence", resource});
    EXPECT_EQ(token.text, std::to_string(*held.lock->fence));
    // The cluster puts each of these keys in the resource's slot.
    for (const std::string& key : {lock_key, prefix + "node", prefix + "fence"}) {
      EXPECT_EQ(master.command({"CLUSTER", "KEYSLOT", key}).integer, hash_slot(resource)) << key;
    }
  }
  const ExtendResult extended = client.extend(*held.lock);
  ASSERT_TRUE(extended.ok()) << extended.error.message();
  ASSERT_FALSE(client.release(*extended.lock).error);
  for (std::size_t member = 0; member < members_.size(); ++member) {
    EXPECT_FALSE(master_for(member, resource).exists(lock_key)) << member;
  }
}

TEST_F(ClusterQuorum, ASecondClientIsRefusedWhileTheLockIsHeldAndGrantedOnceItIsReleased) {
  BlockingClient a(config());
  BlockingClient b(config());
  const AcquireResult held = a.acquire(Resource("job"));
  ASSERT_TRUE(held.ok()) << held.error.message();
  AcquireOptions once;
  once.fair = false;
  const AcquireResult refused = b.acquire(Resource("job"), once);
  EXPECT_FALSE(refused.ok());
  ASSERT_FALSE(a.release(*held.lock).error);
  const AcquireResult second = b.acquire(Resource("job"), once);
  EXPECT_TRUE(second.ok()) << second.error.message();
}

// A waiter's listening mark (a key of its release channel's name, which
// the release reads before it publishes) lives in the resource's slot on
// each member's master of it, so the holder's release there wakes it.
TEST_F(ClusterQuorum, AWaitersListeningMarkIsOnTheMasterOfItsResourcesSlot) {
  BlockingClient a(config());
  BlockingClient b(config());
  const std::string resource = "queue-job";
  const AcquireResult held = a.acquire(Resource(resource));
  ASSERT_TRUE(held.ok()) << held.error.message();
  AcquireOptions waiting;
  waiting.wait = std::chrono::seconds(30);
  std::promise<AcquireResult> result;
  (void)b.acquire_async(Resource(resource), waiting,
                        [&result](AcquireResult done) { result.set_value(std::move(done)); });
  const std::string mark = slotted(resource) + "released:" + resource;
  for (std::size_t member = 0; member < members_.size(); ++member) {
    RedisProbe master = master_for(member, resource);
    EXPECT_TRUE(eventually([&] { return master.exists(mark); }))
        << "no listening mark on member " << member << "'s master of the slot";
  }
  ASSERT_FALSE(a.release(*held.lock).error);
  std::future<AcquireResult> done = result.get_future();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  const AcquireResult second = done.get();
  EXPECT_TRUE(second.ok()) << second.error.message();
}

// Per slot, wake-ups use shard channels: a waiter in line listens on its
// client's wake channel of the resource's slot (SSUBSCRIBE) at each
// member's master of that slot, nowhere else and on no plain channel, and
// the holder's release there (SPUBLISH) names it.
TEST_F(ClusterQuorum, AWaiterIsWokenThroughTheShardThatOwnsItsResource) {
  BlockingClient a(config());
  BlockingClient b(config());
  const std::string resource = "shard-woken";
  const AcquireResult held = a.acquire(Resource(resource));
  ASSERT_TRUE(held.ok()) << held.error.message();
  std::future<AcquireResult> waited = waiter_woken_only_by_a_release(b, resource);
  const std::string wake_channels = slotted(resource) + "released:@*";
  for (std::size_t member = 0; member < members_.size(); ++member) {
    SCOPED_TRACE("member " + std::to_string(member));
    const std::size_t owner = members_[member]->shard_of(hash_slot(resource));
    EXPECT_TRUE(eventually([&] {
      return shard_channels(members_[member]->master(owner), wake_channels) == 1;
    })) << "the waiter's wake channel is not a shard channel of its slot's master";
    for (std::size_t shard = 0; shard < members_[member]->shards(); ++shard) {
      EXPECT_EQ(plain_channels(members_[member]->master(shard), "redlock:*"), 0U) << shard;
      if (shard != owner) {
        EXPECT_EQ(shard_channels(members_[member]->master(shard), "redlock:*"), 0U) << shard;
      }
    }
  }
  expect_woken_by_the_release(a, *held.lock, b, waited);
}

// An elected leader's announcement and its resignation reach an observer
// through the election's shard: the observer listens on the election's
// shard channel at each member's master of its slot, and with a poll of a
// minute only those messages can tell it in time.
TEST_F(ClusterQuorum, AnObserverHearsTheLeaderComeAndGoThroughTheElectionsShard) {
  BlockingClient candidate(config());
  LoopRun run(config());
  ObservedLeaders observed;
  const std::string resource = "election:web";
  const std::string channel = slotted(resource) + "released:" + resource + "#elected";
  std::atomic<bool> acted{false};
  std::thread actor([&] {
    const bool listening = eventually([&] {
      if (observed.count() != 1) return false;
      for (auto& member : members_) {
        RedisServer& owner = member->master(member->shard_of(hash_slot(resource)));
        if (shard_subscribers(owner, channel) != 1) return false;
      }
      return true;
    });
    if (listening) {
      CampaignOptions options;
      options.payload = "10.0.0.1";
      Guard leader = candidate.campaign(Election("web"), options);
      if (eventually([&] { return observed.count() == 2; }, std::chrono::milliseconds(3000))) {
        (void)leader.release();
        (void)eventually([&] { return observed.count() == 3; }, std::chrono::milliseconds(3000));
      }
    }
    acted = true;
  });
  ObserveOptions options;
  options.poll = std::chrono::milliseconds(60000);
  EXPECT_TRUE(observe_until_acted(run, Election("web"), options, observed, acted, 4,
                                  std::chrono::milliseconds(30000)));
  actor.join();
  const std::vector<LeaderResult> seen = observed.all();
  ASSERT_EQ(seen.size(), 4U) << "the election and the resignation were not both pushed";
  EXPECT_FALSE(seen[0].leader.has_value());
  ASSERT_TRUE(seen[1].leader.has_value());
  EXPECT_EQ(seen[1].leader->payload, "10.0.0.1");
  EXPECT_FALSE(seen[2].leader.has_value());
  EXPECT_EQ(seen[3].error, make_error_code(errc::cancelled));
}

// Single servers in a quorum with a cluster member use shard channels too
// (Redis 7.0 serves them outside cluster mode): the one layout names every
// member's channels alike, and each release publishes with SPUBLISH.
TEST(ClusterQuorumMixed, SingleServersBesideAClusterWakeWaitersOnShardChannels) {
  ShardedMemberOptions options;
  options.replicas_per_shard = 0;
  ShardedMember member(options);
  RedisServer first;
  RedisServer second;
  ConfigResult parsed =
      config_from_addresses({member.address(), first.address(), second.address()});
  ASSERT_TRUE(parsed.ok()) << parsed.error.to_string();
  BlockingClient a(*parsed.config);
  BlockingClient b(*parsed.config);
  const std::string resource = "mixed-job";
  AcquireOptions patient;
  patient.wait = std::chrono::seconds(10);
  const AcquireResult held = a.acquire(Resource(resource), patient);
  ASSERT_TRUE(held.ok()) << held.error.message();
  std::future<AcquireResult> waited = waiter_woken_only_by_a_release(b, resource);
  const std::string wake_channels = slotted(resource) + "released:@*";
  for (RedisServer* single : {&first, &second}) {
    EXPECT_TRUE(eventually([&] { return shard_channels(*single, wake_channels) == 1; }))
        << single->address() << ": the waiter's wake channel is no shard channel there";
    EXPECT_EQ(plain_channels(*single, "redlock:*"), 0U) << single->address();
  }
  expect_woken_by_the_release(a, *held.lock, b, waited);
}

TEST_F(ClusterQuorum, EveryLockKindIsGrantedOverClusterMembers) {
  BlockingClient client(config());
  // A semaphore's permits and count in the semaphore's slot.
  const AcquireResult permit = client.acquire(Semaphore("api-keys", 2));
  ASSERT_TRUE(permit.ok()) << permit.error.message();
  EXPECT_TRUE(master_for(0, "api-keys").exists(slotted("api-keys") + "permits:api-keys"));
  // Two readers share the read side.
  AcquireOptions read;
  read.shared = true;
  const AcquireResult reader = client.acquire(Resource("doc"), read);
  const AcquireResult second_reader = client.acquire(Resource("doc"), read);
  ASSERT_TRUE(reader.ok()) << reader.error.message();
  EXPECT_TRUE(second_reader.ok()) << second_reader.error.message();
  // A fair lock's queue in the resource's slot.
  AcquireOptions fair;
  fair.fair = true;
  const AcquireResult queued = client.acquire(Resource("report"), fair);
  ASSERT_TRUE(queued.ok()) << queued.error.message();
  // A set in one slot (a shared hash tag) is one call; across slots, one
  // call per slot (cluster_set_test.cpp).
  const AcquireResult set = client.acquire(
      std::vector<Resource>{Resource("{user:7}:profile"), Resource("{user:7}:avatar")});
  ASSERT_TRUE(set.ok()) << set.error.message();
  const AcquireResult across =
      client.acquire(std::vector<Resource>{Resource("cart:1"), Resource("cart:2")});
  ASSERT_NE(hash_slot("cart:1"), hash_slot("cart:2"));
  ASSERT_TRUE(across.ok()) << across.error.message();
  for (const AcquireResult* each : {&permit, &reader, &second_reader, &queued, &set, &across}) {
    EXPECT_FALSE(client.release(*each->lock).error);
  }
}

TEST_F(ClusterQuorum, AShardThatLostItsDataGrantsNothingInThatSlotUntilRecovered) {
  BlockingClient a(config());
  const std::string resource = "alpha";
  // A resource whose slot another shard of member 0 takes.
  std::string elsewhere;
  for (int i = 0; elsewhere.empty(); ++i) {
    const std::string candidate = "beta-" + std::to_string(i);
    if (members_[0]->shard_of(hash_slot(candidate)) != members_[0]->shard_of(hash_slot(resource))) {
      elsewhere = candidate;
    }
  }
  for (const std::string& name : {resource, elsewhere}) {
    const AcquireResult warm = a.acquire(Resource(name));
    ASSERT_TRUE(warm.ok()) << warm.error.message();
    ASSERT_FALSE(a.release(*warm.lock).error);
  }
  // Member 0's master of alpha's slot loses everything, as a restart
  // without data would leave it.
  ASSERT_TRUE(master_for(0, resource).command({"FLUSHALL"}).is_ok());

  BlockingClient b(config());
  const AcquireResult held = b.acquire(Resource(resource));
  ASSERT_TRUE(held.ok()) << "the other two members are a majority: " << held.error.message();
  RedisProbe lost = master_for(0, resource);
  ASSERT_TRUE(eventually([&] { return lost.pttl(slotted(resource) + "recovering") > 0; }))
      << "no recovery delay in the slot that lost its data";
  // The recovery followed the refusal: member 0 never took the value.
  EXPECT_NE(lost.get(slotted(resource) + "lock:" + resource), held.lock->value.str());
  EXPECT_TRUE(lost.exists(slotted(resource) + "node"));
  AcquireOptions once;
  once.fair = false;
  ASSERT_FALSE(b.release(*held.lock).error);
  const AcquireResult again = b.acquire(Resource(resource), once);
  ASSERT_TRUE(again.ok()) << again.error.message();
  // (An acquire is decided at a majority: member 0's answer may come after
  // it, so what member 0 did is read on its master.)
  const std::string lock_key = slotted(resource) + "lock:" + resource;
  ASSERT_GT(lost.pttl(slotted(resource) + "recovering"), 0);
  EXPECT_NE(lost.get(lock_key), again.lock->value.str()) << "granted within the recovery delay";
  // Another shard of the same member kept its data: it grants at once.
  const AcquireResult other = b.acquire(Resource(elsewhere), once);
  ASSERT_TRUE(other.ok()) << other.error.message();
  RedisProbe kept = master_for(0, elsewhere);
  EXPECT_TRUE(eventually([&] {
    return kept.get(slotted(elsewhere) + "lock:" + elsewhere) == other.lock->value.str();
  })) << "the shard that kept its data did not grant";
}

// A shard's failover: its replica, promoted, holds copies of the markers
// of its master's slots but maybe not the grants its master acknowledged
// last. Each session's first word (check_slot_markers) takes the copies
// away, so the slot is recovered with the delay on that member.
// Three members of three shards, the first with a replica per shard.
class ClusterQuorumFailover : public ::testing::Test {
 protected:
  ClusterQuorumFailover() {
    for (const std::size_t replicas : {std::size_t{1}, std::size_t{0}, std::size_t{0}}) {
      ShardedMemberOptions options;
      options.shards = 3;
      options.replicas_per_shard = replicas;
      members.push_back(std::make_unique<ShardedMember>(options));
    }
  }

  QuorumConfig config() { return quorum_of(members); }

  std::vector<std::unique_ptr<ShardedMember>> members;
};

// ... and the promoted master scans its keyspace for copied markers once
// for its promotion: a later client's sessions there scan nothing.
TEST_F(ClusterQuorumFailover,
       APromotedShardMasterGrantsNothingInItsSlotsUntilRecoveredScannedOnce) {
  const QuorumConfig quorum = config();
  const std::string resource = "alpha";
  const std::uint16_t slot = hash_slot(resource);
  const std::size_t shard = members[0]->shard_of(slot);
  const std::string marker = slotted(resource) + "node";
  {
    BlockingClient a(quorum);
    const AcquireResult warm = a.acquire(Resource(resource));
    ASSERT_TRUE(warm.ok()) << warm.error.message();
    ASSERT_FALSE(a.release(*warm.lock).error);
  }
  RedisProbe replica(members[0]->replicas(shard).front()->port());
  // A cluster's replica serves reads only to a connection that asks.
  ASSERT_TRUE(replica.command({"READONLY"}).is_ok());
  ASSERT_TRUE(eventually([&] { return replica.exists(marker); })) << "the marker never replicated";
  ASSERT_TRUE(members[0]->fail_over(shard));

  BlockingClient b(quorum);
  const AcquireResult held = b.acquire(Resource(resource));
  ASSERT_TRUE(held.ok()) << "the other two members are a majority: " << held.error.message();
  RedisProbe promoted(members[0]->master(shard).port());
  ASSERT_TRUE(eventually([&] { return promoted.pttl(slotted(resource) + "recovering") > 0; }))
      << "no recovery delay on the promoted master";
  EXPECT_NE(promoted.get(slotted(resource) + "lock:" + resource), held.lock->value.str())
      << "the promoted master granted with its old master's marker";

  // The check recorded the promotion it scanned for, in the first slot the
  // map gives the promoted master.
  const std::uint16_t first_slot = static_cast<std::uint16_t>(members[0]->slots_of(shard).first);
  const std::string note = "redlock:{" + std::string(detail::slot_tag(first_slot)) + "}checked";
  ASSERT_TRUE(eventually([&] { return promoted.exists(note); })) << "no record of the check";
  // Another client's sessions at the promoted master, each opened with the
  // check (sent as EVAL: every other script goes as EVALSHA), scan
  // nothing more.
  const long long scanned = calls_of(promoted, "scan");
  const long long checks = calls_of(promoted, "eval");
  BlockingClient c(quorum);
  (void)c.acquire(Resource(resource));
  ASSERT_TRUE(eventually([&] { return calls_of(promoted, "eval") > checks; }))
      << "no session of the later client reached the promoted master";
  EXPECT_EQ(calls_of(promoted, "scan"), scanned) << "a later session scanned the keyspace again";
}

// A server promoted back to the master it was (a failover, then a
// failback): a client's session to it, opened while it was the first
// master, lasts through its time as a replica, which answers MOVED. Once
// it serves the slots again, that session's check predates the promotion;
// the link opens a new one, whose check takes the copy of the other
// server's marker away, and the slot is recovered with the delay.
TEST_F(ClusterQuorumFailover, AServerPromotedBackIsCheckedAgainOnANewSession) {
  QuorumConfig quorum = config();
  quorum.lock.ttl = std::chrono::milliseconds(1000);
  quorum.lock.max_ttl = std::chrono::milliseconds(1000);
  const std::string resource = "alpha";
  const std::size_t shard = members[0]->shard_of(hash_slot(resource));
  const std::string marker = slotted(resource) + "node";
  RedisServer& first = members[0]->master(shard);
  BlockingClient client(quorum);
  AcquireOptions once;
  once.fair = false;
  // Every member grants (and so holds the slot's marker), member 0 on the
  // server of `first`, until `until` says it is time to stop.
  const auto member_zero_grants = [&] {
    const AcquireResult held = client.acquire(Resource(resource), once);
    if (!held.ok()) return false;
    const ReleaseResult released = client.release(*held.lock);
    return released.nodes.size() == 3 && released.nodes[0].status == NodeStatus::released;
  };
  ASSERT_TRUE(member_zero_grants()) << "the slot was never marked on member 0";

  ASSERT_TRUE(members[0]->fail_over(shard));
  // The promoted replica recovers the slot with the delay, and then writes
  // a marker of its own, which the first server, its replica now, copies.
  ASSERT_TRUE(eventually(member_zero_grants, std::chrono::seconds(15)))
      << "the promoted replica never granted after its recovery";
  RedisProbe second(members[0]->master(shard).port());
  const std::optional<std::string> second_marker = second.get(marker);
  ASSERT_TRUE(second_marker.has_value());
  RedisProbe first_probe(first.port());
  ASSERT_TRUE(first_probe.command({"READONLY"}).is_ok());
  ASSERT_TRUE(eventually([&] { return first_probe.get(marker) == second_marker; }))
      << "the first server never copied its new master's marker";

  ASSERT_TRUE(members[0]->fail_over(shard));
  ASSERT_EQ(&members[0]->master(shard), &first);
  // Member 0's first answers may be none (its session is being opened
  // again) or come after the majority decided; its first answer in time
  // is what is checked.
  std::optional<NodeOutcome> answer;
  ASSERT_TRUE(eventually(
      [&] {
        const AcquireResult attempt = client.acquire(Resource(resource), once);
        EXPECT_TRUE(attempt.ok()) << "members 1 and 2 are a majority: " << attempt.error.message();
        if (attempt.ok()) (void)client.release(*attempt.lock);
        if (attempt.nodes.size() == 3 && attempt.nodes[0].status != NodeStatus::unreachable &&
            attempt.nodes[0].status != NodeStatus::timeout &&
            attempt.nodes[0].status != NodeStatus::pending) {
          answer = attempt.nodes[0];
        }
        return answer.has_value();
      },
      std::chrono::seconds(10)))
      << "member 0 never answered after the failback";
  EXPECT_EQ(answer->status, NodeStatus::recovering)
      << "the server promoted back answered " << to_string(answer->status) << " (" << answer->detail
      << ") on a session checked before its promotion";
  RedisProbe promoted(first.port());
  EXPECT_GT(promoted.pttl(slotted(resource) + "recovering"), 0) << "no recovery delay on it";
}

// Two members that are one cluster (named by two of its seeds): their
// votes grant and fail together, and the client says so in node health once
// it has read their maps.
TEST(ClusterQuorumConfig, TwoMembersThatAreOneClusterAreReportedAndOnlyOneOfThemVotes) {
  ShardedMemberOptions options;
  options.replicas_per_shard = 0;
  ShardedMember member(options);
  RedisServer single;
  ConfigResult parsed =
      config_from_addresses({"redis+cluster://" + member.seeds()[0],
                             "redis+cluster://" + member.seeds()[1], single.address()});
  ASSERT_TRUE(parsed.ok()) << parsed.error.to_string();
  // A member whose votes are refused is one that does not answer: a slot's
  // first use then waits for the recovery delay, which a short TTL keeps
  // short.
  parsed.config->lock.ttl = std::chrono::milliseconds(1000);
  BlockingClient client(*parsed.config);
  AcquireOptions patient;
  patient.wait = std::chrono::seconds(10);
  const AcquireResult held = client.acquire(Resource("job"), patient);
  ASSERT_TRUE(held.ok()) << held.error.message();
  const std::string& first = parsed.config->nodes[0].name;
  const std::string& second = parsed.config->nodes[1].name;
  // The later of the two has its votes refused: the lock is the first
  // member's and the single server's to grant.
  ASSERT_EQ(held.nodes.size(), 3U);
  EXPECT_EQ(held.nodes[0].status, NodeStatus::granted);
  EXPECT_EQ(held.nodes[1].status, NodeStatus::unreachable);
  EXPECT_EQ(held.nodes[1].detail,
            "not independent: one Redis Cluster with " + first + " (its votes do not count)");
  EXPECT_EQ(held.nodes[2].status, NodeStatus::granted);
  const auto warned = [&](std::size_t node, const std::string& other) {
    const std::vector<NodeHealth> health = client.node_health();
    for (const std::string& warning : health[node].warnings) {
      if (warning == "not independent: one Redis Cluster with " + other) return true;
    }
    return false;
  };
  EXPECT_TRUE(eventually([&] { return warned(0, second) && warned(1, first); }));
  EXPECT_TRUE(client.node_health()[2].warnings.empty());
  const MetricsSnapshot metrics = client.metrics()->snapshot();
  ASSERT_EQ(metrics.nodes.size(), 3U);
  EXPECT_FALSE(metrics.nodes[0].votes_refused);
  EXPECT_TRUE(metrics.nodes[1].votes_refused);
  EXPECT_FALSE(metrics.nodes[2].votes_refused);
  EXPECT_EQ(client.release(*held.lock).released, 2U) << "the first member and the single server";

  // Once the single server is down, the two that are one cluster are no
  // majority.
  single.stop();
  AcquireOptions once;
  once.retry_count = 0;
  const AcquireResult alone = client.acquire(Resource("job"), once);
  EXPECT_FALSE(alone.ok()) << "one cluster named twice made a majority";
}

// A single member that is one of a cluster member's servers is found out
// when the sessions to that server open, not only when a map is read: the
// server is stopped while the client reads the cluster's map, so its
// run_id is known to neither link then.
TEST(ClusterQuorumConfig, AServerSharedWithAClusterFoundAfterItsMapWasReadHasTheClusterRefused) {
  ShardedMemberOptions options;
  options.replicas_per_shard = 0;
  ShardedMember member(options);
  RedisServer other;
  RedisServer& shared = member.master(1);
  ConfigResult parsed = config_from_addresses(
      {"redis+cluster://" + member.seeds()[0], shared.address(), other.address()});
  ASSERT_TRUE(parsed.ok()) << parsed.error.to_string();
  shared.pause();
  BlockingClient client(*parsed.config);
  const auto cluster_metrics = [&] { return client.metrics()->snapshot().nodes.at(0); };
  ASSERT_TRUE(eventually([&] { return cluster_metrics().map_reads > 0; }));
  EXPECT_FALSE(cluster_metrics().votes_refused) << "nothing was known of the shared server yet";
  shared.resume();
  EXPECT_TRUE(eventually([&] { return cluster_metrics().votes_refused; }))
      << "the cluster member still votes beside one of its own servers";
  const std::vector<NodeHealth> health = client.node_health();
  ASSERT_EQ(health.size(), 3U);
  EXPECT_FALSE(health[1].warnings.empty()) << "the single member is not told it shares a server";
}

TEST(ClusterQuorumConfig, ALockKeyOutsideTheResourcesSlotIsRefusedBeforeSendingAnything) {
  RedisCluster nodes{2};
  ShardedMemberOptions options;
  options.replicas_per_shard = 0;
  ShardedMember member(options);
  ConfigResult parsed =
      config_from_addresses({nodes.node(0).address(), nodes.node(1).address(),
                             "redis+cluster://" + member.seeds()[0] + "," + member.seeds()[1]});
  ASSERT_TRUE(parsed.ok()) << parsed.error.to_string();
  parsed.config->lock.lock_key = "{resource}";
  BlockingClient client(*parsed.config);
  const AcquireResult result = client.acquire(Resource("job"));
  EXPECT_EQ(result.error, make_error_code(errc::config_error));
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(command_calls(nodes.node(i), {"eval", "evalsha", "set", "multi"}), 0) << i;
  }
}

}  // namespace
}  // namespace redlock::test
