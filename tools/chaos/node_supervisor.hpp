// The lock nodes of a chaos run and the faults that act on them: real
// redis-server processes (tests/support's fixture) killed, paused,
// restarted, power-cut, and their clocks jumped or sped up.
//
// Clock faults (node_clock.hpp): a clock running at rate r is a jump of
// (r-1)*dt after every dt of real time, applied every tick. A jump is
// emulated by default, exactly as it acts on lock keys (docs/chaos.md): a
// forward jump of d shortens the remaining TTL of every expiring key of
// the library's prefix by d (deleting keys with less left), a backward
// jump lengthens it. With libfaketime the node's wall clock itself moves.
//
// Power loss: for AOF everysec nodes, the harness notes the size of the
// AOF's incremental files once a second (the fsync cadence); a power loss
// kills the node and truncates those files back to the last sizes noted,
// dropping what had not been synced. appendfsync always loses nothing;
// without persistence everything is lost anyway.
//
// Cluster members (NodesSpec::clusters): a Redis Cluster of shards with
// replicas (tests/support's ShardedMember). A fault on one acts on the
// shard that serves the run's lock (its slot, given at construction): kill,
// pause and restart its master; fail it over to its replica, with or
// without replication lag; move the slot to the next shard.
//
// Main thread only (the fixture forks with PDEATHSIG); never throws except
// where it says so.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster_member.hpp"
#include "node_clock.hpp"
#include "redis_fixture.hpp"
#include "scenario.hpp"

namespace redlock::chaos {

struct NodeKey {
  std::string key;
  std::string value;
  long long pttl_ms = 0;
};

class NodeSupervisor {
 public:
  // Starts the nodes and the resource store; with `faketime`, every
  // single-server lock node under libfaketime (the resource store and
  // cluster members never). `lock_slot` is the hash slot of the run's lock:
  // the one a fault on a cluster member acts on. Throws
  // test::RedisServerError or std::runtime_error.
  NodeSupervisor(const NodesSpec& nodes, std::string key_prefix, std::uint16_t lock_slot,
                 const std::optional<FaketimeLibraries>& faketime = std::nullopt);
  ~NodeSupervisor();
  NodeSupervisor(const NodeSupervisor&) = delete;
  NodeSupervisor& operator=(const NodeSupervisor&) = delete;

  [[nodiscard]] int count() const noexcept { return spec_.count; }
  [[nodiscard]] bool is_cluster(int node) const { return spec_.is_cluster(node); }
  [[nodiscard]] std::uint16_t resource_port() const { return resource_.port(); }
  // Where the clients connect to a single-server node: the TLS port with
  // [nodes] tls, else its port.
  [[nodiscard]] std::uint16_t client_port(int node) const {
    const test::RedisServer& server = single(node);
    return spec_.tls ? server.tls_port() : server.port();
  }
  // A single-server node's port, and its process id (-1 while it is down).
  [[nodiscard]] std::uint16_t port(int node) const { return single(node).port(); }
  [[nodiscard]] pid_t pid(int node) const { return single(node).pid(); }
  // A cluster member's seeds, "127.0.0.1:<port>" of each of its servers.
  [[nodiscard]] std::vector<std::string> seeds(int node) const;
  [[nodiscard]] bool tls() const noexcept { return spec_.tls; }
  // The CA the nodes' certificates chain to; empty without TLS.
  [[nodiscard]] std::string tls_ca_file() const;

  // Each returns a one-line description of what it did, for the history.
  std::string kill(int node);
  std::string power_loss(int node);
  std::string restart(int node);
  std::string pause(int node);
  std::string resume(int node);
  std::string clock_jump(int node, std::chrono::milliseconds delta);
  void set_clock_rate(int node, double rate);
  // A cluster member's lock shard: its replica stops replicating (it is
  // killed), so the writes from now on reach only the master.
  std::string begin_lag(int node);
  // ... and is started again, the failover it prepared not made (a
  // skipped step).
  std::string end_lag(int node);
  // Promotes the lock shard's replica. After begin_lag: the master is
  // killed, the replica started again and promoted with CLUSTER FAILOVER
  // TAKEOVER (it has missed what the master took since), and the old
  // master restarted to rejoin as its replica; else CLUSTER FAILOVER,
  // which waits for the replica to catch up first.
  std::string fail_over(int node);
  // Moves the lock's slot to the member's next shard, keys and all.
  std::string migrate(int node);
  // (Of a cluster member: its lock shard's master.)
  [[nodiscard]] bool down(int node) const;
  [[nodiscard]] bool paused(int node) const;

  // Called often from the run loop: applies clock rates, notes AOF sync
  // points once a second.
  void tick();
  // Notes the AOF sync points now and restarts the once-a-second cadence
  // from here (the run's barrier), so a scenario knows the fsync phase.
  void sync_now();
  // Every node up, resumed, clock rate 1. Returns what it changed.
  std::string heal();

  // Lock keys on a node (GET + PTTL of {prefix}lock:* and of the permit
  // keys {prefix}sem:*); nullopt when the node cannot be asked.
  std::optional<std::vector<NodeKey>> lock_keys(int node);
  // One storage of the resource store: its counter and log.
  bool resource_state(const std::string& counter_key, const std::string& log_key,
                      long long& counter, std::vector<std::string>& log);

 private:
  struct NodeState {
    bool killed = false;
    // Cluster members: the lock shard's server a step killed or paused,
    // and the replica begin_lag() stopped.
    test::RedisServer* killed_server = nullptr;
    test::RedisServer* paused_server = nullptr;
    test::RedisServer* lagging = nullptr;
    double rate = 1.0;
    double pending_jump_ms = 0;  // the fractional part of rate jumps
    std::map<std::filesystem::path, std::uintmax_t> synced_sizes;
  };

  // A single-server node; a cluster member's lock shard.
  test::RedisServer& node(int index) { return singles_.node(single_of_.at(index)); }
  const test::RedisServer& single(int index) const { return singles_.node(single_of_.at(index)); }
  test::ShardedMember& member(int index) { return *members_.at(static_cast<std::size_t>(index)); }
  std::size_t lock_shard(int index);
  std::string shard_name(int index, std::size_t shard);
  // The lock shard's master now, `name` set to its description.
  test::RedisServer& lock_master(int index, std::string& name);
  std::optional<std::vector<NodeKey>> member_lock_keys(int index);
  void note_sync_points(int index);
  // kill -9 of a node (marked down), and libfaketime's leftovers of it.
  void kill9(int index);
  // What a jump did, for the history; nullopt when it could not be made.
  std::optional<std::string> apply_jump(int index, long long delta_ms);

  NodesSpec spec_;
  std::string key_prefix_;
  std::unique_ptr<FaketimeClocks> clocks_;  // faketime mode only; outlives cluster_
  std::uint16_t lock_slot_;
  // node index -> index in singles_, for the single-server nodes.
  std::map<int, std::size_t> single_of_;
  test::RedisCluster singles_;
  // By node index; null for single-server nodes.
  std::vector<std::unique_ptr<test::ShardedMember>> members_;
  test::RedisServer resource_;
  std::vector<NodeState> state_;
  std::chrono::steady_clock::time_point last_tick_;
  std::chrono::steady_clock::time_point last_sync_note_;
};

}  // namespace redlock::chaos
