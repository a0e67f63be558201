// The quorum file's [[node]] tables: each table's keys read into a draft,
// then merged with what its redis:// address already says (user, password,
// database), each thing given in one place only.
#include <algorithm>
#include <utility>

#include "config/config_internal.hpp"

namespace redlock::detail {
namespace {

constexpr std::string_view kNodeKeys[] = {
    "address",     "cluster",    "name",          "username",           "password_env",
    "db",          "timeout_ms", "min_replicas",  "replica_timeout_ms", "tls",
    "tls_ca_file", "tls_ca_dir", "tls_cert_file", "tls_key_file",       "tls_server_name",
    "tls_verify"};

std::string default_node_name(const std::string& host, std::uint16_t port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

bool is_environment_variable_name(std::string_view name) noexcept {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  });
}

}  // namespace

bool has_scheme(std::string_view text, std::string_view scheme) noexcept {
  if (text.size() < scheme.size()) return false;
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != scheme[i]) return false;
  }
  return true;
}

AddressResult parse_cluster_seed(std::string_view text) {
  if (has_scheme(text, "redis://") || has_scheme(text, "rediss://")) {
    return {std::nullopt,
            "expected a seed as host[:port], [ipv6][:port] or unix:///path, got a redis:// URL "
            "(a cluster member's user, password_env, tls and the like are keys of its [[node]] "
            "table)"};
  }
  return parse_address(text);
}

NodeConfig node_from_seeds(std::vector<ParsedAddress> seeds) {
  NodeConfig node = node_from_address(seeds.front());
  node.name = "redis+cluster://" + node.name;
  for (ParsedAddress& seed : seeds) {
    node.cluster.push_back(ClusterSeed{std::move(seed.host),
                                       seed.unix_path.empty() ? seed.port : std::uint16_t{0},
                                       std::move(seed.unix_path)});
  }
  return node;
}

NodeConfig node_from_address(ParsedAddress address) {
  NodeConfig node;
  if (!address.unix_path.empty()) {
    node.name = "unix://" + address.unix_path;
    node.unix_path = std::move(address.unix_path);
    node.port = 0;
    return node;
  }
  node.name = default_node_name(address.host, address.port);
  node.tls.enabled = address.tls;
  node.host = std::move(address.host);
  node.port = address.port;
  node.username = std::move(address.username);
  node.password = std::move(address.password);
  node.db = address.db.value_or(0);
  return node;
}

bool QuorumFileReader::read_nodes(const toml::node& value) {
  const toml::array* tables = value.as_array();
  if (tables == nullptr) {
    return reader_.fail(value.source(), "node",
                        "expected an array of tables ([[node]]), got " +
                            std::string(toml_type_name(value.type())) +
                            (value.is_table() ? " (write [[node]], not [node])" : ""));
  }
  if (tables->empty()) {
    return reader_.fail(value.source(), "node", "expected at least one [[node]] table, got none");
  }
  if (tables->size() > kMaxNodes) {
    return reader_.fail(
        tables->get(kMaxNodes)->source(), "node[" + std::to_string(kMaxNodes) + "]",
        "too many [[node]] tables: a quorum has at most " + std::to_string(kMaxNodes) + " nodes");
  }
  for (std::size_t index = 0; index < tables->size(); ++index) {
    const toml::node& element = *tables->get(index);
    const std::string path = "node[" + std::to_string(index) + "]";
    const toml::table* table = nullptr;
    if (!reader_.read_table(element, path, "a table", table)) return false;
    if (!read_node(*table, path)) return false;
  }
  return true;
}

bool QuorumFileReader::read_node(const toml::table& table, const std::string& path) {
  NodeDraft draft;
  draft.table = &table;
  draft.path = path;
  for (const auto& [key, value] : entries_in_file_order(table)) {
    if (!read_node_key(*key, *value, draft)) return false;
  }
  return finish_node(std::move(draft));
}

bool QuorumFileReader::read_node_key(const toml::key& key, const toml::node& value,
                                     NodeDraft& draft) {
  const std::string_view name = key.str();
  const std::string path = draft.path + "." + std::string(name);
  if (name == "address") return read_address(value, path, draft.address);
  if (name == "cluster") return read_cluster(value, path, draft.cluster);
  if (name == "name") return reader_.read_string(value, path, false, draft.name);
  if (name == "username") return reader_.read_string(value, path, false, draft.username);
  if (name == "password_env") return read_password_env(value, path, draft.password_env);
  if (name == "db") {
    int db = 0;
    if (!reader_.read_int(value, path, kDatabaseIndex, db)) return false;
    draft.db = db;
    return true;
  }
  if (name == "timeout_ms") {
    return reader_.read_milliseconds(value, path, kPositiveMilliseconds, draft.timeout);
  }
  if (name == "min_replicas") {
    return reader_.read_int(value, path, kReplicaCount, draft.min_replicas);
  }
  if (name == "replica_timeout_ms") {
    return reader_.read_milliseconds(value, path, kPositiveMilliseconds, draft.replica_timeout);
  }
  if (is_tls_key(name)) return read_tls_key(value, path, name, draft.tls);
  if (name == "password") {
    return reader_.fail(key.source(), path,
                        "passwords are not read from the file; put the password in an environment "
                        "variable and name that variable in password_env");
  }
  return reader_.fail(key.source(), path, unknown_key_message(name, kNodeKeys));
}

