// A Redis Cluster for the tests of cluster members (a quorum member that is
// a cluster, docs/algorithm.md "A cluster as a member"): real redis-server
// processes in cluster mode, each on free loopback ports (its client port
// and its cluster bus port) in its own directory, as RedisServer starts
// them. The slots are split evenly over the shards' masters; each master
// gets its replicas; the constructor returns once every server reports
// cluster_state:ok and every replica's link to its master is up.
//
// Process contract: as RedisServer's (only processes started here are
// signalled, by pid; destructors stop them and never throw). Starting
// throws RedisServerError with the server's log or the step that failed.
// Not thread-safe: use it from the thread that created it.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "redis_fixture.hpp"

namespace redlock::test {

struct ShardedMemberOptions {
  std::size_t shards = 3;
  std::size_t replicas_per_shard = 1;
  // cluster-node-timeout: how long a master may be unreachable before its
  // replica is promoted without it.
  std::chrono::milliseconds node_timeout{2000};
  // For every server (persistence, TLS, extra arguments ...); the cluster
  // settings are the fixture's.
  RedisServerOptions server;
  // How long the cluster may take to form. Default 30 s.
  std::chrono::milliseconds form_timeout{30000};
};

class ShardedMember {
 public:
  explicit ShardedMember(ShardedMemberOptions options = {});
  ~ShardedMember() = default;

  ShardedMember(const ShardedMember&) = delete;
  ShardedMember& operator=(const ShardedMember&) = delete;

  [[nodiscard]] std::size_t shards() const noexcept { return shards_.size(); }
  // The slots shard `shard` was given, [first, last].
  [[nodiscard]] std::pair<int, int> slots_of(std::size_t shard) const;
  // The shard's master now (after fail_over(), the promoted replica).
  [[nodiscard]] RedisServer& master(std::size_t shard);
  // The shard's replicas now (after fail_over(), the old master is one).
  [[nodiscard]] std::vector<RedisServer*> replicas(std::size_t shard);
  // Every server, masters and replicas.
  [[nodiscard]] std::vector<RedisServer*> servers();
  // "127.0.0.1:<port>" of every server: the seeds of a cluster member.
  [[nodiscard]] std::vector<std::string> seeds() const;
  // The server whose client port is `port`; nullptr when none is.
  [[nodiscard]] RedisServer* server_on(std::uint16_t port);

  // Promotes the shard's first replica with CLUSTER FAILOVER (`force`:
  // FORCE, without the master's agreement, for a master that is stopped or
  // paused) and waits until every running server's map names it master of
  // the shard's slots. False on timeout.
  [[nodiscard]] bool fail_over(std::size_t shard, bool force = false,
                               std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Waits until every running, unpaused server reports cluster_state:ok.
  [[nodiscard]] bool settled(std::chrono::milliseconds timeout = std::chrono::seconds(20));

 private:
  struct Shard {
    int first = 0;
    int last = 0;
    // Servers of this shard; [0] is the master now.
    std::vector<std::unique_ptr<RedisServer>> servers;
  };
  void form(const ShardedMemberOptions& options);

  std::vector<Shard> shards_;
};

}  // namespace redlock::test
