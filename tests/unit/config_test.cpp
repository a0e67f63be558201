// parse_config, load_config, effective_node_timeout, config_from_addresses
// and ConfigError::to_string. No network, no Redis.
#include "redlock/config.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "config/config_internal.hpp"

// The tests change the environment from a single thread; the warning is
// about threads that read it concurrently.
// NOLINTBEGIN(concurrency-mt-unsafe)

namespace redlock {
namespace {

// Names each parameterized case after its `name` field.
template <typename Case>
std::string CaseName(const testing::TestParamInfo<Case>& case_info) {
  return case_info.param.name;
}

using std::chrono::milliseconds;

// Sets (or, with nullopt, unsets) an environment variable for one test and
// puts back whatever was there before.
class ScopedEnvironmentVariable {
 public:
  ScopedEnvironmentVariable(std::string name, const std::optional<std::string>& value)
      : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) previous_ = old;
    if (value) {
      ::setenv(name_.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ~ScopedEnvironmentVariable() {
    if (previous_) {
      ::setenv(name_.c_str(), previous_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnvironmentVariable(const ScopedEnvironmentVariable&) = delete;
  ScopedEnvironmentVariable& operator=(const ScopedEnvironmentVariable&) = delete;

 private:
  std::string name_;
  std::optional<std::string> previous_;
};

// A fresh directory under $TMPDIR, removed with its contents at the end.
class ScopedTemporaryDirectory {
 public:
  ScopedTemporaryDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "redlock-config-XXXXXX");
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScopedTemporaryDirectory() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScopedTemporaryDirectory(const ScopedTemporaryDirectory&) = delete;
  ScopedTemporaryDirectory& operator=(const ScopedTemporaryDirectory&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  [[nodiscard]] std::filesystem::path write(const std::string& name,
                                            const std::string& contents) const {
    std::filesystem::path file = path_ / name;
    std::ofstream(file, std::ios::binary) << contents;
    return file;
  }

 private:
  std::filesystem::path path_;
};

constexpr const char* kSource = "redlock.toml";

// Two lines: every error case below that is not about nodes starts with it.
const std::string kOneNode = "[[node]]\naddress = \"127.0.0.1:7101\"\n";

const std::string kThreeNodes =
    "[[node]]\naddress = \"127.0.0.1:7101\"\n"
    "[[node]]\naddress = \"127.0.0.1:7102\"\n"
    "[[node]]\naddress = \"127.0.0.1:7103\"\n";

QuorumConfig parse_ok(const std::string& text) {
  ConfigResult result = parse_config(text, kSource);
  EXPECT_TRUE(result.ok()) << result.error.to_string();
  return result.ok() ? *result.config : QuorumConfig{};
}

TEST(ParseConfig, ReadsTheMinimalFileOfDesignSection4) {
  const QuorumConfig config = parse_ok(kThreeNodes + "\n[lock]\nttl_ms = 10000\n");
  ASSERT_EQ(config.nodes.size(), 3U);
  EXPECT_EQ(config.nodes[0].host, "127.0.0.1");
  EXPECT_EQ(config.nodes[0].port, 7101);
  EXPECT_EQ(config.nodes[2].port, 7103);
  EXPECT_EQ(config.lock.ttl, milliseconds(10000));
}

TEST(ParseConfig, RecordsTheSourceName) { EXPECT_EQ(parse_ok(kOneNode).source, kSource); }

TEST(ParseConfig, LeavesUnwrittenKeysAtTheirDefaults) {
  const QuorumConfig config = parse_ok(kOneNode);
  const LockConfig defaults;
  EXPECT_EQ(config.lock.ttl, defaults.ttl);
  EXPECT_EQ(config.lock.drift_factor, defaults.drift_factor);
  EXPECT_EQ(config.lock.drift_ms, defaults.drift_ms);
  EXPECT_EQ(config.lock.min_validity, defaults.min_validity);
  EXPECT_EQ(config.lock.node_timeout, defaults.node_timeout);
  EXPECT_EQ(config.lock.connect_timeout, defaults.connect_timeout);
  EXPECT_EQ(config.lock.retry_count, defaults.retry_count);
  EXPECT_EQ(config.lock.retry_delay, defaults.retry_delay);
  EXPECT_EQ(config.lock.key_prefix, defaults.key_prefix);
  EXPECT_EQ(config.lock.lock_key, "{prefix}lock:{resource}");
  EXPECT_EQ(config.lock.fenced, defaults.fenced);
  EXPECT_EQ(config.lock.reconnect_min, defaults.reconnect_min);
  EXPECT_EQ(config.lock.reconnect_max, defaults.reconnect_max);

  const NodeConfig& node = config.nodes.at(0);
  EXPECT_EQ(node.name, "127.0.0.1:7101");
  EXPECT_TRUE(node.username.empty());
  EXPECT_TRUE(node.password.empty());
  EXPECT_TRUE(node.password_env.empty());
  EXPECT_EQ(node.db, 0);
  EXPECT_FALSE(node.timeout.has_value());
  EXPECT_EQ(node.min_replicas, 0);
  EXPECT_FALSE(node.replica_timeout.has_value());
}

TEST(ParseConfig, ReadsEveryKey) {
  const ScopedEnvironmentVariable password("REDLOCK_TEST_PASSWORD_A", "pa55");
  const QuorumConfig config = parse_ok(R"(
[[node]]
address = "redis-a.internal:7101"
name = "a"
username = "locker"
password_env = "REDLOCK_TEST_PASSWORD_A"
db = 2
timeout_ms = 40
min_replicas = 1
replica_timeout_ms = 30

[lock]
ttl_ms = 30000
drift_factor = 0.02
drift_ms = 5
min_validity_ms = 100
node_timeout_ms = 60
connect_timeout_ms = 500
retry_count = -1
retry_delay_ms = 0
key_prefix = "app:"
lock_key = "{resource}"
fenced = true
reconnect_min_ms = 10
reconnect_max_ms = 10
release_at_majority = false
)");
  ASSERT_EQ(config.nodes.size(), 1U);
  const NodeConfig& node = config.nodes[0];
  EXPECT_EQ(node.name, "a");
  EXPECT_EQ(node.host, "redis-a.internal");
  EXPECT_EQ(node.port, 7101);
  EXPECT_EQ(node.username, "locker");
  EXPECT_EQ(node.password, "pa55");
  EXPECT_EQ(node.password_env, "REDLOCK_TEST_PASSWORD_A");
  EXPECT_EQ(node.db, 2);
  EXPECT_EQ(node.timeout, milliseconds(40));
  EXPECT_EQ(node.min_replicas, 1);
  EXPECT_EQ(node.replica_timeout, milliseconds(30));

  const LockConfig& lock = config.lock;
  EXPECT_EQ(lock.ttl, milliseconds(30000));
  EXPECT_DOUBLE_EQ(lock.drift_factor, 0.02);
  EXPECT_EQ(lock.drift_ms, milliseconds(5));
  EXPECT_EQ(lock.min_validity, milliseconds(100));
  EXPECT_EQ(lock.node_timeout, milliseconds(60));
  EXPECT_EQ(lock.connect_timeout, milliseconds(500));
  EXPECT_EQ(lock.retry_count, -1);
  EXPECT_EQ(lock.retry_delay, milliseconds(0));
  EXPECT_EQ(lock.key_prefix, "app:");
  EXPECT_EQ(lock.lock_key, "{resource}");
  EXPECT_TRUE(lock.fenced);
  EXPECT_EQ(lock.reconnect_min, milliseconds(10));
  EXPECT_EQ(lock.reconnect_max, milliseconds(10));
  EXPECT_FALSE(lock.release_at_majority);
}

TEST(ParseConfig, TakesUserPasswordAndDbFromARedisUrl) {
  const NodeConfig node =
      parse_ok("[[node]]\naddress = \"redis://alice:s%3Acret@[::1]:7101/4\"\n").nodes.at(0);
  EXPECT_EQ(node.host, "::1");
  EXPECT_EQ(node.port, 7101);
  EXPECT_EQ(node.name, "[::1]:7101");
  EXPECT_EQ(node.username, "alice");
  EXPECT_EQ(node.password, "s:cret");
  EXPECT_EQ(node.db, 4);
}

TEST(ParseConfig, CombinesAUrlUsernameWithAPasswordVariable) {
  const ScopedEnvironmentVariable password("REDLOCK_TEST_PASSWORD_A", "pa55");
  const NodeConfig node = parse_ok(
                              "[[node]]\naddress = \"redis://alice@h:1\"\n"
                              "password_env = \"REDLOCK_TEST_PASSWORD_A\"\n")
                              .nodes.at(0);
  EXPECT_EQ(node.username, "alice");
  EXPECT_EQ(node.password, "pa55");
}

TEST(ParseConfig, AllowsEvenNodeCounts) {
  EXPECT_EQ(parse_ok(kOneNode + "[[node]]\naddress = \"127.0.0.1:7102\"\n").nodes.size(), 2U);
}

TEST(ParseConfig, AcceptsAnIntegerDriftFactor) {
  EXPECT_EQ(parse_ok(kOneNode + "[lock]\ndrift_factor = 0\n").lock.drift_factor, 0.0);
}

TEST(ParseConfig, AcceptsAnEmptyKeyPrefix) {
  EXPECT_EQ(parse_ok(kOneNode + "[lock]\nkey_prefix = \"\"\n").lock.key_prefix, "");
}

TEST(ParseConfig, AcceptsLockKeyPatternsWithTheResourceOnce) {
  for (const char* pattern : {"{resource}", "{prefix}{resource}", "locks/{resource}",
                              "{prefix}lock:{resource}:v2", "x{resource}{prefix}"}) {
    EXPECT_EQ(parse_ok(kOneNode + "[lock]\nlock_key = \"" + pattern + "\"\n").lock.lock_key,
              pattern);
  }
}

TEST(ParseConfig, AcceptsInlineTables) {
  const QuorumConfig config =
      parse_ok("node = [{ address = \"a:1\" }, { address = \"b:2\" }]\nlock = { ttl_ms = 500 }\n");
  EXPECT_EQ(config.nodes.size(), 2U);
  EXPECT_EQ(config.lock.ttl, milliseconds(500));
}

TEST(ParseConfig, ReadsThePasswordFromTheNamedVariable) {
  const ScopedEnvironmentVariable password("REDLOCK_TEST_PASSWORD_A", "correct horse");
  const NodeConfig node =
      parse_ok(kOneNode + "password_env = \"REDLOCK_TEST_PASSWORD_A\"\n").nodes.at(0);
  EXPECT_EQ(node.password, "correct horse");
  EXPECT_EQ(node.password_env, "REDLOCK_TEST_PASSWORD_A");
}

// The variable is read at load time; unset and empty are both errors that
// name the variable at the password_env value.
class PasswordVariableMissing : public testing::TestWithParam<std::optional<std::string>> {};

TEST_P(PasswordVariableMissing, IsAnErrorNamingTheVariable) {
  const ScopedEnvironmentVariable password("REDLOCK_TEST_PASSWORD_A", GetParam());
  const ConfigResult result =
      parse_config(kOneNode + "password_env = \"REDLOCK_TEST_PASSWORD_A\"\n", kSource);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.line, 3U);
  EXPECT_EQ(result.error.column, 16U);
  EXPECT_EQ(result.error.message,
            "node[0].password_env: the environment variable REDLOCK_TEST_PASSWORD_A is not set "
            "or is empty; it must hold this node's password");
}

INSTANTIATE_TEST_SUITE_P(UnsetOrEmpty, PasswordVariableMissing,
                         testing::Values(std::nullopt, std::string()));

TEST(ParseConfig, ReportsAMissingPasswordVariableOnlyAfterOtherErrors) {
  const ScopedEnvironmentVariable password("REDLOCK_TEST_PASSWORD_A", std::nullopt);
  const ConfigResult result = parse_config(
      kOneNode + "password_env = \"REDLOCK_TEST_PASSWORD_A\"\n[lock]\nttl_ms = -1\n", kSource);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.line, 5U);
}

// Whatever goes wrong, a password written in a URL or held in the
// environment never appears in the message.
TEST(ParseConfig, NeverPrintsAPassword) {
  const ScopedEnvironmentVariable password("REDLOCK_TEST_PASSWORD_A", "env-secret");
  const std::vector<std::string> files = {
      R"([[node]]
         address = "redis://u:url-secret@h:1"
         password_env = "REDLOCK_TEST_PASSWORD_A")",
      R"([[node]]
         address = "redis://u:url-secret@h:1"
         [[node]]
         address = "redis://v:url-secret@h:1")",
      R"([[node]]
         address = "redis://u:url-secret@h:1/x")",
      R"([[node]]
         address = "redis://u:url-secret@h:99999")",
      R"([[node]]
         address = "redis://u:url-secret")",
      R"([[node]]
         address = "h:1"
         password_env = "env-secret")",
      R"([[node]]
         address = "h:1"
         password = "url-secret")",
      R"([[node]]
         address = "u:url-secret@h:1")",
  };
  for (const std::string& file : files) {
    const ConfigResult result = parse_config(file, kSource);
    ASSERT_FALSE(result.ok()) << file;
    const std::string message = result.error.to_string();
    EXPECT_EQ(message.find("secret"), std::string::npos) << message;
  }
}