bool QuorumFileReader::read_address(const toml::node& value, const std::string& path,
                                    std::optional<ParsedAddress>& out) {
  std::string text;
  if (!reader_.read_string(value, path, false, text)) return false;
  AddressResult parsed = parse_address(text);
  if (!parsed.address) return reader_.fail(value.source(), path, parsed.error);
  out = std::move(parsed.address);
  return true;
}

bool QuorumFileReader::read_cluster(const toml::node& value, const std::string& path,
                                    std::optional<std::vector<ParsedAddress>>& out) {
  const toml::array* seeds = value.as_array();
  if (seeds == nullptr) {
    return reader_.fail(value.source(), path,
                        "expected an array of seed addresses, e.g. cluster = [\"127.0.0.1:7000\", "
                        "\"127.0.0.1:7001\"], got " +
                            std::string(toml_type_name(value.type())));
  }
  if (seeds->empty()) {
    return reader_.fail(value.source(), path,
                        "expected at least one seed address of the cluster, got an empty array");
  }
  if (seeds->size() > kMaxClusterSeeds) {
    return reader_.fail(
        seeds->get(kMaxClusterSeeds)->source(), path,
        "too many seeds: a cluster member lists at most " + std::to_string(kMaxClusterSeeds));
  }
  std::vector<ParsedAddress> parsed_seeds;
  for (std::size_t index = 0; index < seeds->size(); ++index) {
    const toml::node& element = *seeds->get(index);
    const std::string element_path = path + "[" + std::to_string(index) + "]";
    std::string text;
    if (!reader_.read_string(element, element_path, false, text)) return false;
    AddressResult parsed = parse_cluster_seed(text);
    if (!parsed.address) return reader_.fail(element.source(), element_path, parsed.error);
    parsed_seeds.push_back(std::move(*parsed.address));
  }
  out = std::move(parsed_seeds);
  return true;
}

bool QuorumFileReader::read_password_env(const toml::node& value, const std::string& path,
                                         std::optional<std::string>& out) {
  std::string variable;
  if (!reader_.read_string(value, path, false, variable)) return false;
  // Not quoted: a value that is no variable name may be the password itself.
  if (!is_environment_variable_name(variable)) {
    return reader_.fail(value.source(), path,
                        "expected the name of an environment variable (letters, digits and '_'), "
                        "not the password itself");
  }
  out = std::move(variable);
  return true;
}

// Merges the address with the keys that may repeat it.
bool QuorumFileReader::finish_node(NodeDraft draft) {
  const toml::table* table = draft.table;
  const std::string& path = draft.path;
  if (draft.cluster) {
    if (draft.address) {
      return reader_.fail(where(table, "cluster"), path + ".cluster",
                          "give either address (one server) or cluster (a Redis Cluster's seeds), "
                          "not both");
    }
    if (draft.db && *draft.db != 0) {
      return reader_.fail(where(table, "db"), path + ".db",
                          "a Redis Cluster has database 0 only; remove db or set it to 0");
    }
    NodeConfig node = node_from_seeds(std::move(*draft.cluster));
    node.db = 0;
    return finish_member(std::move(draft), std::move(node), false, false);
  }
  if (!draft.address) {
    return reader_.fail(table->source(), path,
                        "missing key address: expected the node's address, e.g. "
                        "address = \"127.0.0.1:6379\" (or a Redis Cluster's seeds, "
                        "cluster = [\"127.0.0.1:7000\", ...])");
  }
  const bool url_has_username = !draft.address->username.empty();
  const bool url_has_password = !draft.address->password.empty();
  const bool url_has_db = draft.address->db.has_value();
  NodeConfig node = node_from_address(std::move(*draft.address));
  if (draft.db) {
    if (url_has_db) {
      return reader_.fail(where(table, "db"), path + ".db",
                          "the address already selects a database; give it in one place only");
    }
    node.db = *draft.db;
  }
  return finish_member(std::move(draft), std::move(node), url_has_username, url_has_password);
}

// The keys every member takes, merged with what its address said.
bool QuorumFileReader::finish_member(NodeDraft draft, NodeConfig node, bool url_has_username,
                                     bool url_has_password) {
  const toml::table* table = draft.table;
  const std::string& path = draft.path;
  if (draft.username) {
    if (url_has_username) {
      return reader_.fail(where(table, "username"), path + ".username",
                          "the address already names a user; give it in one place only");
    }
    node.username = std::move(*draft.username);
  }
  if (draft.password_env) {
    if (url_has_password) {
      return reader_.fail(where(table, "password_env"), path + ".password_env",
                          "the address already carries a password; give it in one place only");
    }
    node.password_env = std::move(*draft.password_env);
  }
  if (!node.username.empty() && !url_has_password && node.password_env.empty()) {
    const bool key_given = table->contains("username");
    return reader_.fail(where(table, key_given ? "username" : "address"),
                        path + (key_given ? ".username" : ".address"),
                        "a username needs a password: set password_env, or put the password in "
                        "the redis:// address");
  }
  if (draft.name) node.name = std::move(*draft.name);
  node.timeout = draft.timeout;
  node.min_replicas = draft.min_replicas;
  node.replica_timeout = draft.replica_timeout;
  nodes_.push_back(std::move(node));
  node_tables_.push_back(table);
  node_tls_.push_back(std::move(draft.tls));
  return true;
}

}  // namespace redlock::detail
