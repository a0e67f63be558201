// The quorum file's rules across its nodes, checked once every key is
// read: per-node timeouts below the TTL, no two nodes at one endpoint or
// with one name; then each node's password read from the environment
// variable its password_env names.
#include <arpa/inet.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "config/config_internal.hpp"

namespace redlock::detail {
namespace {

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

namespace {

std::string identity_of(const std::string& host_text, std::uint16_t port,
                        const std::string& unix_path) {
  // "/run/redis//redis.sock" and "/run/redis/./redis.sock" are one socket.
  if (!unix_path.empty()) {
    return "unix " + std::filesystem::path(unix_path).lexically_normal().string();
  }
  std::string host = lowercase(host_text);
  // "redis-a." is the fully qualified spelling of "redis-a".
  if (host.size() > 1 && host.back() == '.') host.pop_back();
  in6_addr ipv6{};
  if (inet_pton(AF_INET6, host.c_str(), &ipv6) == 1) {
    char canonical[INET6_ADDRSTRLEN] = {};
    if (IN6_IS_ADDR_V4MAPPED(&ipv6)) {
      // ::ffff:a.b.c.d reaches the IPv4 host a.b.c.d.
      if (inet_ntop(AF_INET, &ipv6.s6_addr[12], canonical, sizeof canonical) != nullptr) {
        host = canonical;
      }
    } else if (inet_ntop(AF_INET6, &ipv6, canonical, sizeof canonical) != nullptr) {
      host = canonical;
    }
  }
  return host + " " + std::to_string(port);
}

}  // namespace

std::string endpoint_identity(const NodeConfig& node) {
  return identity_of(node.host, node.port, node.unix_path);
}

std::vector<std::string> endpoint_identities(const NodeConfig& node) {
  if (node.cluster.empty()) return {endpoint_identity(node)};
  std::vector<std::string> out;
  out.reserve(node.cluster.size());
  for (const ClusterSeed& seed : node.cluster) {
    out.push_back(identity_of(seed.host, seed.port, seed.unix_path));
  }
  return out;
}

std::optional<RepeatedEntry> find_shared_server(const std::vector<NodeConfig>& nodes) {
  std::unordered_map<std::string, std::size_t> member_of;
  for (std::size_t later = 0; later < nodes.size(); ++later) {
    for (std::string& identity : endpoint_identities(nodes[later])) {
      const auto [entry, inserted] = member_of.emplace(std::move(identity), later);
      if (!inserted) return RepeatedEntry{entry->second, later};
    }
  }
  return std::nullopt;
}

bool QuorumFileReader::check_node_timeout(std::size_t index, std::string_view key,
                                          const std::optional<Milliseconds>& timeout) {
  if (!timeout || *timeout < lock_.ttl) return true;
  return reader_.fail(where(node_tables_[index], key),
                      "node[" + std::to_string(index) + "]." + std::string(key),
                      "expected less than lock." + describe_lock_setting("ttl_ms", lock_.ttl) +
                          ", got " + std::to_string(timeout->count()));
}

bool QuorumFileReader::check_node_rules() {
  for (std::size_t index = 0; index < nodes_.size(); ++index) {
    if (!check_node_timeout(index, "timeout_ms", nodes_[index].timeout) ||
        !check_node_timeout(index, "replica_timeout_ms", nodes_[index].replica_timeout)) {
      return false;
    }
  }
  const bool any_cluster = std::any_of(
      nodes_.begin(), nodes_.end(), [](const NodeConfig& node) { return !node.cluster.empty(); });
  if (any_cluster && lock_.key_prefix.find_first_of("{}") != std::string::npos) {
    return reader_.fail(where(lock_table_, "key_prefix"), "lock.key_prefix",
                        "expected no '{' or '}' with a cluster member: the library puts each "
                        "call's keys in its resource's slot with a hash tag of its own, which a "
                        "brace in the prefix would override");
  }
  if (any_cluster && lock_.lock_key.find("{prefix}") == std::string::npos) {
    return reader_.fail(where(lock_table_, "lock_key"), "lock.lock_key",
                        "expected {prefix} in it with a cluster member: a lock key must carry "
                        "the hash tag the library puts after key_prefix, so that it shares its "
                        "resource's slot with the node rules' keys, got \"" +
                            lock_.lock_key + "\"");
  }
  if (const auto repeated = find_shared_server(nodes_)) {
    const bool cluster = !nodes_[repeated->later].cluster.empty();
    const std::string key = cluster ? "cluster" : "address";
    const std::string path = "node[" + std::to_string(repeated->later) + "]." + key;
    if (repeated->earlier == repeated->later) {
      return reader_.fail(where(node_tables_[repeated->later], key), path,
                          "the same seed is listed twice");
    }
    const bool earlier_cluster = !nodes_[repeated->earlier].cluster.empty();
    if (!cluster && !earlier_cluster) {
      return reader_.fail(where(node_tables_[repeated->later], key), path,
                          "same host and port as node[" + std::to_string(repeated->earlier) +
                              "]; every node must be a different Redis master");
    }
    return reader_.fail(where(node_tables_[repeated->later], key), path,
                        "names a server that node[" + std::to_string(repeated->earlier) +
                            "] names too; every member must be a different Redis master or "
                            "cluster");
  }
  if (const auto repeated =
          find_repeated(nodes_, [](const NodeConfig& node) { return node.name; })) {
    const toml::table* table = node_tables_[repeated->later];
    const bool named = table->contains("name");
    return reader_.fail(
        where(table, named ? "name" : "address"),
        "node[" + std::to_string(repeated->later) + "]." + (named ? "name" : "address"),
        std::string(named ? "the name \"" : "the default name \"") + nodes_[repeated->later].name +
            "\" is already used by node[" + std::to_string(repeated->earlier) +
            "]; names must be unique");
  }
  return true;
}

bool QuorumFileReader::resolve_passwords() {
  for (std::size_t index = 0; index < nodes_.size(); ++index) {
    NodeConfig& node = nodes_[index];
    if (node.password_env.empty()) continue;
    // Read once, at load time; the library itself never writes the environment.
    // NOLINTNEXTLINE(concurrency-mt-unsafe)
    const char* password = std::getenv(node.password_env.c_str());
    if (password == nullptr || *password == '\0') {
      return reader_.fail(where(node_tables_[index], "password_env"),
                          "node[" + std::to_string(index) + "].password_env",
                          "the environment variable " + node.password_env +
                              " is not set or is empty; it must hold this node's password");
    }
    node.password = password;
  }
  return true;
}

}  // namespace redlock::detail
