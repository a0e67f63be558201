// Real redis-server processes for integration tests: no mocks.
//
// Each RedisServer runs /usr/bin/redis-server (or $REDLOCK_TEST_REDIS_SERVER)
// on a free 127.0.0.1 port chosen by the kernel, in its own mkdtemp directory
// under $TMPDIR (or /tmp), so test binaries can run in parallel under
// `ctest -j` without sharing ports or files.
//
// Process contract:
// - Only processes started here are ever signalled, and only by pid; every
//   child is reaped with waitpid.
// - A child gets PR_SET_PDEATHSIG = SIGKILL, so a test binary that crashes
//   does not leave servers behind. Linux ties that signal to the *thread*
//   that forked the child: create servers on a thread that outlives them
//   (in practice the test's main thread).
// - Destructors stop the server and remove its directory; they never throw.
// - Starting throws RedisServerError, whose message includes the tail of the
//   server's log; gtest reports it as a test failure.
//
// Neither class is thread-safe: use each from the thread that created it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "redis_probe.hpp"

namespace redlock::test {

// How a node persists writes; what survives restart() and kill9() follows.
enum class Persistence {
  none,          // Nothing: every restart starts empty.
  aof_everysec,  // AOF, fsync once a second: kill9() may lose the last second.
  aof_always,    // AOF, fsync on every write: a kill9() loses nothing acked.
};

// A node that also serves TLS, on a second port (RedisServer::tls_port()):
// its certificate, key, and the CA it checks client certificates against.
struct TlsServerOptions {
  std::string cert_file;
  std::string key_file;
  std::string ca_file;
  // tls-auth-clients: refuse clients without a certificate the CA signed.
  bool auth_clients = false;
};

struct RedisServerOptions {
  // Default: no persistence.
  Persistence persistence = Persistence::none;
  // When set, the node starts as a replica of 127.0.0.1:master_port.
  // Default: an independent master.
  std::optional<std::uint16_t> master_port;
  // Also serve TLS with these files. The plain port stays open for the
  // fixture's own probes. Default: no TLS.
  std::optional<TlsServerOptions> tls;
  // Also listen on a Unix socket in the node's directory (unix_path()).
  bool unix_socket = false;
  // Start in cluster mode (cluster-enabled yes, its nodes.conf in the
  // node's directory, its cluster bus on a second free port,
  // cluster_port()) with this cluster-node-timeout. Default: not a cluster
  // node. ShardedMember (cluster_member.hpp) makes a cluster of such nodes.
  std::optional<std::chrono::milliseconds> cluster_node_timeout;
  // Appended to the command line, e.g. {"--requirepass", "secret"}.
  std::vector<std::string> extra_arguments;
  // "NAME=value" entries set in the server's environment on top of the
  // test's own (an entry replaces a variable of the same name), e.g. an
  // LD_PRELOAD. Default: the test's environment unchanged.
  std::vector<std::string> environment;
  // How long a start waits for the node to answer PING. Default 5 s.
  std::chrono::milliseconds startup_timeout{5000};
  // How long stop() waits after SIGTERM before SIGKILL. Default 5 s.
  std::chrono::milliseconds stop_timeout{5000};
};

class RedisServerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RedisServer {
 public:
  // Starts a node and returns once it answers PING; if another process took
  // the chosen port first, retries on a new one. Throws RedisServerError.
  explicit RedisServer(Persistence persistence = Persistence::none);
  explicit RedisServer(RedisServerOptions options);
  // Stops the node (resuming it first if paused) and removes its directory.
  ~RedisServer();

  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  RedisServer(RedisServer&&) = delete;
  RedisServer& operator=(RedisServer&&) = delete;

  // SIGTERM, then SIGKILL if the node has not exited after stop_timeout.
  // The directory is kept for restart(). No effect when not running.
  void stop() noexcept;
  // SIGKILL: a crash, without the shutdown's final AOF flush.
  void kill9() noexcept;
  // stop() if running, then starts again on the same port, in the same
  // directory, with the same options. Throws RedisServerError, e.g. in the
  // rare case that another process took the port while the node was down.
  void restart();
  // SIGSTOP; returns once the whole process is stopped. A paused node
  // accepts TCP connections (the kernel does) but answers nothing.
  void pause() noexcept;
  // SIGCONT.
  void resume() noexcept;

