// The quorum file: which N Redis masters hold the lock, and the timing.
//
// Parsing never throws. A failure returns a ConfigError naming the file,
// line and column and what was expected there; unknown keys are errors.
// Secrets are never read from the file itself unless written in a
// redis:// address: `password_env` names an environment variable that is
// read when the file is loaded. Passwords are never printed.
//
// Minimum file:
//
//   [[node]]
//   address = "127.0.0.1:7101"
//   [[node]]
//   address = "127.0.0.1:7102"
//   [[node]]
//   address = "127.0.0.1:7103"
//
//   [lock]
//   ttl_ms = 10000
//
// docs/configuration.md lists every key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redlock/export.hpp"
#include "redlock/types.hpp"

namespace redlock {

// The most nodes a quorum may have (docs/configuration.md). Far above any
// useful quorum; it bounds the work a file or a command line can ask for
// (one connection per node, one thread per node in `redlock status`).
inline constexpr std::size_t kMaxNodes = 255;

// The largest quorum file load_config reads and parse_config accepts, in
// bytes: a real file is a few KiB (docs/configuration.md).
inline constexpr std::size_t kMaxConfigFileBytes = 1024 * 1024;

// How a node is reached over TLS (docs/configuration.md, "TLS"). Paths are
// as written in the quorum file: a relative one is relative to the working
// directory of the process that loads it.
struct TlsConfig {
  // TLS on this node's connection: a `rediss://` address, `tls = true` on
  // the node, or `tls = true` in the [tls] table.
  bool enabled = false;
  // The CA certificates that may sign the node's certificate: a PEM file,
  // a directory hashed with `openssl rehash`, or neither (the system's
  // default store).
  std::string ca_file;
  std::string ca_dir;
  // A client certificate and its key, for a node that asks for one
  // (mutual TLS, `tls-auth-clients yes`). Both or neither.
  std::string cert_file;
  std::string key_file;
  // The name the node's certificate must carry (and the SNI sent). Empty:
  // the address's host, checked as an IP address when it is one.
  std::string server_name;
  // Off only for a test bed: the node's certificate is then not checked at
  // all, and anyone on the path can read and change the traffic.
  bool verify = true;
};

// One server of a cluster member's seed list (NodeConfig::cluster): a TCP
// endpoint, or a Unix socket's path (a cluster's slot map announces TCP
// endpoints, so only a seed may be a socket).
struct ClusterSeed {
  std::string host;
  std::uint16_t port = 6379;
  std::string unix_path;
};

// One member of the quorum: one Redis master, or a Redis Cluster (cluster).
struct NodeConfig {
  // Shown in results, errors and metrics. Default: "host:port".
  std::string name;
  std::string host;
  std::uint16_t port = 6379;
  // A Unix domain socket's path (a `unix:///path` address); when set, host
  // and port are unused.
  std::string unix_path;
  TlsConfig tls;
  // AUTH username (Redis 6 ACL). Empty: AUTH with the password alone.
  std::string username;
  // The password, resolved at load time from `password_env` or from a
  // redis://user:pass@ address. Empty: no AUTH.
  std::string password;
  // The environment variable the password was read from (for messages).
  std::string password_env;
  // SELECT db after connecting. Default 0 (no SELECT sent).
  int db = 0;
  // Per-request deadline on this node. Unset: LockConfig::node_timeout.
  std::optional<Milliseconds> timeout;
  // When > 0, every grant on this node is followed by a pipelined
  // `WAIT min_replicas replica_timeout_ms`, and the node's vote counts only
  // if at least that many replicas acknowledged the write.
  int min_replicas = 0;
  // WAIT's timeout. Unset: the node's request timeout.
  std::optional<Milliseconds> replica_timeout;
  // A member that is a Redis Cluster (`cluster = [...]` in the quorum file,
  // `redis+cluster://host:port,host:port` for the CLI; docs/algorithm.md,
  // "A cluster as a member"): the seeds its slot map is read from. Empty:
  // the member is one server. For a cluster, host, port and unix_path are
  // not used to connect (a quorum file sets them to its first seed's, which
  // messages name; a configuration built in code may leave them empty), db
  // is 0, and every other setting (credentials, TLS, timeouts) applies to
  // each of its servers.
  std::vector<ClusterSeed> cluster;
};

// Timing and behaviour shared by every lock taken with this configuration.
// The defaults are listed in docs/configuration.md.
struct LockConfig {
  // How long a lock lives on a node without renewal.
  Milliseconds ttl{10000};
  // Clock drift allowance: drift = ttl * drift_factor + drift_ms.
  double drift_factor = 0.01;
  Milliseconds drift_ms{2};
  // A lock is handed out only if validity > min_validity.
  Milliseconds min_validity{0};
  // Per-request deadline on a node; a node that has not answered by then
  // counts as "no". Zero means automatic: min(50 ms, ttl / 100), at least 2 ms.
  Milliseconds node_timeout{0};
  // TCP connect (plus handshake) deadline.
  Milliseconds connect_timeout{1000};
  // Retries after the first attempt; -1 retries until the wait deadline.
  int retry_count = 3;
  // Mean delay between attempts; each delay is drawn uniformly from
  // [0, 2 * retry_delay) ("full jitter" around the mean).
  Milliseconds retry_delay{200};
  // Prefix of every key the library touches on a node, and of its
  // channels: the lock keys of the default lock_key, and always the
  // library's own keys (fence counters, identity marker, recovery, queues,
  // semaphores).
  std::string key_prefix = "redlock:";
  // Where a resource's lock lives on a node: literal text, `{prefix}`
  // (key_prefix) and `{resource}` exactly once (docs/configuration.md,
  // "lock_key"). The mutex, the read-write lock, the fair lock, the
  // election and the lock over several resources keep their lock there;
  // "{resource}" is where node-redlock, redsync and RedLock.net keep
  // theirs, for a fleet that runs both while it migrates.
  std::string lock_key = "{prefix}lock:{resource}";
  // Whether locks are fenced unless the caller says otherwise.
  bool fenced = false;
  // Whether a lock on one resource waits in line (fair, FIFO) from its
  // first attempt unless the caller says otherwise (AcquireOptions::fair).
  // false: a waiter that the caller did not say fair = false for still
  // joins the fair queue at its first refusal.
  bool fair = false;
  // Reconnect backoff: doubles from the first value up to the cap.
  Milliseconds reconnect_min{50};
  Milliseconds reconnect_max{2000};
  // The longest TTL any client of this quorum uses; zero means `ttl`. A node
  // that lost its data is kept from granting for this long after recovery
  // (docs/algorithm.md, "The amnesia defence"), and acquires with a longer TTL are refused.
  Milliseconds max_ttl{0};
  // Node amnesia defence (docs/algorithm.md, "The amnesia defence"): every node carries an identity
  // marker; a node without it grants nothing until it has been recovered
  // and has waited max_ttl. Off only for quorums that must not be written
  // to beyond the lock keys.
  bool amnesia_defence = true;
  // Refuse the votes of nodes whose persistence cannot keep fencing
  // promises (anything but appendonly yes + appendfsync always, or unknown).
  bool strict_persistence = false;
  // Refuse nodes whose password would cross a network in clear text (a
  // password, no TLS, and an address neither loopback nor a Unix socket)
  // instead of warning about them.
  bool strict_transport = false;
  // A release reports as soon as a majority has deleted the lock (no other
  // client is kept from a majority from then on), instead of waiting for
  // every node's answer; the other nodes are still asked, their answers
  // not awaited (their outcomes stay `pending`; one that finds its node
  // unreachable still queues the release for when the node is back). The
  // default: waiting for the slowest node adds a tail to every release
  // and buys the caller nothing (docs/performance.md, "The default
  // release"). Off: the release waits for every node and reports each one.
  bool release_at_majority = true;
};

// The drift allowance of a lock of `ttl`: ceil(ttl * drift_factor) + drift_ms.
[[nodiscard]] REDLOCK_API Milliseconds lock_drift(const LockConfig& lock,
                                                  Milliseconds ttl) noexcept;

// Whether a lock of `ttl` could ever be handed out: ttl minus the drift must
// be above min_validity even when the acquire took no time at all. The one
// rule behind the quorum file's lock.ttl_ms and the CLI's --ttl.
[[nodiscard]] REDLOCK_API bool ttl_can_be_valid(const LockConfig& lock, Milliseconds ttl) noexcept;

// The max_ttl in force: max_ttl, or ttl when max_ttl is zero.
[[nodiscard]] inline Milliseconds effective_max_ttl(const LockConfig& lock) noexcept {
  return lock.max_ttl.count() > 0 ? lock.max_ttl : lock.ttl;
}

struct QuorumConfig {
  std::vector<NodeConfig> nodes;
  LockConfig lock;
  // Where the configuration came from (a path, or a label for text).
  std::string source;
};

// Where and why a configuration is invalid. line/column are 1-based; 0 when
// the error is not tied to a position (e.g. a file that cannot be opened).
struct ConfigError {
  std::string file;
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  std::string message;
  // "file:line:col: message" (or "file: message" without a position).
  [[nodiscard]] REDLOCK_API std::string to_string() const;
};

struct ConfigResult {
  std::optional<QuorumConfig> config;
  ConfigError error;  // meaningful only when !config
  [[nodiscard]] bool ok() const noexcept { return config.has_value(); }
};

// Parses TOML text. `source_name` is used in error messages.
[[nodiscard]] REDLOCK_API ConfigResult parse_config(std::string_view toml_text,
                                                    std::string_view source_name);

// Reads and parses a file.
[[nodiscard]] REDLOCK_API ConfigResult load_config(const std::filesystem::path& file);

// The node timeout in force: the configured one, or the automatic default.
[[nodiscard]] REDLOCK_API Milliseconds effective_node_timeout(const LockConfig& lock,
                                                              const NodeConfig& node) noexcept;

// Whether `host` is this machine's loopback: "localhost", 127.0.0.0/8, ::1,
// or ::ffff:127.x.y.z.
[[nodiscard]] REDLOCK_API bool is_loopback_host(std::string_view host) noexcept;

// Whether the node's password would cross a network in clear text: it has
// one, no TLS, and an address that is neither loopback nor a Unix socket.
// check-config, status and NodeHealth warn of it; lock.strict_transport
// refuses such a node.
[[nodiscard]] REDLOCK_API bool password_in_clear(const NodeConfig& node) noexcept;

// What is unsafe about how `node` is reached: "password sent in clear text
// (no TLS, not a loopback address or a Unix socket)" when
// password_in_clear(), "TLS certificate not verified (tls_verify = false)"
// when TLS runs without verification, each followed by "; next step: "
// and the section of docs/operations.md that says what to do. Empty when
// nothing is. The words check-config, status and NodeHealth::warnings use.
[[nodiscard]] REDLOCK_API std::vector<std::string> transport_warnings(const NodeConfig& node);

// A parsed node address: "host:port", "[::1]:port",
// "redis://[user[:pass]@]host[:port][/db]", the same with rediss:// (TLS),
// or "unix:///path/to/redis.sock".
struct ParsedAddress {
  std::string host;
  std::uint16_t port = 6379;
  std::string unix_path;  // a unix:// address
  bool tls = false;       // a rediss:// address
  std::string username;
  std::string password;
  std::optional<int> db;
};
struct AddressResult {
  std::optional<ParsedAddress> address;
  std::string error;  // what was expected, when !address
};
[[nodiscard]] REDLOCK_API AddressResult parse_address(std::string_view text);

// Which file to read: `explicit_path` if given (a --config flag), else
// $REDLOCK_CONFIG if set and non-empty, else ./redlock.toml if it exists.
// Returns nullopt when none applies.
[[nodiscard]] REDLOCK_API std::optional<std::filesystem::path> find_config_file(
    const std::optional<std::filesystem::path>& explicit_path);

// find_config_file + load_config, with a ConfigError when no file is found
// ("no configuration file: expected the REDLOCK_CONFIG environment variable
// or ./redlock.toml") or `explicit_path` is empty. The messages name no
// command-line flag; a program that takes its path from one adds that hint.
[[nodiscard]] REDLOCK_API ConfigResult
load_default_config(const std::optional<std::filesystem::path>& explicit_path = std::nullopt);

// A configuration built from addresses alone (the CLI's --node flags).
[[nodiscard]] REDLOCK_API ConfigResult
config_from_addresses(const std::vector<std::string>& addresses);

}  // namespace redlock
