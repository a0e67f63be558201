// The quorum file: TOML text to QuorumConfig.
//
// toml++ checks the syntax; this file checks everything after it (types,
// ranges, unknown keys, rules between keys) and pins each error on the
// offending key or value as file:line:col. The first error wins. Keys are
// read in file order, then the rules between keys are checked, then the
// password variables are read from the environment, so a missing variable
// never hides a typo further up the file. The schema lives here; the typed
// reads and their messages are config_reader.hpp's.
#include "redlock/config.hpp"

#include <arpa/inet.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "config_reader.hpp"

namespace redlock {
namespace {

using detail::entries_in_file_order;
using detail::IntegerRule;
using detail::NumberRule;
using detail::toml_type_name;
using detail::unknown_key_message;
using detail::where;

// Upper bound of every *_ms key, about 24.8 days. Anything larger is a typo,
// and the bound keeps deadline arithmetic in nanoseconds far from overflow.
constexpr std::int64_t kMaxMilliseconds = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();

// The automatic node timeout: min(ttl / 100, 50 ms), never below 2 ms, so
// that a short TTL still leaves a node time for one round trip.
constexpr Milliseconds kAutoNodeTimeoutCap{50};
constexpr Milliseconds kAutoNodeTimeoutFloor{2};
constexpr int kAutoNodeTimeoutTtlDivisor = 100;

constexpr std::string_view kRootKeys = "[[node]] and [lock]";
constexpr std::string_view kNodeKeys[] = {
    "address", "name",       "username",     "password_env",
    "db",      "timeout_ms", "min_replicas", "replica_timeout_ms"};
constexpr std::string_view kLockKeys[] = {"ttl_ms",
                                          "drift_factor",
                                          "drift_ms",
                                          "min_validity_ms",
                                          "node_timeout_ms",
                                          "connect_timeout_ms",
                                          "retry_count",
                                          "retry_delay_ms",
                                          "key_prefix",
                                          "fenced",
                                          "reconnect_min_ms",
                                          "reconnect_max_ms",
                                          "max_ttl_ms",
                                          "amnesia_defence",
                                          "strict_persistence",
                                          "release_at_majority"};

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Two spellings of one endpoint compare equal: host names ignore case and
// IPv6 literals are compared in canonical form ("0:0::1" is "::1").
std::string endpoint_identity(const NodeConfig& node) {
  std::string host = lowercase(node.host);
  in6_addr ipv6{};
  if (inet_pton(AF_INET6, host.c_str(), &ipv6) == 1) {
    char canonical[INET6_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET6, &ipv6, canonical, sizeof canonical) != nullptr) host = canonical;
  }
  return host + " " + std::to_string(node.port);
}

std::string default_node_name(const std::string& host, std::uint16_t port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

NodeConfig node_from_address(ParsedAddress address) {
  NodeConfig node;
  node.name = default_node_name(address.host, address.port);
  node.host = std::move(address.host);
  node.port = address.port;
  node.username = std::move(address.username);
  node.password = std::move(address.password);
  node.db = address.db.value_or(0);
  return node;
}

struct RepeatedEntry {
  std::size_t earlier;
  std::size_t later;
};

// The first node whose identity (by `identity_of`) an earlier node already has.
template <typename IdentityOf>
std::optional<RepeatedEntry> find_repeated(const std::vector<NodeConfig>& nodes,
                                           IdentityOf identity_of) {
  for (std::size_t later = 1; later < nodes.size(); ++later) {
    for (std::size_t earlier = 0; earlier < later; ++earlier) {
      if (identity_of(nodes[earlier]) == identity_of(nodes[later])) {
        return RepeatedEntry{earlier, later};
      }
    }
  }
  return std::nullopt;
}

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

bool is_environment_variable_name(std::string_view name) noexcept {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  });
}

ConfigError error_without_position(std::string_view file, std::string message) {
  return ConfigError{std::string(file), 0, 0, std::move(message)};
}

ConfigResult failure(ConfigError error) { return ConfigResult{std::nullopt, std::move(error)}; }

constexpr IntegerRule kPositiveMilliseconds{1, kMaxMilliseconds,
                                            "a positive integer (milliseconds)"};
