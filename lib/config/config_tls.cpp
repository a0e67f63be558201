// The quorum file's TLS settings: the [tls] table's defaults, the same keys
// on a [[node]], and the checks on the files they name (each must be
// readable when the file is loaded, so a typo is a configuration error at
// its key, not a handshake failure later).
#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "config/config_internal.hpp"
#include "text/escape.hpp"

namespace redlock::detail {
namespace {

constexpr std::string_view kTlsTableKeys[] = {"tls",           "tls_ca_file",  "tls_ca_dir",
                                              "tls_cert_file", "tls_key_file", "tls_server_name",
                                              "tls_verify"};

// Why `path` cannot serve as a file (or, with `directory`, a directory) to
// read; empty when it can. The path is the user's own text, shown escaped.
std::string unreadable(const std::string& path, bool directory) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return "cannot use " + escape_text(path) + ": " + std::strerror(errno);
  }
  if (directory && !S_ISDIR(info.st_mode)) {
    return "expected a directory of CA certificates, got something else at " + escape_text(path);
  }
  if (!directory && !S_ISREG(info.st_mode)) {
    return "expected a file, got something else at " + escape_text(path);
  }
  if (::access(path.c_str(), R_OK | (directory ? X_OK : 0)) != 0) {
    return "cannot read " + escape_text(path) + ": " + std::strerror(errno);
  }
  return {};
}

}  // namespace

bool is_tls_key(std::string_view name) noexcept {
  return std::find(std::begin(kTlsTableKeys), std::end(kTlsTableKeys), name) !=
         std::end(kTlsTableKeys);
}

bool QuorumFileReader::read_tls_key(const toml::node& value, const std::string& path,
                                    std::string_view name, TlsDraft& draft) {
  const auto read_path = [&](std::optional<std::string>& out) {
    return reader_.read_string(value, path, false, out);
  };
  if (name == "tls") {
    bool enabled = false;
    if (!reader_.read_bool(value, path, enabled)) return false;
    draft.enabled = enabled;
    return true;
  }
  if (name == "tls_ca_file") return read_path(draft.ca_file);
  if (name == "tls_ca_dir") return read_path(draft.ca_dir);
  if (name == "tls_cert_file") return read_path(draft.cert_file);
  if (name == "tls_key_file") return read_path(draft.key_file);
  if (name == "tls_server_name") return read_path(draft.server_name);
  bool verify = true;
  if (!reader_.read_bool(value, path, verify)) return false;
  draft.verify = verify;
  return true;
}

bool QuorumFileReader::read_tls_table(const toml::node& value) {
  if (!reader_.read_table(value, "tls", "a table ([tls])", tls_table_)) return false;
  for (const auto& [key, entry] : entries_in_file_order(*tls_table_)) {
    const std::string_view name = key->str();
    const std::string path = "tls." + std::string(name);
    if (!is_tls_key(name)) {
      return reader_.fail(key->source(), path, unknown_key_message(name, kTlsTableKeys));
    }
    if (!read_tls_key(*entry, path, name, tls_defaults_)) return false;
  }
  return true;
}

bool QuorumFileReader::check_tls_file(const toml::table* table, const std::string& table_path,
                                      std::string_view key, const std::string& file,
                                      bool directory) {
  const std::string problem = unreadable(file, directory);
  if (problem.empty()) return true;
  return reader_.fail(where(table, key), table_path + "." + std::string(key), problem);
}