struct ErrorCase {
  const char* name;
  std::string text;
  std::uint32_t line;
  std::uint32_t column;
  std::string message;  // exact, or a prefix when it ends in "..."
};

void PrintTo(const ErrorCase& error_case, std::ostream* out) { *out << error_case.name; }

class ParseConfigError : public testing::TestWithParam<ErrorCase> {};

TEST_P(ParseConfigError, NamesThePlaceAndWhatWasExpected) {
  const ErrorCase& expected = GetParam();
  const ConfigResult result = parse_config(expected.text, kSource);
  ASSERT_FALSE(result.ok()) << expected.text;
  EXPECT_EQ(result.error.file, kSource);
  EXPECT_EQ(result.error.line, expected.line);
  EXPECT_EQ(result.error.column, expected.column);
  const std::string& want = expected.message;
  if (want.size() > 3 && want.compare(want.size() - 3, 3, "...") == 0) {
    EXPECT_EQ(result.error.message.substr(0, want.size() - 3), want.substr(0, want.size() - 3));
  } else {
    EXPECT_EQ(result.error.message, want);
  }
}

const std::string kLock = kOneNode + "[lock]\n";  // keys under it start on line 4

INSTANTIATE_TEST_SUITE_P(
    LockTable, ParseConfigError,
    testing::Values(
        ErrorCase{"TtlIsAString", kLock + "ttl_ms = \"10s\"\n", 4, 10,
                  "lock.ttl_ms: expected a positive integer (milliseconds), got string"},
        ErrorCase{"TtlIsZero", kLock + "ttl_ms = 0\n", 4, 10,
                  "lock.ttl_ms: expected a positive integer (milliseconds), got 0"},
        ErrorCase{"TtlIsAFloat", kLock + "ttl_ms = 10000.0\n", 4, 10,
                  "lock.ttl_ms: expected a positive integer (milliseconds), got float"},
        ErrorCase{"TtlIsHuge", kLock + "ttl_ms = 3000000000\n", 4, 10,
                  "lock.ttl_ms: expected a positive integer (milliseconds) no larger than "
                  "2147483647, got 3000000000"},
        ErrorCase{"DriftFactorIsHalf", kLock + "drift_factor = 0.5\n", 4, 16,
                  "lock.drift_factor: expected a number in [0, 0.5), got 0.5"},
        ErrorCase{"DriftFactorIsNegative", kLock + "drift_factor = -0.1\n", 4, 16,
                  "lock.drift_factor: expected a number in [0, 0.5), got -0.1"},
        ErrorCase{"DriftFactorIsNan", kLock + "drift_factor = nan\n", 4, 16,
                  "lock.drift_factor: expected a number in [0, 0.5), got nan"},
        ErrorCase{"DriftFactorIsABoolean", kLock + "drift_factor = true\n", 4, 16,
                  "lock.drift_factor: expected a number in [0, 0.5), got boolean"},
        ErrorCase{"DriftMsIsNegative", kLock + "drift_ms = -1\n", 4, 12,
                  "lock.drift_ms: expected a non-negative integer (milliseconds), got -1"},
        ErrorCase{"MinValidityIsNotBelowTtl", kLock + "ttl_ms = 1000\nmin_validity_ms = 1000\n", 5,
                  19, "lock.min_validity_ms: expected less than ttl_ms (1000), got 1000"},
        ErrorCase{"NodeTimeoutIsNotBelowDefaultTtl", kLock + "node_timeout_ms = 10000\n", 4, 19,
                  "lock.node_timeout_ms: expected less than ttl_ms (10000, the default), got "
                  "10000"},
        ErrorCase{"NodeTimeoutIsZero", kLock + "node_timeout_ms = 0\n", 4, 19,
                  "lock.node_timeout_ms: expected a positive integer (milliseconds), got 0"},
        ErrorCase{"ConnectTimeoutIsZero", kLock + "connect_timeout_ms = 0\n", 4, 22,
                  "lock.connect_timeout_ms: expected a positive integer (milliseconds), got 0"},
        ErrorCase{"RetryCountIsBelowMinusOne", kLock + "retry_count = -2\n", 4, 15,
                  "lock.retry_count: expected an integer >= -1 (-1: retry until the deadline), "
                  "got -2"},
        ErrorCase{"RetryDelayIsNegative", kLock + "retry_delay_ms = -5\n", 4, 18,
                  "lock.retry_delay_ms: expected a non-negative integer (milliseconds), got -5"},
        ErrorCase{"KeyPrefixIsANumber", kLock + "key_prefix = 5\n", 4, 14,
                  "lock.key_prefix: expected a string, got integer"},
        ErrorCase{"LockKeyIsANumber", kLock + "lock_key = 5\n", 4, 12,
                  "lock.lock_key: expected a string, got integer"},
        ErrorCase{"LockKeyIsEmpty", kLock + "lock_key = \"\"\n", 4, 12,
                  "lock.lock_key: expected a pattern holding {resource}, got an empty string"},
        ErrorCase{"LockKeyWithoutTheResource", kLock + "lock_key = \"{prefix}lock:\"\n", 4, 12,
                  "lock.lock_key: expected a pattern holding {resource}, got "
                  "\"{prefix}lock:\""},
        ErrorCase{"LockKeyWithAnUnknownPlaceholder",
                  kLock + "ttl_ms = 500\nlock_key = \"{prefix}{name}\"\n", 5, 12,
                  "lock.lock_key: unknown placeholder {name}; expected {prefix} or {resource}"},
        ErrorCase{"LockKeyWithAPlaceholderMisspelt", kLock + "lock_key = \"{Resource}\"\n", 4, 12,
                  "lock.lock_key: unknown placeholder {Resource}; expected {prefix} or "
                  "{resource}"},
        ErrorCase{"LockKeyWithAnUnclosedBrace", kLock + "lock_key = \"{resource}:{\"\n", 4, 12,
                  "lock.lock_key: expected '{' only to open {prefix} or {resource}, got one "
                  "never closed at character 12"},
        ErrorCase{"LockKeyWithAStrayBrace", kLock + "lock_key = \"a}{resource}\"\n", 4, 12,
                  "lock.lock_key: expected '}' only to close {prefix} or {resource}, got one "
                  "alone at character 2"},
        ErrorCase{"LockKeyWithTheResourceTwice", kLock + "lock_key = \"{resource}{resource}\"\n", 4,
                  12, "lock.lock_key: expected {resource} once, got it twice"},
        ErrorCase{"LockKeyWithThePrefixTwice",
                  kLock + "lock_key = \"{prefix}{resource}{prefix}\"\n", 4, 12,
                  "lock.lock_key: expected {prefix} at most once, got it twice"},
        ErrorCase{"FencedIsAString", kLock + "fenced = \"yes\"\n", 4, 10,
                  "lock.fenced: expected true or false, got string"},
        ErrorCase{"ReconnectMinIsAboveMax",
                  kLock + "reconnect_min_ms = 500\nreconnect_max_ms = 100\n", 4, 20,
                  "lock.reconnect_min_ms: expected reconnect_min_ms <= reconnect_max_ms, got "
                  "reconnect_min_ms (500) > reconnect_max_ms (100)"},
        ErrorCase{"ReconnectMaxIsBelowDefaultMin", kLock + "reconnect_max_ms = 10\n", 4, 20,
                  "lock.reconnect_max_ms: expected reconnect_min_ms <= reconnect_max_ms, got "
                  "reconnect_min_ms (50, the default) > reconnect_max_ms (10)"},
        ErrorCase{"DriftLeavesNoValidity", kLock + "ttl_ms = 100\ndrift_ms = 99\n", 5, 12,
                  "lock.drift_ms: no lock could ever be acquired: ttl_ms (100) minus the drift "
                  "(ttl_ms * drift_factor + drift_ms = 100 ms) is not above min_validity_ms "
                  "(0, the default)"},
        ErrorCase{"TtlTooShortForTheDefaultDrift", kLock + "ttl_ms = 2\n", 4, 10,
                  "lock.ttl_ms: no lock could ever be acquired: ttl_ms (2) minus the drift "
                  "(ttl_ms * drift_factor + drift_ms = 3 ms) is not above min_validity_ms "
                  "(0, the default)"},
        ErrorCase{"DriftFactorLeavesNoValidity",
                  kLock + "ttl_ms = 100\ndrift_factor = 0.4\nmin_validity_ms = 60\n", 5, 16,
                  "lock.drift_factor: no lock could ever be acquired: ttl_ms (100) minus the "
                  "drift (ttl_ms * drift_factor + drift_ms = 42 ms) is not above "
                  "min_validity_ms (60)"},
        ErrorCase{"UnknownKeyCloseToAKnownOne", kLock + "ttl = 5\n", 4, 1,
                  "lock.ttl: unknown key; did you mean ttl_ms?"},
        ErrorCase{"UnknownKeyMisspelt", kLock + "retry_cont = 5\n", 4, 1,
                  "lock.retry_cont: unknown key; did you mean retry_count?"},
        ErrorCase{"UnknownKey", kLock + "colour = \"blue\"\n", 4, 1,
                  "lock.colour: unknown key; expected one of ttl_ms, drift_factor, drift_ms, "
                  "min_validity_ms, node_timeout_ms, connect_timeout_ms, retry_count, "
                  "retry_delay_ms, key_prefix, lock_key, fenced, fair, reconnect_min_ms, "
                  "reconnect_max_ms, "
                  "max_ttl_ms, amnesia_defence, strict_persistence, strict_transport, "
                  "release_at_majority"},
        ErrorCase{"UnknownSubtable", kOneNode + "[lock.metrics]\nenabled = true\n", 3, 7,
                  "lock.metrics: unknown key; expected one of ..."},
        ErrorCase{"FirstErrorInFileOrderWins", kLock + "ttl_ms = \"x\"\nfenced = 1\n", 4, 10,
                  "lock.ttl_ms: expected a positive integer (milliseconds), got string"},
        ErrorCase{"LockIsNotATable", "lock = 5\n" + kOneNode, 1, 8,
                  "lock: expected a table ([lock]), got integer"}),
    CaseName<ErrorCase>);

