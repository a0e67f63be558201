// What the quorum file's reader shares between its files (config.hpp is
// the interface): the value ranges of the schema's keys, the draft of a
// [[node]] table, the node helpers config_from_addresses() uses too, and
// the QuorumFileReader, whose members are defined by section: config.cpp
// the root and the order of the steps, config_nodes.cpp the [[node]]
// tables, config_lock.cpp the [lock] table and its rules,
// config_node_rules.cpp the rules across nodes and the passwords.
#pragma once

#include <toml++/toml.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config_reader.hpp"
#include "redlock/config.hpp"

namespace redlock::detail {

// Upper bound of every *_ms key, about 24.8 days. Anything larger is a typo,
// and the bound keeps deadline arithmetic in nanoseconds far from overflow.
inline constexpr std::int64_t kMaxMilliseconds = std::numeric_limits<std::int32_t>::max();
inline constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();

inline constexpr IntegerRule kPositiveMilliseconds{1, kMaxMilliseconds,
                                                   "a positive integer (milliseconds)"};
inline constexpr IntegerRule kNonNegativeMilliseconds{0, kMaxMilliseconds,
                                                      "a non-negative integer (milliseconds)"};
inline constexpr IntegerRule kDatabaseIndex{0, kMaxInt, "a non-negative integer (database index)"};
inline constexpr IntegerRule kReplicaCount{0, kMaxInt, "a non-negative integer (replica count)"};
inline constexpr IntegerRule kRetryCount{-1, kMaxInt,
                                         "an integer >= -1 (-1: retry until the deadline)"};
// At 0.5 or more the drift would eat half the TTL or more, which leaves no
// useful validity.
inline constexpr NumberRule kDriftFactor{0.0, 0.5, "a number in [0, 0.5)"};

// TLS keys as read from a [[node]] or the [tls] table; unset ones fall back
// (a node's to the table's, the table's to TlsConfig's defaults).
struct TlsDraft {
  std::optional<bool> enabled;
  std::optional<std::string> ca_file;
  std::optional<std::string> ca_dir;
  std::optional<std::string> cert_file;
  std::optional<std::string> key_file;
  std::optional<std::string> server_name;
  std::optional<bool> verify;
};

// Whether `name` is one of the TLS keys (tls, tls_ca_file, ...).
[[nodiscard]] bool is_tls_key(std::string_view name) noexcept;

// One [[node]] table while it is being read; the keys that may also come
// from a redis:// address are kept apart until both are known.
struct NodeDraft {
  const toml::table* table = nullptr;
  std::string path;  // "node[0]"
  std::optional<ParsedAddress> address;
  // `cluster`: a Redis Cluster's seeds (each a host:port or unix:// address).
  std::optional<std::vector<ParsedAddress>> cluster;
  std::optional<std::string> name;
  std::optional<std::string> username;
  std::optional<std::string> password_env;
  std::optional<int> db;
  std::optional<Milliseconds> timeout;
  int min_replicas = 0;
  std::optional<Milliseconds> replica_timeout;
  TlsDraft tls;
};

// A node with the host, port, credentials and database of `address`, named
// after its host and port.
[[nodiscard]] NodeConfig node_from_address(ParsedAddress address);

// Whether `text` begins with `scheme` ("redis://"), in any case.
[[nodiscard]] bool has_scheme(std::string_view text, std::string_view scheme) noexcept;

// The most seeds one cluster member lists.
inline constexpr std::size_t kMaxClusterSeeds = 64;

// A seed of a cluster member: "host[:port]", "[ipv6][:port]" or
// "unix:///path" (no scheme with credentials, TLS or a database: those are
// the member's keys). The error says what was expected, quoting nothing.
[[nodiscard]] AddressResult parse_cluster_seed(std::string_view text);

// A cluster member with these seeds, named "redis+cluster://" and its
// first seed.
[[nodiscard]] NodeConfig node_from_seeds(std::vector<ParsedAddress> seeds);

// Two spellings of one endpoint compare equal: host names ignore case and a
// final '.', IPv6 literals are compared in canonical form ("0:0::1" is
// "::1"), and an IPv4-mapped IPv6 literal ("::ffff:127.0.0.1") is the IPv4
// address it maps. (parse_address refuses the legacy IPv4 spellings.)
[[nodiscard]] std::string endpoint_identity(const NodeConfig& node);

struct RepeatedEntry {
  std::size_t earlier;
  std::size_t later;
};

// The first node whose identity (by `identity_of`) an earlier node already
// has, and the first node that had it. One identity per node and one hash
// look-up each: linear in the node count.
template <typename IdentityOf>
std::optional<RepeatedEntry> find_repeated(const std::vector<NodeConfig>& nodes,
                                           IdentityOf identity_of) {
  std::unordered_map<std::string, std::size_t> first_with;
  first_with.reserve(nodes.size());
  for (std::size_t later = 0; later < nodes.size(); ++later) {
    const auto [entry, inserted] = first_with.emplace(identity_of(nodes[later]), later);
    if (!inserted) return RepeatedEntry{entry->second, later};
  }
  return std::nullopt;
}

// Every endpoint identity of `node`: its address's, or each seed's.
[[nodiscard]] std::vector<std::string> endpoint_identities(const NodeConfig& node);

// The first member that shares a server with an earlier one (or lists one
// seed twice: then earlier == later).
[[nodiscard]] std::optional<RepeatedEntry> find_shared_server(const std::vector<NodeConfig>& nodes);

// Reads one parsed TOML document against the quorum-file schema; `reader_`
// does the typed reads and keeps the first error, after which every step
// returns false and the caller stops.
class QuorumFileReader {
 public:
  explicit QuorumFileReader(std::string_view source) : reader_(source) {}