// Settles each node's TLS settings: its own keys, else the [tls] table's;
// then checks that what they name can be read. A node's keys beat the
// defaults; the defaults do not turn TLS on for a Unix socket (Redis
// serves none there), a node's own `tls = true` there is an error.
bool QuorumFileReader::resolve_tls() {
  for (std::size_t index = 0; index < nodes_.size(); ++index) {
    NodeConfig& node = nodes_[index];
    const TlsDraft& own = node_tls_[index];
    const toml::table* table = node_tables_[index];
    const std::string path = "node[" + std::to_string(index) + "]";
    // Where each setting came from, for the error that names it.
    const auto source = [&](const std::optional<std::string>& own_value) {
      return own_value ? std::pair{table, path} : std::pair{tls_table_, std::string("tls")};
    };
    const bool unix_socket = !node.unix_path.empty();
    if (unix_socket && own.enabled.value_or(false)) {
      return reader_.fail(where(table, "tls"), path + ".tls",
                          "a Unix socket carries no TLS (Redis serves TLS on TCP only); drop "
                          "tls here or use a TCP address");
    }
    if (node.tls.enabled && own.enabled && !*own.enabled) {
      return reader_.fail(where(table, "tls"), path + ".tls",
                          "the rediss:// address asks for TLS; write redis:// for a plain "
                          "connection, or drop tls = false");
    }
    node.tls.enabled = node.tls.enabled ||
                       own.enabled.value_or(!unix_socket && tls_defaults_.enabled.value_or(false));
    const auto pick = [&](const std::optional<std::string>& mine,
                          const std::optional<std::string>& shared) {
      return mine ? *mine : shared.value_or(std::string());
    };
    node.tls.ca_file = pick(own.ca_file, tls_defaults_.ca_file);
    node.tls.ca_dir = pick(own.ca_dir, tls_defaults_.ca_dir);
    node.tls.cert_file = pick(own.cert_file, tls_defaults_.cert_file);
    node.tls.key_file = pick(own.key_file, tls_defaults_.key_file);
    node.tls.server_name = pick(own.server_name, tls_defaults_.server_name);
    node.tls.verify = own.verify ? *own.verify : tls_defaults_.verify.value_or(true);
    if (!node.tls.enabled) continue;
    const struct {
      std::string_view key;
      const std::optional<std::string>& mine;
      const std::string& value;
      bool directory;
    } files[] = {{"tls_ca_file", own.ca_file, node.tls.ca_file, false},
                 {"tls_ca_dir", own.ca_dir, node.tls.ca_dir, true},
                 {"tls_cert_file", own.cert_file, node.tls.cert_file, false},
                 {"tls_key_file", own.key_file, node.tls.key_file, false}};
    for (const auto& file : files) {
      if (file.value.empty()) continue;
      const auto [where_table, where_path] = source(file.mine);
      if (!check_tls_file(where_table, where_path, file.key, file.value, file.directory)) {
        return false;
      }
    }
    if (node.tls.cert_file.empty() != node.tls.key_file.empty()) {
      const bool has_cert = !node.tls.cert_file.empty();
      const auto [where_table, where_path] = source(has_cert ? own.cert_file : own.key_file);
      return reader_.fail(where(where_table, has_cert ? "tls_cert_file" : "tls_key_file"),
                          where_path + (has_cert ? ".tls_cert_file" : ".tls_key_file"),
                          has_cert ? "a client certificate needs its key: set tls_key_file too"
                                   : "a client key needs its certificate: set tls_cert_file too");
    }
  }
  return true;
}

bool QuorumFileReader::check_transport_rules() {
  if (!lock_.strict_transport) return true;
  for (std::size_t index = 0; index < nodes_.size(); ++index) {
    if (!password_in_clear(nodes_[index])) continue;
    return reader_.fail(where(node_tables_[index], "address"),
                        "node[" + std::to_string(index) + "].address",
                        "lock.strict_transport refuses this node: its password would cross the "
                        "network in clear text (use TLS, a loopback address or a Unix socket)");
  }
  return true;
}

}  // namespace redlock::detail

namespace redlock {

bool is_loopback_host(std::string_view host) noexcept {
  std::string text(host);
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (!text.empty() && text.back() == '.') text.pop_back();
  if (text == "localhost") return true;
  in_addr ipv4{};
  if (inet_pton(AF_INET, text.c_str(), &ipv4) == 1) return (ntohl(ipv4.s_addr) >> 24) == 127;
  in6_addr ipv6{};
  if (inet_pton(AF_INET6, text.c_str(), &ipv6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&ipv6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&ipv6) && ipv6.s6_addr[12] == 127;
}

bool password_in_clear(const NodeConfig& node) noexcept {
  return !node.password.empty() && !node.tls.enabled && node.unix_path.empty() &&
         !is_loopback_host(node.host);
}

std::vector<std::string> transport_warnings(const NodeConfig& node) {
  std::vector<std::string> warnings;
  if (password_in_clear(node)) {
    warnings.emplace_back(
        "password sent in clear text (no TLS, not a loopback address or a Unix socket); "
        "next step: docs/operations.md#access-auth-acl-passwords");
  }
  if (node.tls.enabled && !node.tls.verify) {
    warnings.emplace_back(
        "TLS certificate not verified (tls_verify = false); next step: "
        "docs/operations.md#tls-certificates");
  }
  return warnings;
}

}  // namespace redlock
