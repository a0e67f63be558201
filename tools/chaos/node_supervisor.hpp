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
  // Starts the nodes and the resource store; with `faketime`, every lock
  // node under libfaketime (the resource store never). Throws
  // test::RedisServerError or std::runtime_error.
  NodeSupervisor(const NodesSpec& nodes, std::string key_prefix,
                 const std::optional<FaketimeLibraries>& faketime = std::nullopt);
  ~NodeSupervisor();
  NodeSupervisor(const NodeSupervisor&) = delete;
  NodeSupervisor& operator=(const NodeSupervisor&) = delete;

  [[nodiscard]] int count() const noexcept { return static_cast<int>(cluster_.size()); }
  [[nodiscard]] std::uint16_t port(int node) const {
    return cluster_.node(static_cast<std::size_t>(node)).port();
  }
  [[nodiscard]] std::uint16_t resource_port() const { return resource_.port(); }
  // Where the clients connect: the TLS port with [nodes] tls, else port().
  [[nodiscard]] std::uint16_t client_port(int node) const {
    const test::RedisServer& server = cluster_.node(static_cast<std::size_t>(node));
    return spec_.tls ? server.tls_port() : server.port();
  }
  [[nodiscard]] bool tls() const noexcept { return spec_.tls; }
  // The CA the nodes' certificates chain to; empty without TLS.
  [[nodiscard]] std::string tls_ca_file() const;
  // The node's process id; -1 while it is down.
  [[nodiscard]] pid_t pid(int node) const {
    return cluster_.node(static_cast<std::size_t>(node)).pid();
  }

  // Each returns a one-line description of what it did, for the history.
  std::string kill(int node);
  std::string power_loss(int node);
  std::string restart(int node);
  std::string pause(int node);
  std::string resume(int node);
  std::string clock_jump(int node, std::chrono::milliseconds delta);
  void set_clock_rate(int node, double rate);
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
    double rate = 1.0;
    double pending_jump_ms = 0;  // the fractional part of rate jumps
    std::map<std::filesystem::path, std::uintmax_t> synced_sizes;
  };

  test::RedisServer& node(int index) { return cluster_.node(static_cast<std::size_t>(index)); }
  void note_sync_points(int index);
  // kill -9 of a node (marked down), and libfaketime's leftovers of it.
  void kill9(int index);
  // What a jump did, for the history; nullopt when it could not be made.
  std::optional<std::string> apply_jump(int index, long long delta_ms);

  NodesSpec spec_;
  std::string key_prefix_;
  std::unique_ptr<FaketimeClocks> clocks_;  // faketime mode only; outlives cluster_
  test::RedisCluster cluster_;
  test::RedisServer resource_;
  std::vector<NodeState> state_;
  std::chrono::steady_clock::time_point last_tick_;
  std::chrono::steady_clock::time_point last_sync_note_;
};

}  // namespace redlock::chaos
