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
#include <cstdint>
#include <map>
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
  // "redis+cluster://<seed>,<seed>,...": the member as `--node` names it.
  [[nodiscard]] std::string address() const;
  // The server whose client port is `port`; nullptr when none is.
  [[nodiscard]] RedisServer* server_on(std::uint16_t port);
  // The shard that serves `slot` now: the one it was given, or the one
  // end_slot_move() gave it to.
  [[nodiscard]] std::size_t shard_of(std::uint16_t slot) const;
  // The server's cluster node id (CLUSTER MYID).
  [[nodiscard]] static std::string node_id(RedisServer& server);

  // Puts each shard's master first again after the cluster promoted a
  // replica by itself (its master killed for longer than the node
  // timeout), as the running servers' maps say. A shard no running server
  // names a master for is left as it is.
  void follow_roles();

  // Moving a slot to another shard, in the cluster's own three steps:
  // both ends marked (IMPORTING on the target's master, MIGRATING on the
  // source's), keys moved with MIGRATE, then the slot given to the target
  // on every master. Each returns false when a server refused.
  [[nodiscard]] bool begin_slot_move(std::uint16_t slot, std::size_t to);
  [[nodiscard]] bool migrate_keys(std::uint16_t slot, std::size_t to,
                                  const std::vector<std::string>& keys);
  [[nodiscard]] bool end_slot_move(std::uint16_t slot, std::size_t to);
  // All three, with every key of the slot (CLUSTER GETKEYSINSLOT).
  [[nodiscard]] bool move_slot(std::uint16_t slot, std::size_t to);
  // After a move that was refused half way (a master's gossip, with a
  // newer config epoch, took the slot back): the slot given, on every
  // master, to the one that holds its keys (else the one most of them
  // name), with its epoch made the newest.
  [[nodiscard]] bool settle_slot(std::uint16_t slot);
  // What the server that refused the last step said.
  [[nodiscard]] const std::string& refusal() const noexcept { return refusal_; }

  // How a replica is promoted: CLUSTER FAILOVER (the master agrees, and the
  // replica catches up first), FORCE (without the master, for one that is
  // stopped or paused: the other masters still vote) or TAKEOVER (without
  // any vote).
  enum class Failover { coordinated, force, takeover };
  // Promotes the shard's first replica and waits until every running
  // server's map names it master of the shard's slots. False on timeout.
  [[nodiscard]] bool fail_over(std::size_t shard, Failover how = Failover::coordinated,
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
  // Waits (10 s at most) until every running server names shard `shard`'s
  // master for `slot`; false, with refusal() saying so, when one does not.
  [[nodiscard]] bool all_name(std::uint16_t slot, std::size_t shard);
  // Waits until every running master has a config epoch of its own.
  [[nodiscard]] bool epochs_distinct(std::chrono::milliseconds timeout);

  std::vector<Shard> shards_;
  // Slots end_slot_move() gave to a shard other than their first.
  std::map<std::uint16_t, std::size_t> moved_;
  std::string refusal_;
};

}  // namespace redlock::test