INSTANTIATE_TEST_SUITE_P(
    NodeTables, ParseConfigError,
    testing::Values(
        ErrorCase{"EmptyNodeArray", "node = []\n", 1, 8,
                  "node: expected at least one [[node]] table, got none"},
        ErrorCase{"NodeIsASingleTable", "[node]\naddress = \"a:1\"\n", 1, 1,
                  "node: expected an array of tables ([[node]]), got table (write [[node]], "
                  "not [node])"},
        ErrorCase{"NodeArrayHoldsAString", "node = [\"a:1\"]\n", 1, 9,
                  "node[0]: expected a table, got string"},
        ErrorCase{"MissingAddress", "[[node]]\nname = \"a\"\n", 1, 1,
                  "node[0]: missing key address: expected the node's address, e.g. address = "
                  "\"127.0.0.1:6379\" (or a Redis Cluster's seeds, cluster = "
                  "[\"127.0.0.1:7000\", ...])"},
        ErrorCase{"AddressIsANumber", "[[node]]\naddress = 7101\n", 2, 11,
                  "node[0].address: expected a non-empty string, got integer"},
        ErrorCase{"AddressIsEmpty", "[[node]]\naddress = \"\"\n", 2, 11,
                  "node[0].address: expected a non-empty string, got an empty string"},
        ErrorCase{"AddressPortIsOutOfRange", "[[node]]\naddress = \"127.0.0.1:70000\"\n", 2, 11,
                  "node[0].address: expected a port in 1..65535, got a number outside it"},
        ErrorCase{"AddressInLaterNode", kThreeNodes + "[[node]]\naddress = \"h:x\"\n", 8, 11,
                  "node[3].address: expected a port number (1..65535) after ':'"},
        ErrorCase{"UnknownKeyMisspelt", "[[node]]\nadress = \"a:1\"\n", 2, 1,
                  "node[0].adress: unknown key; did you mean address?"},
        ErrorCase{"UnknownKey", kOneNode + "weight = 2\n", 3, 1,
                  "node[0].weight: unknown key; expected one of address, cluster, name, username, "
                  "password_env, db, timeout_ms, min_replicas, replica_timeout_ms, tls, "
                  "tls_ca_file, tls_ca_dir, tls_cert_file, tls_key_file, tls_server_name, "
                  "tls_verify"},
        ErrorCase{"PasswordWrittenInTheFile", kOneNode + "password = \"x\"\n", 3, 1,
                  "node[0].password: passwords are not read from the file; put the password in "
                  "an environment variable and name that variable in password_env"},
        ErrorCase{"PasswordEnvIsNotAVariableName", kOneNode + "password_env = \"hunter2!\"\n", 3,
                  16,
                  "node[0].password_env: expected the name of an environment variable (letters, "
                  "digits and '_'), not the password itself"},
        ErrorCase{"NameIsEmpty", kOneNode + "name = \"\"\n", 3, 8,
                  "node[0].name: expected a non-empty string, got an empty string"},
        ErrorCase{"DbIsNegative", kOneNode + "db = -1\n", 3, 6,
                  "node[0].db: expected a non-negative integer (database index), got -1"},
        ErrorCase{"MinReplicasIsNegative", kOneNode + "min_replicas = -1\n", 3, 16,
                  "node[0].min_replicas: expected a non-negative integer (replica count), got -1"},
        ErrorCase{"TimeoutIsZero", kOneNode + "timeout_ms = 0\n", 3, 14,
                  "node[0].timeout_ms: expected a positive integer (milliseconds), got 0"},
        ErrorCase{"TimeoutIsNotBelowTtl", kOneNode + "timeout_ms = 500\n[lock]\nttl_ms = 500\n", 3,
                  14, "node[0].timeout_ms: expected less than lock.ttl_ms (500), got 500"},
        ErrorCase{"ReplicaTimeoutIsNotBelowTtl", kOneNode + "replica_timeout_ms = 10000\n", 3, 22,
                  "node[0].replica_timeout_ms: expected less than lock.ttl_ms (10000, the "
                  "default), got 10000"},
        ErrorCase{"SameEndpointTwice", kOneNode + "[[node]]\naddress = \"127.0.0.1:7101\"\n", 4, 11,
                  "node[1].address: same host and port as node[0]; every node must be a "
                  "different Redis master"},
        ErrorCase{"SameHostNameInAnotherCase",
                  "[[node]]\naddress = \"redis.local\"\n[[node]]\naddress = \"REDIS.local:6379\"\n",
                  4, 11, "node[1].address: same host and port as node[0]; ..."},
        ErrorCase{"SameIpv4AddressAsAnIpv4MappedIpv6Address",
                  "[[node]]\naddress = \"127.0.0.1:7101\"\n[[node]]\naddress = "
                  "\"[::ffff:127.0.0.1]:7101\"\n",
                  4, 11, "node[1].address: same host and port as node[0]; ..."},
        ErrorCase{"SameIpv4MappedAddressInHexadecimal",
                  "[[node]]\naddress = \"[::ffff:7f00:1]:7101\"\n[[node]]\naddress = "
                  "\"127.0.0.1:7101\"\n",
                  4, 11, "node[1].address: same host and port as node[0]; ..."},
        ErrorCase{"SameHostNameWithAFinalDot",
                  "[[node]]\naddress = \"redis.local\"\n[[node]]\naddress = \"redis.local.\"\n", 4,
                  11, "node[1].address: same host and port as node[0]; ..."},
        ErrorCase{"ALegacyIpv4Spelling",
                  "[[node]]\naddress = \"127.0.0.1:7101\"\n[[node]]\naddress = \"127.1:7101\"\n", 4,
                  11, "node[1].address: expected an IPv4 address as four decimal numbers ..."},
        ErrorCase{"SameIpv6AddressSpeltTwoWays",
                  "[[node]]\naddress = \"[::1]:7101\"\n[[node]]\naddress = "
                  "\"redis://[0:0::1]:7101\"\n",
                  4, 11, "node[1].address: same host and port as node[0]; ..."},
        ErrorCase{"SameNameTwice",
                  "[[node]]\naddress = \"a:1\"\nname = \"x\"\n[[node]]\naddress = \"b:1\"\nname = "
                  "\"x\"\n",
                  6, 8,
                  "node[1].name: the name \"x\" is already used by node[0]; names must be "
                  "unique"},
        ErrorCase{"DefaultNameTakenByAnExplicitOne",
                  "[[node]]\naddress = \"a:1\"\nname = \"b:2\"\n[[node]]\naddress = \"b:2\"\n", 5,
                  11,
                  "node[1].address: the default name \"b:2\" is already used by node[0]; names "
                  "must be unique"},
        ErrorCase{"UsernameInUrlAndKey",
                  "[[node]]\naddress = \"redis://alice:pw@h:1\"\nusername = \"bob\"\n", 3, 12,
                  "node[0].username: the address already names a user; give it in one place "
                  "only"},
        ErrorCase{"PasswordInUrlAndVariable",
                  "[[node]]\naddress = \"redis://:pw@h:1\"\npassword_env = \"PW\"\n", 3, 16,
                  "node[0].password_env: the address already carries a password; give it in "
                  "one place only"},
        ErrorCase{"DbInUrlAndKey", "[[node]]\naddress = \"redis://h:1/2\"\ndb = 3\n", 3, 6,
                  "node[0].db: the address already selects a database; give it in one place "
                  "only"},
        ErrorCase{"UsernameWithoutPassword", kOneNode + "username = \"alice\"\n", 3, 12,
                  "node[0].username: a username needs a password: set password_env, or put the "
                  "password in the redis:// address"},
        ErrorCase{"UrlUsernameWithoutPassword", "[[node]]\naddress = \"redis://alice@h:1\"\n", 2,
                  11, "node[0].address: a username needs a password: ..."}),
    CaseName<ErrorCase>);