  // True while the process exists (paused counts); reaps it if it exited.
  [[nodiscard]] bool running() noexcept;
  [[nodiscard]] bool paused() const noexcept { return paused_; }

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  // "127.0.0.1:<port>", the form the quorum file uses.
  [[nodiscard]] std::string address() const;
  // With options.tls: the TLS port, and "rediss://127.0.0.1:<tls port>".
  [[nodiscard]] std::uint16_t tls_port() const noexcept { return tls_port_; }
  // With options.cluster_node_timeout: the cluster bus port.
  [[nodiscard]] std::uint16_t cluster_port() const noexcept { return cluster_port_; }
  [[nodiscard]] std::string tls_address() const;
  // With options.unix_socket: the socket's path, and "unix://<path>".
  [[nodiscard]] std::filesystem::path unix_path() const { return directory_ / "redis.sock"; }
  [[nodiscard]] std::string unix_address() const { return "unix://" + unix_path().string(); }
  // The process id; -1 after stop(), kill9(), or once running() saw it exit.
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  [[nodiscard]] const std::filesystem::path& directory() const noexcept { return directory_; }
  [[nodiscard]] std::filesystem::path log_path() const;
  // The last max_bytes of the server's log (its stdout and stderr included).
  [[nodiscard]] std::string log_tail(std::size_t max_bytes = 2048) const;

  // A fresh inspection client for this node.
  [[nodiscard]] RedisProbe probe(
      std::chrono::milliseconds timeout = RedisProbe::kDefaultTimeout) const;

  // For a replica: waits until the replica reports master_link_status:up
  // and its master lists it as connected_slaves with state=online. False on
  // timeout or when this node is not a replica.
  [[nodiscard]] bool wait_for_replication_link(
      std::chrono::milliseconds timeout = std::chrono::seconds(5));

 private:
  // RedisCluster signals all its nodes before waiting for any (see there).
  friend class RedisCluster;
  enum class StartResult { ready, port_taken };

  // The two halves of stop(): resume and SIGTERM, then wait and SIGKILL.
  void request_stop() noexcept;
  void await_stop() noexcept;

  void start_on_free_port();
  StartResult start_on_current_port();
  void spawn();
  // waitpid on our child with `options`; forgets the pid once the child has
  // exited. Returns the wait status when the child changed state.
  std::optional<int> wait_for_child(int options) noexcept;
  void send_signal(int signal_number) const noexcept;
  void kill_and_reap() noexcept;

  RedisServerOptions options_;
  std::filesystem::path directory_;
  std::uint16_t port_ = 0;
  std::uint16_t tls_port_ = 0;
  std::uint16_t cluster_port_ = 0;
  pid_t pid_ = -1;
  bool paused_ = false;
  std::chrono::steady_clock::time_point stop_deadline_;
};

// N independent masters, the usual Redlock deployment.
class RedisCluster {
 public:
  // Starts node_count nodes, each with its own port and directory. Throws
  // RedisServerError when a node cannot be started.
  explicit RedisCluster(std::size_t node_count, Persistence persistence = Persistence::none);
  RedisCluster(std::size_t node_count, const RedisServerOptions& options);
  // One node per entry, each with its own options.
  explicit RedisCluster(const std::vector<RedisServerOptions>& per_node);
  // Stops every node concurrently and removes all directories.
  ~RedisCluster();

  RedisCluster(const RedisCluster&) = delete;
  RedisCluster& operator=(const RedisCluster&) = delete;
  RedisCluster(RedisCluster&&) = delete;
  RedisCluster& operator=(RedisCluster&&) = delete;

  [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }
  [[nodiscard]] RedisServer& node(std::size_t index) { return *nodes_.at(index); }
  [[nodiscard]] const RedisServer& node(std::size_t index) const { return *nodes_.at(index); }
  [[nodiscard]] std::vector<std::string> addresses() const;

  // A quorum file naming every node, then a [lock] table with ttl_ms and,
  // after it, extra_lock_lines verbatim (e.g. "retry_count = 0\n"):
  //   [[node]]
  //   address = "127.0.0.1:41234"
  //   ...
  //   [lock]
  //   ttl_ms = 10000
  //   release_at_majority = false    (unless extra_lock_lines set it)
  // (Tests read the nodes right after a release, so it waits for every
  // node; the library's default reports at a majority.)
  [[nodiscard]] std::string config_toml(
      std::string_view extra_lock_lines = {},
      std::chrono::milliseconds ttl = std::chrono::seconds(10)) const;
  // Writes config_toml(...) to a new file in a directory this cluster owns
  // and removes on destruction; returns the file's path. Throws
  // RedisServerError when the file cannot be written.
  [[nodiscard]] std::filesystem::path write_config(
      std::string_view extra_lock_lines = {},
      std::chrono::milliseconds ttl = std::chrono::seconds(10));

 private:
  std::vector<std::unique_ptr<RedisServer>> nodes_;
  std::filesystem::path config_directory_;
  int configs_written_ = 0;
};

}  // namespace redlock::test
