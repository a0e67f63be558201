// What the tests of quorums of Redis Cluster members share: where such a
// quorum keeps a resource's keys (docs/algorithm.md, "Key layout"), for the
// tests that read them on the servers: the default key_prefix, then the
// hash tag of the slot of the resource's name; and the quorum itself.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "cluster_member.hpp"
#include "protocol/hash_slot.hpp"
#include "redlock/redlock.hpp"

namespace redlock::test {

inline std::string slotted(const std::string& resource) {
  return "redlock:{" + std::string(detail::slot_tag(detail::hash_slot(resource))) + "}";
}

// Three members of three shards each, without replicas.
inline std::vector<std::unique_ptr<ShardedMember>> three_members_of_three_shards() {
  ShardedMemberOptions options;
  options.shards = 3;
  options.replicas_per_shard = 0;
  std::vector<std::unique_ptr<ShardedMember>> members;
  for (int i = 0; i < 3; ++i) members.push_back(std::make_unique<ShardedMember>(options));
  return members;
}

// A probe of the master that takes `resource`'s keys in `member`.
inline RedisProbe master_of(const std::vector<std::unique_ptr<ShardedMember>>& members,
                            std::size_t member, const std::string& resource) {
  const std::size_t shard = members[member]->shard_of(detail::hash_slot(resource));
  return RedisProbe(members[member]->master(shard).port());
}

// A quorum of `members`, one attempt per acquire, releases that wait for
// every member (the tests read the servers right after).
inline QuorumConfig quorum_of(const std::vector<std::unique_ptr<ShardedMember>>& members) {
  std::vector<std::string> addresses;
  for (const auto& member : members) addresses.push_back(member->address());
  const ConfigResult parsed = config_from_addresses(addresses);
  EXPECT_TRUE(parsed.ok()) << parsed.error.to_string();
  QuorumConfig quorum = parsed.ok() ? *parsed.config : QuorumConfig{};
  quorum.lock.retry_count = 0;
  quorum.lock.release_at_majority = false;
  return quorum;
}

// A waiter for `resource` on a thread of its own that tries again only
// when a release wakes it: a mutex waiter, in the members' lines, with a
// retry delay of an hour (the fallback, uniform in [0, 2 h)) and a wait of
// 30 s. The future's destructor waits for it.
inline std::future<AcquireResult> waiter_woken_only_by_a_release(BlockingClient& client,
                                                                 const std::string& resource) {
  return std::async(std::launch::async, [&client, resource] {
    AcquireOptions options;
    options.fair = false;
    options.retry_delay = std::chrono::hours(1);
    options.wait = std::chrono::seconds(30);
    return client.acquire(Resource(resource), options);
  });
}

// `holder` releases `held`, and the waiter `waited` (of `waiter`, made by
// waiter_woken_only_by_a_release) gets the lock within 5 s of it — its
// retry timer would take far longer — and releases it again.
inline void expect_woken_by_the_release(BlockingClient& holder, const Lock& held,
                                        BlockingClient& waiter,
                                        std::future<AcquireResult>& waited) {
  const auto released_at = SteadyClock::now();
  ASSERT_FALSE(holder.release(held).error);
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  const AcquireResult woken = waited.get();
  ASSERT_TRUE(woken.ok()) << woken.error.message();
  EXPECT_LT(SteadyClock::now() - released_at, std::chrono::seconds(5))
      << "woken by its retry timer, not by the release";
  EXPECT_FALSE(waiter.release(*woken.lock).error);
}

// The shard channels `server` has subscribers on, of those matching
// `pattern` (PUBSUB SHARDCHANNELS); the plain ones (PUBSUB CHANNELS).
inline std::size_t shard_channels(RedisServer& server, const std::string& pattern) {
  return server.probe().command({"PUBSUB", "SHARDCHANNELS", pattern}).elements.size();
}
inline std::size_t plain_channels(RedisServer& server, const std::string& pattern) {
  return server.probe().command({"PUBSUB", "CHANNELS", pattern}).elements.size();
}

}  // namespace redlock::test