constexpr IntegerRule kNonNegativeMilliseconds{0, kMaxMilliseconds,
                                               "a non-negative integer (milliseconds)"};
constexpr IntegerRule kDatabaseIndex{0, kMaxInt, "a non-negative integer (database index)"};
constexpr IntegerRule kReplicaCount{0, kMaxInt, "a non-negative integer (replica count)"};
constexpr IntegerRule kRetryCount{-1, kMaxInt, "an integer >= -1 (-1: retry until the deadline)"};
// At 0.5 or more the drift would eat half the TTL or more, which leaves no
// useful validity.
constexpr NumberRule kDriftFactor{0.0, 0.5, "a number in [0, 0.5)"};

// One [[node]] table while it is being read; the keys that may also come
// from a redis:// address are kept apart until both are known.
struct NodeDraft {
  const toml::table* table = nullptr;
  std::string path;  // "node[0]"
  std::optional<ParsedAddress> address;
  std::optional<std::string> name;
  std::optional<std::string> username;
  std::optional<std::string> password_env;
  std::optional<int> db;
  std::optional<Milliseconds> timeout;
  int min_replicas = 0;
  std::optional<Milliseconds> replica_timeout;
};

// Reads one parsed TOML document against the quorum-file schema; `reader_`
// does the typed reads and keeps the first error, after which every step
// returns false and the caller stops.
class QuorumFileReader {
 public:
  explicit QuorumFileReader(std::string_view source) : reader_(source) {}

  ConfigResult read(const toml::table& root) {
    if (!read_root(root) || !check_lock_rules() || !check_node_rules() || !resolve_passwords()) {
      return failure(reader_.take_error());
    }
    return ConfigResult{QuorumConfig{std::move(nodes_), lock_, reader_.source()}, {}};
  }

 private:
  // ---- [[node]] ----

