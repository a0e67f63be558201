// The quorum file: TOML text to QuorumConfig.
//
// toml++ checks the syntax; this file checks everything after it (types,
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
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "config/config_internal.hpp"

namespace redlock {
namespace {

using detail::endpoint_identity;
using detail::find_repeated;
using detail::node_from_address;
using detail::QuorumFileReader;

// The automatic node timeout: min(ttl / 100, 50 ms), never below 2 ms, so
// that a short TTL still leaves a node time for one round trip.
constexpr Milliseconds kAutoNodeTimeoutCap{50};
constexpr Milliseconds kAutoNodeTimeoutFloor{2};
constexpr int kAutoNodeTimeoutTtlDivisor = 100;

constexpr std::string_view kRootKeys = "[[node]] and [lock]";

// "redis://user:secret@host" becomes "redis://user:***@host", so that an
// address can be quoted in a message.
std::string redact_address_password(std::string_view address) {
  const std::size_t at = address.rfind('@');
  if (at == std::string_view::npos) return std::string(address);
  const std::size_t scheme_end = address.find("://");
  const std::size_t userinfo_start =
      scheme_end == std::string_view::npos || scheme_end > at ? 0 : scheme_end + 3;
  const std::size_t colon = address.find(':', userinfo_start);
  if (colon == std::string_view::npos || colon > at) return std::string(address);
  return std::string(address.substr(0, colon + 1)) + "***" + std::string(address.substr(at));
}

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
    return failure(ConfigError{std::string(source), at.line, at.column,
                               "invalid TOML: " + std::string(error.description())});
  } catch (const std::exception& error) {
    return failure(error_without_position(source, std::string("internal error: ") + error.what()));
  }
}

// Reads a whole file, or says why it could not ("cannot open: ...").
std::optional<std::string> read_file(const std::filesystem::path& file, std::string& text) {
  struct CloseFile {
    void operator()(std::FILE* stream) const noexcept { std::fclose(stream); }
  };
  const std::unique_ptr<std::FILE, CloseFile> stream(std::fopen(file.c_str(), "rb"));
  if (!stream) return "cannot open: " + std::generic_category().message(errno);
  char buffer[16384];
  std::size_t count = 0;
  while ((count = std::fread(buffer, 1, sizeof buffer, stream.get())) > 0) {
    text.append(buffer, count);
  }
  if (std::ferror(stream.get()) != 0) {
    return "cannot read: " + std::generic_category().message(errno);
  }
  return std::nullopt;
}

}  // namespace

namespace detail {

ConfigResult QuorumFileReader::read(const toml::table& root) {
  if (!read_root(root) || !check_lock_rules() || !check_node_rules() || !resolve_passwords()) {
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
    } else {
      return reader_.fail(key->source(), name,
                          "unknown key; expected only " + std::string(kRootKeys));
    }
  }
  if (!saw_nodes) {
    return reader_.fail_without_position(
        "no [[node]] table: expected at least one Redis master, e.g.\n"
        "  [[node]]\n  address = \"127.0.0.1:6379\"");
  }
  return true;
}

}  // namespace detail

std::string ConfigError::to_string() const {
  // Appended piece by piece: `":" + std::to_string(...)` inlined here draws
  // a false -Wrestrict from g++ 12 at -O3.
  std::string out = file;
  if (line > 0) {
    out.append(":").append(std::to_string(line));
    if (column > 0) out.append(":").append(std::to_string(column));
  }
  if (!out.empty()) out.append(": ");
  return out.append(message);
}

ConfigResult parse_config(std::string_view toml_text, std::string_view source_name) {
  return without_exceptions(source_name, [&] {
    const toml::table root = toml::parse(toml_text, source_name);
    return QuorumFileReader(source_name).read(root);
  });
}

ConfigResult load_config(const std::filesystem::path& file) {
  return without_exceptions(file.native(), [&] {
    std::string text;
    if (auto problem = read_file(file, text)) {
      return failure(error_without_position(file.native(), std::move(*problem)));
    }
    return parse_config(text, file.native());
  });
}

Milliseconds effective_node_timeout(const LockConfig& lock, const NodeConfig& node) noexcept {
  if (node.timeout) return *node.timeout;
  if (lock.node_timeout > Milliseconds::zero()) return lock.node_timeout;
  return std::max(kAutoNodeTimeoutFloor,
                  std::min(kAutoNodeTimeoutCap, lock.ttl / kAutoNodeTimeoutTtlDivisor));
}

namespace {
// Builds `"text"` by appending: GCC 12 at -O2 reports a false -Wrestrict for
// `"\"" + std::string` once inlined here.
std::string quoted_address(const std::string& address) {
  std::string out;
  const std::string redacted = redact_address_password(address);
  out.reserve(redacted.size() + 2);
  out.push_back('"');
  out.append(redacted);
  out.push_back('"');
  return out;
}
}  // namespace

ConfigResult config_from_addresses(const std::vector<std::string>& addresses) {
  constexpr std::string_view kSource = "--node";
  return without_exceptions(kSource, [&] {
    if (addresses.empty()) {
      return failure(error_without_position(kSource, "expected at least one node address"));
    }
    QuorumConfig config;
    config.source = std::string(kSource);
    for (const std::string& text : addresses) {
      AddressResult parsed = parse_address(text);
      const std::string quoted = quoted_address(text) + ": ";
      if (!parsed.address) return failure(error_without_position(kSource, quoted + parsed.error));
      if (!parsed.address->username.empty() && parsed.address->password.empty()) {
        return failure(error_without_position(
            kSource, quoted + "a username needs a password: redis://user:password@host"));
      }
      config.nodes.push_back(node_from_address(std::move(*parsed.address)));
    }
    if (const auto repeated = find_repeated(config.nodes, endpoint_identity)) {
      return failure(error_without_position(
          kSource, quoted_address(addresses[repeated->later]) + ": same host and port as " +
                       quoted_address(addresses[repeated->earlier]) +
                       "; every node must be a different Redis master"));
    }
    return ConfigResult{std::move(config), {}};
  });
}

}  // namespace redlock