INSTANTIATE_TEST_SUITE_P(
    Document, ParseConfigError,
    testing::Values(ErrorCase{"UnknownTopLevelKey", kOneNode + "[metrics]\nport = 9100\n", 3, 2,
                              "metrics: unknown key; expected only [[node]], [lock] and [tls]"},
                    ErrorCase{"UnclosedTableHeader", "[[node]\naddress = \"a:1\"\n", 1, 8,
                              "invalid TOML: ..."},
                    ErrorCase{"KeyWrittenTwice", kLock + "ttl_ms = 5\nttl_ms = 6\n", 5, 10,
                              "invalid TOML: ..."},
                    ErrorCase{"ValueMissing", kLock + "ttl_ms =\n", 4, 9, "invalid TOML: ..."}),
    CaseName<ErrorCase>);

const std::string kCluster = "[[node]]\ncluster = [\"127.0.0.1:7000\", \"127.0.0.1:7001\"]\n";

INSTANTIATE_TEST_SUITE_P(
    ClusterMember, ParseConfigError,
    testing::Values(
        ErrorCase{"AddressAndCluster", kOneNode + "cluster = [\"127.0.0.1:7000\"]\n", 3, 11,
                  "node[0].cluster: give either address (one server) or cluster (a Redis "
                  "Cluster's seeds), not both"},
        ErrorCase{"ClusterIsAString", "[[node]]\ncluster = \"127.0.0.1:7000\"\n", 2, 11,
                  "node[0].cluster: expected an array of seed addresses, e.g. cluster = "
                  "[\"127.0.0.1:7000\", \"127.0.0.1:7001\"], got string"},
        ErrorCase{"ClusterIsEmpty", "[[node]]\ncluster = []\n", 2, 11,
                  "node[0].cluster: expected at least one seed address of the cluster, got an "
                  "empty array"},
        ErrorCase{"SeedIsANumber", "[[node]]\ncluster = [\"a:1\", 7001]\n", 2, 19,
                  "node[0].cluster[1]: expected a non-empty string, got integer"},
        ErrorCase{"SeedPortIsOutOfRange", "[[node]]\ncluster = [\"a:1\", \"a:70000\"]\n", 2, 19,
                  "node[0].cluster[1]: expected a port in 1..65535, got a number outside it"},
        ErrorCase{"SeedIsAUrl", "[[node]]\ncluster = [\"redis://:secret@a:1\"]\n", 2, 12,
                  "node[0].cluster[0]: expected a seed as host[:port], [ipv6][:port] or "
                  "unix:///path, got a redis:// URL ..."},
        ErrorCase{"DatabaseOtherThanZero", kCluster + "db = 1\n", 3, 6,
                  "node[0].db: a Redis Cluster has database 0 only; remove db or set it to 0"},
        ErrorCase{"SeedTwice", "[[node]]\ncluster = [\"a:1\", \"A:1\"]\n", 2, 11,
                  "node[0].cluster: the same seed is listed twice"},
        ErrorCase{"SeedIsAnotherMembersAddress",
                  "[[node]]\naddress = \"b:2\"\n[[node]]\ncluster = [\"a:1\", \"b:2\"]\n", 4, 11,
                  "node[1].cluster: names a server that node[0] names too; every member must "
                  "be a different Redis master or cluster"},
        ErrorCase{"AddressIsAClustersSeed",
                  "[[node]]\ncluster = [\"a:1\", \"b:2\"]\n[[node]]\naddress = \"b:2\"\n", 4, 11,
                  "node[1].address: names a server that node[0] names too; ..."},
        ErrorCase{"BraceInThePrefix", kCluster + "[lock]\nkey_prefix = \"{app}:\"\n", 4, 14,
                  "lock.key_prefix: expected no '{' or '}' with a cluster member: ..."},
        ErrorCase{"LockKeyWithoutThePrefix", kCluster + "[lock]\nlock_key = \"{resource}\"\n", 4,
                  12,
                  "lock.lock_key: expected {prefix} in it with a cluster member: a lock key "
                  "must carry the hash tag the library puts after key_prefix, so that it shares "
                  "its resource's slot with the node rules' keys, got \"{resource}\""},
        ErrorCase{"TooManySeeds",
                  [] {
                    std::string text = "[[node]]\ncluster = [";
                    for (int i = 0; i < 65; ++i) text += "\"a:" + std::to_string(i + 1) + "\",";
                    return text + "]\n";
                  }(),
                  // The 65th seed: after "cluster = [" (11), 9 seeds of 6 and 55 of 7.
                  2, 451, "node[0].cluster: too many seeds: a cluster member lists at most 64"}),
    CaseName<ErrorCase>);

