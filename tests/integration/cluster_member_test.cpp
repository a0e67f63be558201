// Routing over a real Redis Cluster (3 shards, a replica each; the
// ShardedMember fixture): the hash slot the library computes is the
// cluster's for every shape of key the library writes, the slot map read
// off the wire with CLUSTER SLOTS sends each key to the master that takes
// it, and after a replica is promoted the old master's MOVED names the new
// one, which the map then says too. tests/unit/slot_map_test.cpp has the
// same logic on made-up input.
#include "cluster_member.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"
#include "protocol/hash_slot.hpp"
#include "protocol/slot_map.hpp"
#include "transport/cluster_slots.hpp"

namespace redlock::test {
namespace {

using detail::hash_slot;
using detail::parse_redirect;
using detail::Redirect;
using detail::SlotMap;

struct ContextFree {
  void operator()(redisContext* context) const { redisFree(context); }
};
struct ReplyFree {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Context = std::unique_ptr<redisContext, ContextFree>;
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

Context connect_to(std::uint16_t port) {
  const timeval timeout{2, 0};
  Context context(redisConnectWithTimeout("127.0.0.1", port, timeout));
  if (context && context->err == 0) (void)redisSetTimeout(context.get(), timeout);
  return context;
}

ReplyPtr command(redisContext* context, const std::vector<std::string>& argv) {
  std::vector<const char*> args;
  std::vector<std::size_t> lengths;
  for (const std::string& arg : argv) {
    args.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  return ReplyPtr(static_cast<redisReply*>(
      redisCommandArgv(context, static_cast<int>(args.size()), args.data(), lengths.data())));
}

// The map as `port`'s server answers CLUSTER SLOTS.
std::optional<SlotMap> map_from(std::uint16_t port, std::string& error) {
  Context context = connect_to(port);
  if (!context || context->err != 0) {
    error = "cannot connect";
    return std::nullopt;
  }
  ReplyPtr reply = command(context.get(), {"CLUSTER", "SLOTS"});
  if (!reply) {
    error = "no reply";
    return std::nullopt;
  }
  const auto ranges = detail::slot_ranges_from(*reply, "127.0.0.1", error);
  if (!ranges) return std::nullopt;
  return SlotMap::from_ranges(*ranges, error);
}

// Keys of every shape the library writes (a prefix, a resource with a
// colon, braces, UTF-8 and bytes that are not), and a hash-tagged pair.
std::vector<std::string> sample_keys() {
  std::vector<std::string> keys{"redlock:lock:job",
                                "redlock:fence",
                                "{redlock:lock:job}:fence",
                                "redlock:lock:{}x",
                                "redlock:lock:a{b}c",
                                "redlock:lock:\xc3\xa9t\xc3\xa9",
                                std::string("redlock:lock:\x00\xff", 15),
                                ""};
  for (int i = 0; i < 200; ++i) keys.push_back("redlock:lock:resource-" + std::to_string(i));
  return keys;
}

TEST(ClusterMember, OurHashSlotIsTheClustersForEveryShapeOfKey) {
  ShardedMemberOptions options;
  options.replicas_per_shard = 0;
  ShardedMember cluster(options);
  RedisProbe probe = cluster.master(0).probe();
  for (const std::string& key : sample_keys()) {
    const Reply slot = probe.command({"CLUSTER", "KEYSLOT", key});
    ASSERT_EQ(slot.kind, Reply::Kind::integer) << slot.text;
    EXPECT_EQ(slot.integer, hash_slot(key)) << "key of " << key.size() << " bytes";
  }
  // A key placed in a slot by its tag is in that slot (every 7th slot).
  for (std::uint32_t slot = 0; slot < detail::kClusterSlots; slot += 7) {
    const std::string key = detail::key_in_slot("redlock:node", static_cast<std::uint16_t>(slot));
    const Reply placed = probe.command({"CLUSTER", "KEYSLOT", key});
    ASSERT_EQ(placed.integer, static_cast<long long>(slot)) << key;
  }
}

TEST(ClusterMember, TheMapReadOffTheWireSendsEachKeyToTheMasterThatTakesIt) {
  ShardedMember cluster;
  std::string error;
  // Any server answers for the whole cluster: a replica as a seed.
  const std::optional<SlotMap> map = map_from(cluster.replicas(2).front()->port(), error);
  ASSERT_TRUE(map.has_value()) << error;
  EXPECT_EQ(map->covered(), detail::kClusterSlots);
  ASSERT_EQ(map->masters().size(), cluster.shards());
  for (std::size_t shard = 0; shard < cluster.shards(); ++shard) {
    const auto [first, last] = cluster.slots_of(shard);
    const detail::ShardEndpoint* master = map->master_of(static_cast<std::uint16_t>(first));
    ASSERT_NE(master, nullptr);
    EXPECT_EQ(master->port, cluster.master(shard).port());
    EXPECT_EQ(master->id.size(), 40U) << "the map names the master's node id";
    EXPECT_EQ(map->master_of(static_cast<std::uint16_t>(last)), master);
  }
  for (const std::string& key : sample_keys()) {
    const detail::ShardEndpoint* owner = map->master_of_key(key);
    ASSERT_NE(owner, nullptr);
    Context right = connect_to(owner->port);
    ReplyPtr set = command(right.get(), {"SET", key, "v"});
    ASSERT_TRUE(set);
    EXPECT_EQ(set->type, REDIS_REPLY_STATUS) << std::string(set->str, set->len);
    // Any other master redirects to the owner.
    for (const detail::ShardEndpoint& other : map->masters()) {
      if (other.same_server(*owner)) continue;
      Context wrong = connect_to(other.port);
      ReplyPtr refused = command(wrong.get(), {"GET", key});
      ASSERT_TRUE(refused);
      ASSERT_EQ(refused->type, REDIS_REPLY_ERROR);
      const auto redirect = parse_redirect({refused->str, refused->len});
      ASSERT_TRUE(redirect.has_value()) << refused->str;
      EXPECT_EQ(redirect->kind, Redirect::Kind::moved);
      EXPECT_EQ(redirect->slot, hash_slot(key));
      EXPECT_EQ(redirect->port, owner->port);
    }
  }
}

TEST(ClusterMember, APromotedReplicaIsNamedByTheOldMastersMovedAndByTheMap) {
  ShardedMember cluster;
  const std::uint16_t old_master = cluster.master(0).port();
  const std::uint16_t promoted = cluster.replicas(0).front()->port();
  // A key of shard 0, written and replicated before the failover.
  std::string key;
  for (int i = 0; key.empty(); ++i) {
    const std::string candidate = "redlock:lock:k" + std::to_string(i);
    if (hash_slot(candidate) <= cluster.slots_of(0).second) key = candidate;
  }
  {
    Context master = connect_to(old_master);
    ReplyPtr set = command(master.get(), {"SET", key, "before"});
    ASSERT_TRUE(set && set->type == REDIS_REPLY_STATUS);
    ReplyPtr waited = command(master.get(), {"WAIT", "1", "5000"});
    ASSERT_TRUE(waited && waited->type == REDIS_REPLY_INTEGER && waited->integer == 1);
  }
  ASSERT_TRUE(cluster.fail_over(0));
  ASSERT_EQ(cluster.master(0).port(), promoted);

  Context deposed = connect_to(old_master);
  ReplyPtr refused = command(deposed.get(), {"SET", key, "after"});
  ASSERT_TRUE(refused);
  ASSERT_EQ(refused->type, REDIS_REPLY_ERROR);
  const auto redirect = parse_redirect({refused->str, refused->len});
  ASSERT_TRUE(redirect.has_value()) << refused->str;
  EXPECT_EQ(redirect->kind, Redirect::Kind::moved);
  EXPECT_EQ(redirect->port, promoted);

  std::string error;
  const std::optional<SlotMap> map = map_from(old_master, error);
  ASSERT_TRUE(map.has_value()) << error;
  ASSERT_NE(map->master_of_key(key), nullptr);
  EXPECT_EQ(map->master_of_key(key)->port, promoted);
  EXPECT_EQ(cluster.master(0).probe().get(key), "before") << "the promoted replica had the write";
}

TEST(ClusterMember, AnErrorReplyIsNoMap) {
  RedisServer plain;  // not in cluster mode
  Context context = connect_to(plain.port());
  ReplyPtr reply = command(context.get(), {"CLUSTER", "SLOTS"});
  ASSERT_TRUE(reply);
  std::string error;
  EXPECT_FALSE(detail::slot_ranges_from(*reply, "127.0.0.1", error).has_value());
  EXPECT_NE(error.find("cluster support disabled"), std::string::npos) << error;
}

}  // namespace
}  // namespace redlock::test