  ConfigResult read(const toml::table& root);

 private:
  // The root table (config.cpp).
  bool read_root(const toml::table& root);

  // ---- [[node]] (config_nodes.cpp) ----

  bool read_nodes(const toml::node& value);
  bool read_node(const toml::table& table, const std::string& path);
  bool read_node_key(const toml::key& key, const toml::node& value, NodeDraft& draft);
  bool read_address(const toml::node& value, const std::string& path,
                    std::optional<ParsedAddress>& out);
  bool read_cluster(const toml::node& value, const std::string& path,
                    std::optional<std::vector<ParsedAddress>>& out);
  bool read_password_env(const toml::node& value, const std::string& path,
                         std::optional<std::string>& out);
  bool finish_node(NodeDraft draft);
  bool finish_member(NodeDraft draft, NodeConfig node, bool url_has_username,
                     bool url_has_password);

  // ---- [lock] (config_lock.cpp) ----

  bool read_lock(const toml::node& value);
  bool read_lock_key(const toml::key& key, const toml::node& value);
  [[nodiscard]] std::string describe_lock_setting(std::string_view key, Milliseconds value) const;
  bool check_lock_rules();

  // ---- TLS (config_tls.cpp) ----

  bool read_tls_table(const toml::node& value);
  bool read_tls_key(const toml::node& value, const std::string& path, std::string_view name,
                    TlsDraft& draft);
  bool check_tls_file(const toml::table* table, const std::string& table_path, std::string_view key,
                      const std::string& file, bool directory);
  bool resolve_tls();
  bool check_transport_rules();

  // ---- rules across nodes (config_node_rules.cpp) ----

  bool check_node_timeout(std::size_t index, std::string_view key,
                          const std::optional<Milliseconds>& timeout);
  bool check_node_rules();
  bool resolve_passwords();

  ConfigReader reader_;
  std::vector<NodeConfig> nodes_;
  std::vector<const toml::table*> node_tables_;  // parallel to nodes_
  std::vector<TlsDraft> node_tls_;               // parallel to nodes_
  TlsDraft tls_defaults_;                        // the [tls] table
  const toml::table* tls_table_ = nullptr;
  LockConfig lock_;
  const toml::table* lock_table_ = nullptr;
};

}  // namespace redlock::detail