TEST(ParseConfig, ReadsAClusterMember) {
  const ScopedEnvironmentVariable password("REDLOCK_TEST_CLUSTER_PW", "pw");
  const QuorumConfig config =
      parse_ok(kCluster +
               "username = \"app\"\npassword_env = \"REDLOCK_TEST_CLUSTER_PW\"\n"
               "tls = true\ndb = 0\n[[node]]\ncluster = [\"unix:///run/r.sock\"]\n"
               "[[node]]\naddress = \"127.0.0.1:7101\"\n");
  ASSERT_EQ(config.nodes.size(), 3U);
  const NodeConfig& member = config.nodes[0];
  ASSERT_EQ(member.cluster.size(), 2U);
  EXPECT_EQ(member.cluster[0].host, "127.0.0.1");
  EXPECT_EQ(member.cluster[0].port, 7000);
  EXPECT_EQ(member.cluster[1].port, 7001);
  EXPECT_EQ(member.name, "redis+cluster://127.0.0.1:7000");
  EXPECT_EQ(member.host, "127.0.0.1") << "the first seed's";
  EXPECT_EQ(member.username, "app");
  EXPECT_EQ(member.password, "pw") << "the member's password, for each of its servers";
  EXPECT_TRUE(member.tls.enabled);
  EXPECT_EQ(member.db, 0);
  // A Unix socket seed.
  ASSERT_EQ(config.nodes[1].cluster.size(), 1U);
  EXPECT_EQ(config.nodes[1].cluster[0].unix_path, "/run/r.sock");
  EXPECT_TRUE(config.nodes[2].cluster.empty());
}