  bool read_root(const toml::table& root) {
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

  bool read_nodes(const toml::node& value) {
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
    for (std::size_t index = 0; index < tables->size(); ++index) {
      const toml::node& element = *tables->get(index);
      const std::string path = "node[" + std::to_string(index) + "]";
      const toml::table* table = nullptr;
      if (!reader_.read_table(element, path, "a table", table)) return false;
      if (!read_node(*table, path)) return false;
    }
    return true;
  }

  bool read_node(const toml::table& table, const std::string& path) {
    NodeDraft draft;
    draft.table = &table;
    draft.path = path;
    for (const auto& [key, value] : entries_in_file_order(table)) {
      if (!read_node_key(*key, *value, draft)) return false;
    }
    return finish_node(std::move(draft));
  }

  bool read_node_key(const toml::key& key, const toml::node& value, NodeDraft& draft) {
    const std::string_view name = key.str();
    const std::string path = draft.path + "." + std::string(name);
    if (name == "address") return read_address(value, path, draft.address);
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
    if (name == "password") {
      return reader_.fail(
          key.source(), path,
          "passwords are not read from the file; put the password in an environment "
          "variable and name that variable in password_env");
    }
    return reader_.fail(key.source(), path, unknown_key_message(name, kNodeKeys));
  }

  bool read_address(const toml::node& value, const std::string& path,
                    std::optional<ParsedAddress>& out) {
    std::string text;
    if (!reader_.read_string(value, path, false, text)) return false;
    AddressResult parsed = parse_address(text);
    if (!parsed.address) return reader_.fail(value.source(), path, parsed.error);
    out = std::move(parsed.address);
    return true;
  }

  bool read_password_env(const toml::node& value, const std::string& path,
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
  bool finish_node(NodeDraft draft) {
    const toml::table* table = draft.table;
    const std::string& path = draft.path;
    if (!draft.address) {
      return reader_.fail(table->source(), path,
                          "missing key address: expected the node's address, e.g. "
                          "address = \"127.0.0.1:6379\"");
    }
    const bool url_has_username = !draft.address->username.empty();
    const bool url_has_password = !draft.address->password.empty();
    const bool url_has_db = draft.address->db.has_value();
    NodeConfig node = node_from_address(std::move(*draft.address));
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
    if (draft.db) {
      if (url_has_db) {
        return reader_.fail(where(table, "db"), path + ".db",
                            "the address already selects a database; give it in one place only");
      }
      node.db = *draft.db;
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
    return true;
  }

  // ---- [lock] ----

  bool read_lock(const toml::node& value) {
    if (!reader_.read_table(value, "lock", "a table ([lock])", lock_table_)) return false;
    const auto entries = entries_in_file_order(*lock_table_);
    return std::all_of(entries.begin(), entries.end(), [this](const auto& entry) {
      return read_lock_key(*entry.first, *entry.second);
    });
  }

  bool read_lock_key(const toml::key& key, const toml::node& value) {
    const std::string_view name = key.str();
    const std::string path = "lock." + std::string(name);
    if (name == "ttl_ms") {
      return reader_.read_milliseconds(value, path, kPositiveMilliseconds, lock_.ttl);
    }
    if (name == "drift_factor") {
      return reader_.read_number(value, path, kDriftFactor, lock_.drift_factor);
    }
    if (name == "drift_ms") {
      return reader_.read_milliseconds(value, path, kNonNegativeMilliseconds, lock_.drift_ms);
    }
    if (name == "min_validity_ms") {
      return reader_.read_milliseconds(value, path, kNonNegativeMilliseconds, lock_.min_validity);
    }
    if (name == "node_timeout_ms") {
      return reader_.read_milliseconds(value, path, kPositiveMilliseconds, lock_.node_timeout);
    }
    if (name == "connect_timeout_ms") {
      return reader_.read_milliseconds(value, path, kPositiveMilliseconds, lock_.connect_timeout);
    }
    if (name == "retry_count") return reader_.read_int(value, path, kRetryCount, lock_.retry_count);
    if (name == "retry_delay_ms") {
      return reader_.read_milliseconds(value, path, kNonNegativeMilliseconds, lock_.retry_delay);
    }
    if (name == "key_prefix") return reader_.read_string(value, path, true, lock_.key_prefix);
    if (name == "fenced") return reader_.read_bool(value, path, lock_.fenced);
    if (name == "reconnect_min_ms") {
      return reader_.read_milliseconds(value, path, kPositiveMilliseconds, lock_.reconnect_min);
    }
    if (name == "reconnect_max_ms") {
      return reader_.read_milliseconds(value, path, kPositiveMilliseconds, lock_.reconnect_max);
    }
    if (name == "max_ttl_ms") {
      return reader_.read_milliseconds(value, path, kPositiveMilliseconds, lock_.max_ttl);
    }
    if (name == "amnesia_defence") return reader_.read_bool(value, path, lock_.amnesia_defence);
    if (name == "strict_persistence") {
      return reader_.read_bool(value, path, lock_.strict_persistence);
    }
    if (name == "release_at_majority") {
      return reader_.read_bool(value, path, lock_.release_at_majority);
    }
    return reader_.fail(key.source(), path, unknown_key_message(name, kLockKeys));
  }

  // "ttl_ms (10000)" or "ttl_ms (10000, the default)".
  [[nodiscard]] std::string describe_lock_setting(std::string_view key, Milliseconds value) const {
    const bool written = lock_table_ != nullptr && lock_table_->contains(key);
    return std::string(key) + " (" + std::to_string(value.count()) +
           (written ? ")" : ", the default)");
  }

  bool check_lock_rules() {
    const Milliseconds ttl = lock_.ttl;
    if (lock_.min_validity >= ttl) {
      return reader_.fail(where(lock_table_, "min_validity_ms"), "lock.min_validity_ms",
                          "expected less than " + describe_lock_setting("ttl_ms", ttl) + ", got " +
                              std::to_string(lock_.min_validity.count()));
    }
    if (lock_.node_timeout >= ttl) {
      return reader_.fail(where(lock_table_, "node_timeout_ms"), "lock.node_timeout_ms",
                          "expected less than " + describe_lock_setting("ttl_ms", ttl) + ", got " +
                              std::to_string(lock_.node_timeout.count()));
    }
    // validity = ttl - elapsed - drift must exceed min_validity; when it
    // cannot even with zero elapsed time, no acquire can ever succeed.
    // The drift is computed as the library computes it: the scaled part
    // rounded up to whole milliseconds.
    const auto scaled_drift =
        static_cast<std::int64_t>(std::ceil(static_cast<double>(ttl.count()) * lock_.drift_factor));
    const Milliseconds drift = Milliseconds{scaled_drift} + lock_.drift_ms;
    if (ttl - drift <= lock_.min_validity) {
      // Point at the drift setting the user wrote, or at the TTL when the
      // default drift is what a too-short TTL cannot carry.
      const char* key = "ttl_ms";
      for (const char* candidate : {"drift_ms", "drift_factor"}) {
        if (lock_table_ != nullptr && lock_table_->contains(candidate)) {
          key = candidate;
          break;
        }
      }
      return reader_.fail(
          where(lock_table_, key), std::string("lock.") + key,
          "no lock could ever be acquired: " + describe_lock_setting("ttl_ms", ttl) +
              " minus the drift (ttl_ms * drift_factor + drift_ms = " +
              std::to_string(drift.count()) + " ms) is not above " +
              describe_lock_setting("min_validity_ms", lock_.min_validity));
    }
    if (lock_.max_ttl.count() > 0 && lock_.max_ttl < ttl) {
      return reader_.fail(where(lock_table_, "max_ttl_ms"), "lock.max_ttl_ms",
                          "expected at least " + describe_lock_setting("ttl_ms", ttl) + ", got " +
                              std::to_string(lock_.max_ttl.count()));
    }
    if (lock_.reconnect_min > lock_.reconnect_max) {
      const bool min_written = lock_table_ != nullptr && lock_table_->contains("reconnect_min_ms");
      const char* key = min_written ? "reconnect_min_ms" : "reconnect_max_ms";
      return reader_.fail(where(lock_table_, key), std::string("lock.") + key,
                          "expected reconnect_min_ms <= reconnect_max_ms, got " +
                              describe_lock_setting("reconnect_min_ms", lock_.reconnect_min) +
                              " > " +
                              describe_lock_setting("reconnect_max_ms", lock_.reconnect_max));
    }
    return true;
  }

  // ---- rules across nodes ----

  bool check_node_timeout(std::size_t index, std::string_view key,
                          const std::optional<Milliseconds>& timeout) {
    if (!timeout || *timeout < lock_.ttl) return true;
    return reader_.fail(where(node_tables_[index], key),
                        "node[" + std::to_string(index) + "]." + std::string(key),
                        "expected less than lock." + describe_lock_setting("ttl_ms", lock_.ttl) +
                            ", got " + std::to_string(timeout->count()));
  }

  bool check_node_rules() {
    for (std::size_t index = 0; index < nodes_.size(); ++index) {
      if (!check_node_timeout(index, "timeout_ms", nodes_[index].timeout) ||
          !check_node_timeout(index, "replica_timeout_ms", nodes_[index].replica_timeout)) {
        return false;
      }
    }
    if (const auto repeated = find_repeated(nodes_, endpoint_identity)) {
      return reader_.fail(where(node_tables_[repeated->later], "address"),
                          "node[" + std::to_string(repeated->later) + "].address",
                          "same host and port as node[" + std::to_string(repeated->earlier) +
                              "]; every node must be a different Redis master");
    }
    if (const auto repeated =
            find_repeated(nodes_, [](const NodeConfig& node) { return node.name; })) {
      const toml::table* table = node_tables_[repeated->later];
      const bool named = table->contains("name");
      return reader_.fail(
          where(table, named ? "name" : "address"),
          "node[" + std::to_string(repeated->later) + "]." + (named ? "name" : "address"),
          std::string(named ? "the name \"" : "the default name \"") +
              nodes_[repeated->later].name + "\" is already used by node[" +
              std::to_string(repeated->earlier) + "]; names must be unique");
    }
    return true;
  }

  bool resolve_passwords() {
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

  detail::ConfigReader reader_;
  std::vector<NodeConfig> nodes_;
  std::vector<const toml::table*> node_tables_;  // parallel to nodes_
  LockConfig lock_;
  const toml::table* lock_table_ = nullptr;
};

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

std::string ConfigError::to_string() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  if (!out.empty()) out += ": ";
  return out + message;
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
