// The quorum file: TOML text to QuorumConfig.
//
// The file's bytes are read by config_file.hpp, a pre-scan
// (config_prescan.hpp) bounds what toml++ is given, toml++
// checks the syntax; this file checks everything after it (types,
// ranges, unknown keys, rules between keys) and pins each error on the
// offending key or value as file:line:col. The first error wins. Keys are
// read in file order, then the rules between keys are checked, then the
// password variables are read from the environment, so a missing variable
// never hides a typo further up the file. The schema lives here and in the
// files named in config_internal.hpp; the typed reads and their messages are
// config_reader.hpp's.
#include "redlock/config.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "config/config_file.hpp"
#include "config/config_internal.hpp"
#include "config/config_prescan.hpp"
#include "protocol/validity.hpp"
#include "text/escape.hpp"

namespace redlock {
namespace {

using detail::endpoint_identity;
using detail::escape_text;
using detail::find_repeated;
using detail::node_from_address;
using detail::QuorumFileReader;
using detail::read_quorum_file;
using detail::too_large_message;

// The automatic node timeout: min(ttl / 100, 50 ms), never below 2 ms, so
// that a short TTL still leaves a node time for one round trip.
constexpr Milliseconds kAutoNodeTimeoutCap{50};
constexpr Milliseconds kAutoNodeTimeoutFloor{2};
constexpr int kAutoNodeTimeoutTtlDivisor = 100;

constexpr std::string_view kRootKeys = "[[node]], [lock] and [tls]";

ConfigError error_without_position(std::string_view file, std::string message) {
  return ConfigError{std::string(file), 0, 0, std::move(message)};
}

ConfigResult failure(ConfigError error) { return ConfigResult{std::nullopt, std::move(error)}; }

// Runs `body`, turning any exception into a ConfigError: no exception may
// leave the public functions.
template <typename Body>
ConfigResult without_exceptions(std::string_view source, Body&& body) {
  try {
    return body();
  } catch (const toml::parse_error& error) {
    const toml::source_position& at = error.source().begin;
    // toml++ may quote what it found, which came from the file.
    return failure(ConfigError{std::string(source), at.line, at.column,
                               "invalid TOML: " + escape_text(error.description())});
  } catch (const std::exception& error) {
    return failure(error_without_position(source, std::string("internal error: ") + error.what()));
  }
}

}  // namespace

namespace detail {

ConfigResult QuorumFileReader::read(const toml::table& root) {
  if (!read_root(root) || !check_lock_rules() || !check_node_rules() || !resolve_tls() ||
      !resolve_passwords() || !check_transport_rules()) {
    return failure(reader_.take_error());
  }
  return ConfigResult{QuorumConfig{std::move(nodes_), lock_, reader_.source()}, {}};
}

bool QuorumFileReader::read_root(const toml::table& root) {
  bool saw_nodes = false;
  for (const auto& [key, value] : entries_in_file_order(root)) {
    const std::string_view name = key->str();
    if (name == "node") {
      saw_nodes = true;
      if (!read_nodes(*value)) return false;
    } else if (name == "lock") {
      if (!read_lock(*value)) return false;
    } else if (name == "tls") {
      if (!read_tls_table(*value)) return false;
    } else {
      return reader_.fail(key->source(), name,
                          "unknown key; expected only " + std::string(kRootKeys));
    }
  }
  if (!saw_nodes) {
    return reader_.fail_without_position(
        "no [[node]] table: expected at least one Redis master, e.g. [[node]] then "
        "address = \"127.0.0.1:6379\" on the next line");
  }
  return true;
}

}  // namespace detail

std::string ConfigError::to_string() const {
  // Appended piece by piece: `":" + std::to_string(...)` inlined here draws
  // a false -Wrestrict from g++ 12 at -O3.
  std::string out = escape_text(file);  // a path is anyone's bytes
  if (line > 0) {
    out.append(":").append(std::to_string(line));
    if (column > 0) out.append(":").append(std::to_string(column));
  }
  if (!out.empty()) out.append(": ");
  return out.append(message);
}

ConfigResult parse_config(std::string_view toml_text, std::string_view source_name) {
  return without_exceptions(source_name, [&] {
    if (toml_text.size() > kMaxConfigFileBytes) {
      return failure(error_without_position(source_name, too_large_message()));
    }
    if (auto problem = detail::prescan_toml(toml_text)) {
      return failure(ConfigError{std::string(source_name), problem->line, problem->column,
                                 "invalid TOML: " + std::move(problem->message)});
    }
    const toml::table root = toml::parse(toml_text, source_name);
    return QuorumFileReader(source_name).read(root);
  });
}

ConfigResult load_config(const std::filesystem::path& file) {
  return without_exceptions(file.native(), [&] {
    std::string text;
    if (auto problem = read_quorum_file(file, text)) {
      return failure(error_without_position(file.native(), std::move(*problem)));
    }
    return parse_config(text, file.native());
  });
}

Milliseconds lock_drift(const LockConfig& lock, Milliseconds ttl) noexcept {
  return detail::drift_allowance(ttl, lock.drift_factor, lock.drift_ms);
}

bool ttl_can_be_valid(const LockConfig& lock, Milliseconds ttl) noexcept {
  return ttl - lock_drift(lock, ttl) > lock.min_validity;
}

Milliseconds effective_node_timeout(const LockConfig& lock, const NodeConfig& node) noexcept {
  if (node.timeout) return *node.timeout;
  if (lock.node_timeout > Milliseconds::zero()) return lock.node_timeout;
  return std::max(kAutoNodeTimeoutFloor,
                  std::min(kAutoNodeTimeoutCap, lock.ttl / kAutoNodeTimeoutTtlDivisor));
}

namespace {
// "address #2": an address is named by its place, never quoted, as any part
// of it may be a password (address.cpp).
std::string address_label(std::size_t index) {
  std::string out = "address #";
  out.append(std::to_string(index + 1));
  return out;
}
constexpr std::string_view kClusterScheme = "redis+cluster://";

// "redis+cluster://host:port,host:port": a cluster member's seeds, TCP
// endpoints only; what went wrong, quoting nothing, in `error`.
std::optional<NodeConfig> cluster_from_address(std::string_view text, std::string& error) {
  const std::string_view list = text.substr(kClusterScheme.size());
  if (list.find('@') != std::string_view::npos || list.find('/') != std::string_view::npos) {
    error =
        "a redis+cluster:// address lists host:port seeds only (no user, password or "
        "database); give credentials in a quorum file's [[node]] table";
    return std::nullopt;
  }
  std::vector<ParsedAddress> seeds;
  std::size_t at = 0;
  for (;;) {
    const std::size_t comma = list.find(',', at);
    const std::string_view seed =
        list.substr(at, comma == std::string_view::npos ? comma : comma - at);
    AddressResult parsed = detail::parse_cluster_seed(seed);
    if (!parsed.address) {
      error = "seed #" + std::to_string(seeds.size() + 1) + ": " + parsed.error;
      return std::nullopt;
    }
    seeds.push_back(std::move(*parsed.address));
    if (seeds.size() > detail::kMaxClusterSeeds) {
      error = "too many seeds: a cluster member lists at most " +
              std::to_string(detail::kMaxClusterSeeds);
      return std::nullopt;
    }
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return detail::node_from_seeds(std::move(seeds));
}

}  // namespace

ConfigResult config_from_addresses(const std::vector<std::string>& addresses) {
  constexpr std::string_view kSource = "--node";
  return without_exceptions(kSource, [&] {
    if (addresses.empty()) {
      return failure(error_without_position(kSource, "expected at least one node address"));
    }
    if (addresses.size() > kMaxNodes) {
      return failure(error_without_position(kSource, address_label(kMaxNodes) +
                                                         ": too many nodes: a quorum has at most " +
                                                         std::to_string(kMaxNodes)));
    }
    QuorumConfig config;
    config.source = std::string(kSource);
    for (std::size_t index = 0; index < addresses.size(); ++index) {
      const std::string label = address_label(index) + ": ";
      if (detail::has_scheme(addresses[index], kClusterScheme)) {
        std::string error;
        std::optional<NodeConfig> member = cluster_from_address(addresses[index], error);
        if (!member) return failure(error_without_position(kSource, label + escape_text(error)));
        config.nodes.push_back(std::move(*member));
        continue;
      }
      AddressResult parsed = parse_address(addresses[index]);
      if (!parsed.address) {
        return failure(error_without_position(kSource, label + escape_text(parsed.error)));
      }
      if (!parsed.address->username.empty() && parsed.address->password.empty()) {
        return failure(error_without_position(
            kSource, label + "a username needs a password: redis://user:password@host"));
      }
      config.nodes.push_back(node_from_address(std::move(*parsed.address)));
    }
    if (const auto repeated = detail::find_shared_server(config.nodes)) {
      if (repeated->earlier == repeated->later) {
        return failure(error_without_position(
            kSource, address_label(repeated->later) + ": the same seed is listed twice"));
      }
      return failure(error_without_position(
          kSource, address_label(repeated->later) + ": same host and port as " +
                       address_label(repeated->earlier) +
                       "; every node must be a different Redis master"));
    }
    return ConfigResult{std::move(config), {}};
  });
}

}  // namespace redlock