TEST(ParseConfig, RequiresAtLeastOneNode) {
  const ConfigResult result = parse_config("[lock]\nttl_ms = 100\n", kSource);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.line, 0U);
  EXPECT_EQ(result.error.message.rfind("no [[node]] table: expected at least one Redis master", 0),
            0U)
      << result.error.message;
}

TEST(ParseConfig, RejectsAnEmptyDocument) { EXPECT_FALSE(parse_config("", kSource).ok()); }

struct NodeTimeoutCase {
  Milliseconds ttl;
  Milliseconds lock_node_timeout;
  std::optional<Milliseconds> node_timeout;
  Milliseconds expected;
};

TEST(EffectiveNodeTimeout, PrefersNodeThenLockThenAutomatic) {
  const std::vector<NodeTimeoutCase> cases = {
      {milliseconds(10000), milliseconds(0), std::nullopt, milliseconds(50)},
      {milliseconds(5000), milliseconds(0), std::nullopt, milliseconds(50)},
      {milliseconds(3000), milliseconds(0), std::nullopt, milliseconds(30)},
      {milliseconds(1000), milliseconds(0), std::nullopt, milliseconds(10)},
      {milliseconds(300), milliseconds(0), std::nullopt, milliseconds(3)},
      {milliseconds(150), milliseconds(0), std::nullopt, milliseconds(2)},
      {milliseconds(10), milliseconds(0), std::nullopt, milliseconds(2)},
      {milliseconds(10000), milliseconds(25), std::nullopt, milliseconds(25)},
      {milliseconds(10000), milliseconds(25), milliseconds(7), milliseconds(7)},
      {milliseconds(10000), milliseconds(0), milliseconds(700), milliseconds(700)},
  };
  for (const NodeTimeoutCase& c : cases) {
    LockConfig lock;
    lock.ttl = c.ttl;
    lock.node_timeout = c.lock_node_timeout;
    NodeConfig node;
    node.timeout = c.node_timeout;
    EXPECT_EQ(effective_node_timeout(lock, node), c.expected)
        << "ttl " << c.ttl.count() << ", lock " << c.lock_node_timeout.count();
  }
}

TEST(ConfigErrorToString, FormatsWhatIsKnown) {
  const std::vector<std::pair<ConfigError, std::string>> cases = {
      {{"redlock.toml", 7, 10, "lock.ttl_ms: bad"}, "redlock.toml:7:10: lock.ttl_ms: bad"},
      {{"redlock.toml", 7, 0, "bad"}, "redlock.toml:7: bad"},
      {{"redlock.toml", 0, 0, "cannot open: x"}, "redlock.toml: cannot open: x"},
      {{"", 0, 0, "no configuration file"}, "no configuration file"},
  };
  for (const auto& [error, expected] : cases) EXPECT_EQ(error.to_string(), expected);
}

TEST(LoadConfig, ReadsAFileAndNamesItAsTheSource) {
  const ScopedTemporaryDirectory directory;
  const auto file = directory.write("quorum.toml", kThreeNodes);
  const ConfigResult result = load_config(file);
  ASSERT_TRUE(result.ok()) << result.error.to_string();
  EXPECT_EQ(result.config->nodes.size(), 3U);
  EXPECT_EQ(result.config->source, file.string());
}

TEST(LoadConfig, PutsThePathInPositionedErrors) {
  const ScopedTemporaryDirectory directory;
  const auto file = directory.write("quorum.toml", kLock + "ttl_ms = \"10s\"\n");
  const ConfigResult result = load_config(file);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(
      result.error.to_string(),
      file.string() + ":4:10: lock.ttl_ms: expected a positive integer (milliseconds), got string");
}

TEST(LoadConfig, PutsThePathInTomlSyntaxErrors) {
  const ScopedTemporaryDirectory directory;
  const auto file = directory.write("quorum.toml", "[[node]\n");
  const ConfigResult result = load_config(file);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.file, file.string());
  EXPECT_EQ(result.error.line, 1U);
}

TEST(LoadConfig, SaysWhyAFileCannotBeOpened) {
  const ScopedTemporaryDirectory directory;
  const auto missing = directory.path() / "absent.toml";
  const ConfigResult result = load_config(missing);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.to_string(),
            missing.string() + ": cannot open: No such file or directory");
}

TEST(LoadConfig, SaysWhyADirectoryCannotBeRead) {
  const ScopedTemporaryDirectory directory;
  const ConfigResult result = load_config(directory.path());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.line, 0U);
  EXPECT_NE(result.error.message.find("Is a directory"), std::string::npos) << result.error.message;
}

TEST(ConfigFromAddresses, BuildsOneNodePerAddressWithDefaultTiming) {
  const ConfigResult result =
      config_from_addresses({"127.0.0.1:7101", "redis://:pw@[::1]:7102/1", "redis-c"});
  ASSERT_TRUE(result.ok()) << result.error.to_string();
  const QuorumConfig& config = *result.config;
  EXPECT_EQ(config.source, "--node");
  ASSERT_EQ(config.nodes.size(), 3U);
  EXPECT_EQ(config.nodes[0].name, "127.0.0.1:7101");
  EXPECT_EQ(config.nodes[1].name, "[::1]:7102");
  EXPECT_EQ(config.nodes[1].password, "pw");
  EXPECT_EQ(config.nodes[1].db, 1);
  EXPECT_EQ(config.nodes[2].name, "redis-c:6379");
  EXPECT_EQ(config.lock.ttl, LockConfig{}.ttl);
  EXPECT_EQ(config.lock.key_prefix, LockConfig{}.key_prefix);
}

TEST(ConfigFromAddresses, ErrorsNameTheBadAddressButNotItsPassword) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "--node: expected at least one node address"},
      {{"a:1", "a:99999"},
       "--node: address #2: expected a port in 1..65535, got a number outside it"},
      {{"redis://u:secret@a:x"}, "--node: address #1: expected a port number (1..65535) after ':'"},
      {{"redis://alice@a"},
       "--node: address #1: a username needs a password: redis://user:password@host"},
      {{"a:1", "A:1"},
       "--node: address #2: same host and port as address #1; every node must be a different "
       "Redis master"},
      {{"127.0.0.1:1", "b:2", "[::ffff:127.0.0.1]:1"},
       "--node: address #3: same host and port as address #1; every node must be a different "
       "Redis master"},
  };
  for (const auto& [addresses, expected] : cases) {
    const ConfigResult result = config_from_addresses(addresses);
    ASSERT_FALSE(result.ok()) << expected;
    EXPECT_EQ(result.error.file, "--node");
    EXPECT_EQ(result.error.to_string(), expected);
  }
}

TEST(ConfigFromAddresses, ReadsAClusterMembersSeeds) {
  const ConfigResult result = config_from_addresses(
      {"redis+cluster://127.0.0.1:7000,[::1]:7001,h", "127.0.0.1:7101", "REDIS+CLUSTER://x:1"});
  ASSERT_TRUE(result.ok()) << result.error.to_string();
  const QuorumConfig& config = *result.config;
  ASSERT_EQ(config.nodes.size(), 3U);
  ASSERT_EQ(config.nodes[0].cluster.size(), 3U);
  EXPECT_EQ(config.nodes[0].cluster[1].host, "::1");
  EXPECT_EQ(config.nodes[0].cluster[1].port, 7001);
  EXPECT_EQ(config.nodes[0].cluster[2].port, 6379);
  EXPECT_EQ(config.nodes[0].name, "redis+cluster://127.0.0.1:7000");
  EXPECT_TRUE(config.nodes[1].cluster.empty());
  EXPECT_EQ(config.nodes[2].cluster.size(), 1U);
}

TEST(ConfigFromAddresses, AClusterAddressCarriesSeedsOnly) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"redis+cluster://u:secret@a:1"},
       "--node: address #1: a redis+cluster:// address lists host:port seeds only (no user, "
       "password or database); give credentials in a quorum file's [[node]] table"},
      {{"redis+cluster://a:1/2"},
       "--node: address #1: a redis+cluster:// address lists host:port seeds only (no user, "
       "password or database); give credentials in a quorum file's [[node]] table"},
      {{"redis+cluster://"}, "--node: address #1: seed #1: expected ..."},
      {{"redis+cluster://a:1,,b:2"}, "--node: address #1: seed #2: expected ..."},
      {{"redis+cluster://a:1,a:1"}, "--node: address #1: the same seed is listed twice"},
      {{"a:1", "redis+cluster://b:2,a:1"},
       "--node: address #2: same host and port as address #1; every node must be a different "
       "Redis master"},
  };
  for (const auto& [addresses, expected] : cases) {
    const ConfigResult result = config_from_addresses(addresses);
    ASSERT_FALSE(result.ok()) << expected;
    const std::string message = result.error.to_string();
    if (expected.ends_with("...")) {
      EXPECT_EQ(message.substr(0, expected.size() - 3), expected.substr(0, expected.size() - 3));
    } else {
      EXPECT_EQ(message, expected);
    }
    EXPECT_EQ(message.find("secret"), std::string::npos);
  }
}

// What a [[node]] without a password says when --node takes the userinfo
// for a host: nothing of it, in any form.
TEST(ConfigFromAddresses, NeverQuotesAnyPartOfAnAddress) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"redis://alice:s3cretPW", "s3cretPW"},
      {"redis://alice:s3cretPW", "alice"},
      {"redis://alice:1234/s3cretPW", "s3cretPW"},
      {"redis://alice:123456", "123456"},
      {"redis://alice:pw@h:x", "pw@"},
      {"alice:123456", "123456"},
  };
  for (const auto& [address, secret] : cases) {
    const ConfigResult result = config_from_addresses({"127.0.0.1:7101", address});
    ASSERT_FALSE(result.ok()) << address;
    const std::string message = result.error.to_string();
    EXPECT_EQ(message.find(secret), std::string::npos) << address << ": " << message;
    EXPECT_NE(message.find("address #2"), std::string::npos) << message;
  }
}

std::string repeated(const std::string& piece, std::size_t count, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += (i == 0 ? "" : separator) + piece;
  return out;
}

struct PositionedCase {
  std::string text;
  std::uint32_t line;
  std::uint32_t column;
  std::string message;
};

// "[a.a.a....]" with 40 000 segments overflowed toml++'s stack; the pre-scan
// stops at the first level past the bound and points at it.
TEST(ParseConfig, BoundsNestingBeforeTomlParsesIt) {
  const std::string deep =
      "invalid TOML: nested deeper than 32 levels (table headers, dotted keys, arrays and inline "
      "tables count one each)";
  const std::vector<PositionedCase> cases = {
      {"[" + repeated("a", 40000, ".") + "]\n", 1, 66, deep},
      {"[[" + repeated("a", 33, ".") + "]]\n", 1, 67, deep},
      {kOneNode + "[lock]\n" + repeated("a", 40000, ".") + " = 1\n", 4, 63, deep},
      {kOneNode + "[lock]\n" + repeated("\"a\"", 40, ".") + " = 1\n", 4, 125, deep},
      {"a = " + std::string(40000, '[') + std::string(40000, ']') + "\n", 1, 36, deep},
      {"a = " + repeated("{b = ", 40000, "") + "\n", 1, 161, deep},
      {"[x.y]\nz = [[[" + repeated("{k.l = ", 20, "") + "\n", 2, 100, deep},
  };
  for (const PositionedCase& c : cases) {
    const ConfigResult result = parse_config(c.text, kSource);
    ASSERT_FALSE(result.ok()) << c.text.substr(0, 80);
    EXPECT_EQ(result.error.message, c.message) << c.text.substr(0, 80);
    EXPECT_EQ(result.error.line, c.line) << c.text.substr(0, 80);
    EXPECT_EQ(result.error.column, c.column) << c.text.substr(0, 80);
  }
  // At the bound itself toml++ reads the file (and the schema refuses it).
  const ConfigResult at_bound = parse_config("[" + repeated("a", 32, ".") + "]\n", kSource);
  ASSERT_FALSE(at_bound.ok());
  EXPECT_EQ(at_bound.error.message, "a: unknown key; expected only [[node]], [lock] and [tls]");
}

// toml++ 3.3.0 looks such characters up in tables that end in undefined
// behaviour; the pre-scan refuses them first, where they are.
TEST(ParseConfig, RefusesNonAsciiOutsideStringsAndComments) {
  const std::string bare_key =
      "invalid TOML: a bare key may hold only ASCII letters, digits, '_' and '-': quote a key "
      "with other characters (\"...\")";
  const std::string elsewhere =
      "invalid TOML: a character outside ASCII may appear only in a string or a comment";
  const std::vector<PositionedCase> cases = {
      {"a\xc3\xa9 = 1\n", 1, 2, bare_key},
      {"\xc3\xa9 = 1\n", 1, 1, bare_key},
      {kOneNode + "[lock]\nttl.\xc3\xa9t\xc3\xa9 = 1\n", 4, 5, bare_key},
      {"[n\u00f6de]\n", 1, 3, bare_key},
      {"a = { b\xff = 1 }\n", 1, 8, bare_key},
      {"a = \xc3\xa9\n", 1, 5, elsewhere},
      {"a = [1, \xe2\x82\xac]\n", 1, 9, elsewhere},
  };
  for (const PositionedCase& c : cases) {
    const ConfigResult result = parse_config(c.text, kSource);
    ASSERT_FALSE(result.ok()) << c.text;
    EXPECT_EQ(result.error.message, c.message) << c.text;
    EXPECT_EQ(result.error.line, c.line) << c.text;
    EXPECT_EQ(result.error.column, c.column) << c.text;
  }
}

TEST(ParseConfig, KeepsNonAsciiInStringsCommentsAndQuotedKeys) {
  const QuorumConfig config = parse_ok(
      "# caf\xc3\xa9\n[[node]] # n\xc5\x93ud\naddress = \"127.0.0.1:7101\"\nname = "
      "\"n\xc5\x93ud \xe2\x82\xac\"\n[lock]\nkey_prefix = '''\xc3\xa9\n[x.y]'''\n");
  ASSERT_EQ(config.nodes.size(), 1U);
  EXPECT_EQ(config.nodes[0].name, "n\xc5\x93ud \xe2\x82\xac");
  EXPECT_EQ(config.lock.key_prefix, "\xc3\xa9\n[x.y]");
  const ConfigResult quoted = parse_config(kOneNode + "[lock]\n\"t\xc3\xa9\" = 1\n", kSource);
  ASSERT_FALSE(quoted.ok());
  EXPECT_EQ(quoted.error.message.substr(0, 21), "lock.t\xc3\xa9: unknown key");
}

TEST(ParseConfig, RefusesTextLargerThanTheLimit) {
  std::string text = kOneNode;
  text.append(kMaxConfigFileBytes + 1 - text.size(), '\n');
  const ConfigResult result = parse_config(text, kSource);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.to_string(),
            std::string(kSource) + ": larger than 1048576 bytes, the most a quorum file may hold");
  text.pop_back();
  EXPECT_TRUE(parse_config(text, kSource).ok());
}

TEST(LoadConfig, RefusesAFileLargerThanTheLimit) {
  const ScopedTemporaryDirectory directory;
  std::string text = kOneNode;
  text.append(kMaxConfigFileBytes + 1 - text.size(), '#');
  const auto file = directory.write("big.toml", text);
  const ConfigResult result = load_config(file);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.to_string(),
            file.string() + ": larger than 1048576 bytes, the most a quorum file may hold");
}

// /dev/zero never ends: it is refused before anything is read from it.
TEST(LoadConfig, RefusesADeviceWithoutReadingIt) {
  const ConfigResult result = load_config("/dev/zero");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.to_string(),
            "/dev/zero: cannot read: not a regular file (a quorum file is never a device, pipe "
            "or socket)");
}

// Opening a FIFO waits for a writer unless it is opened without blocking.
// The writer below opens it once the reader has returned, or after two
// seconds at the latest, so that a reader that waits for it still ends and
// the test fails instead of hanging.
TEST(LoadConfig, RefusesAFifoWithoutWaitingForAWriter) {
  const ScopedTemporaryDirectory directory;
  const auto fifo = directory.path() / "quorum.toml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::promise<void> reader_returned;
  std::thread late_writer([&, returned = reader_returned.get_future()] {
    (void)returned.wait_for(std::chrono::seconds(2));
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  });
  const auto started = std::chrono::steady_clock::now();
  const ConfigResult result = load_config(fifo);
  const auto took = std::chrono::steady_clock::now() - started;
  reader_returned.set_value();
  late_writer.join();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.to_string(),
            fifo.string() +
                ": cannot read: not a regular file (a quorum file is never a device, pipe or "
                "socket)");
  EXPECT_LT(took, std::chrono::seconds(1));
}

// Key names, node names and paths come from the file and its name: escaped,
// so that a message stays one line and sends no terminal escapes.
TEST(ParseConfig, EscapesWhatTheFileSaysInErrors) {
  const ConfigResult key =
      parse_config(kOneNode + "[lock]\n\"ttl\\u001b]0;x\\u0007\\nredlock: ok\" = 1\n", kSource);
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.error.message.substr(0, 48), "lock.ttl\\x1b]0;x\\x07\\nredlock: ok: unknown key; ");
  const ConfigResult name = parse_config(
      "[[node]]\naddress = \"a:1\"\nname = \"x\\u001b[2J\"\n[[node]]\naddress = \"b:1\"\nname = "
      "\"x\\u001b[2J\"\n",
      kSource);
  ASSERT_FALSE(name.ok());
  EXPECT_EQ(name.error.message,
            "node[1].name: the name \"x\\x1b[2J\" is already used by node[0]; names must be "
            "unique");
  const ConfigResult path = parse_config("[lock]\nttl_ms = 0\n", "dir\n/q\x1b.toml");
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.error.to_string().substr(0, 21), "dir\\n/q\\x1b.toml:2:10");
}

TEST(ParseConfig, RefusesMoreNodesThanTheLimit) {
  std::string text;
  for (std::size_t i = 0; i <= kMaxNodes; ++i) {
    text += "[[node]]\naddress = \"10.0." + std::to_string(i / 250) + "." +
            std::to_string(i % 250 + 1) + ":6379\"\n";
  }
  const ConfigResult result = parse_config(text, kSource);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.line, 2 * kMaxNodes + 1);
  EXPECT_EQ(result.error.column, 1U);
  EXPECT_EQ(result.error.message,
            "node[255]: too many [[node]] tables: a quorum has at most 255 nodes");
  text.resize(text.rfind("[[node]]"));
  EXPECT_EQ(parse_ok(text).nodes.size(), kMaxNodes);
}

TEST(ConfigFromAddresses, RefusesMoreNodesThanTheLimit) {
  std::vector<std::string> addresses;
  for (std::size_t i = 0; i <= kMaxNodes; ++i) addresses.push_back("h" + std::to_string(i));
  const ConfigResult result = config_from_addresses(addresses);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.to_string(),
            "--node: address #256: too many nodes: a quorum has at most 255");
  addresses.pop_back();
  EXPECT_TRUE(config_from_addresses(addresses).ok());
}

// 20 000 nodes took 23 s when every pair was compared; one identity per
// node and a hash look-up is linear.
TEST(FindRepeated, IsLinearInTheNodeCount) {
  std::vector<NodeConfig> nodes(20000);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].host = "10." + std::to_string(i / 65536) + "." + std::to_string(i / 256 % 256) + "." +
                    std::to_string(i % 256);
  }
  nodes.back().host = "::ffff:10.0.0.7";  // node[7], spelt as IPv4-mapped IPv6
  const auto started = std::chrono::steady_clock::now();
  const auto repeated_entry = detail::find_repeated(nodes, detail::endpoint_identity);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  ASSERT_TRUE(repeated_entry.has_value());
  EXPECT_EQ(repeated_entry->earlier, 7U);
  EXPECT_EQ(repeated_entry->later, nodes.size() - 1);
}

// The file's ttl_ms and the CLI's --ttl are held to this one rule.
TEST(TtlCanBeValid, IsTheRuleOfTheFilesTtl) {
  LockConfig lock;  // drift = ceil(ttl * 0.01) + 2 ms
  EXPECT_FALSE(ttl_can_be_valid(lock, milliseconds(1)));
  EXPECT_FALSE(ttl_can_be_valid(lock, milliseconds(3)));
  EXPECT_TRUE(ttl_can_be_valid(lock, milliseconds(4)));
  EXPECT_EQ(lock_drift(lock, milliseconds(1000)), milliseconds(12));
  lock.min_validity = milliseconds(5);
  EXPECT_FALSE(ttl_can_be_valid(lock, milliseconds(8)));
  EXPECT_TRUE(ttl_can_be_valid(lock, milliseconds(9)));
  for (const int ttl : {1, 3, 4}) {
    const ConfigResult result =
        parse_config(kOneNode + "[lock]\nttl_ms = " + std::to_string(ttl) + "\n", kSource);
    EXPECT_EQ(result.ok(), ttl_can_be_valid(LockConfig{}, milliseconds(ttl))) << ttl;
  }
}

}  // namespace
}  // namespace redlock

// NOLINTEND(concurrency-mt-unsafe)
