// acquire, extend and release end to end: a real redlock process against
// five real redis-server nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "cli_test_support.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

class LockCommandsTest : public CliClusterTest {
 protected:
  // Three of five nodes frozen (SIGSTOP: the kernel still completes the
  // TCP handshake and buffers what is written), a failed `acquire` with
  // `file`, the nodes resumed: nothing of the attempt may be held.
  // `warm_up_file` (default `file`) marks the nodes and checks afterwards.
  void expect_nothing_left_by_a_failed_acquire_against_frozen_nodes(
      const std::filesystem::path& file,
      std::optional<std::filesystem::path> warm_up_file = std::nullopt);
};

bool is_lock_value(const std::string& value) {
  return value.size() == 32 && value.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST_F(LockCommandsTest, AcquirePrintsTheLockAndLeavesItHeld) {
  const auto file = config(milliseconds(5000));
  const CliResult result = run_cli(command("acquire", file, {"--resource", "report"}));
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  const JsonValue json = parse_output(result);
  EXPECT_EQ(json["resource"].text, "report");
  const std::string value = json["value"].text;
  EXPECT_TRUE(is_lock_value(value)) << value;
  ASSERT_TRUE(json["validity_ms"].integer().has_value());
  EXPECT_GT(*json["validity_ms"].integer(), 0);
  EXPECT_LE(*json["validity_ms"].integer(), 5000);
  EXPECT_TRUE(json["fence"].is_null());
  EXPECT_TRUE(json["error"].is_null());
  EXPECT_GE(json["attempts"].integer().value_or(0), 1);
  const JsonValue& nodes = json["nodes"];
  ASSERT_EQ(nodes.items.size(), 5U);
  std::size_t granted = 0;
  for (std::size_t i = 0; i < nodes.items.size(); ++i) {
    const JsonValue& node = nodes.items[i];
    EXPECT_EQ(node["node"].text, cluster_.node(i).address());
    EXPECT_TRUE(node["latency_us"].integer().has_value());
    if (node["status"].text == "granted") ++granted;
  }
  EXPECT_GE(granted, 3U);
  // Held after the process ended, with a TTL running.
  EXPECT_GE(nodes_holding(cluster_, "report", value), 3U);
  const long long pttl = cluster_.node(0).probe().pttl(lock_key("report"));
  EXPECT_TRUE(pttl > 0 || pttl == -2) << pttl;  // node 0 may have been a late grant
  EXPECT_TRUE(result.err.empty()) << result.err;
}

TEST_F(LockCommandsTest, AcquireFencedPrintsIncreasingTokens) {
  const auto file = config();
  const CliResult first =
      run_cli(command("acquire", file, {"--resource", "ledger", "--fenced", "--ttl", "2000"}));
  ASSERT_EQ(first.exit_code, 0) << describe(first);
  const JsonValue one = parse_output(first);
  ASSERT_TRUE(one["fence"].integer().has_value()) << first.out;
  EXPECT_GE(*one["fence"].integer(), 1);
  const CliResult release =
      run_cli(command("release", file, {"--resource", "ledger", "--value", one["value"].text}));
  ASSERT_EQ(release.exit_code, 0) << describe(release);

  const CliResult second = run_cli(command("acquire", file, {"--resource", "ledger", "--fenced"}));
  ASSERT_EQ(second.exit_code, 0) << describe(second);
  const JsonValue two = parse_output(second);
  EXPECT_GT(two["fence"].integer().value_or(0), *one["fence"].integer());
}

TEST_F(LockCommandsTest, AcquireOnAHeldLockExits75AndLeavesNoKeyOfOurs) {
  const auto file = config();
  // A first acquire initialises the quorum (the nodes' identity markers):
  // lock keys on nodes without markers would look like data loss.
  ASSERT_EQ(run_cli(command("acquire", file, {"--resource", "warm-up"})).exit_code, 0);
  // Another holder on a majority (nodes 0..2); nodes 3 and 4 are free.
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        cluster_.node(i).probe().set(lock_key("busy"), "someone-else", milliseconds(30000)));
  }
  const CliResult result = run_cli(command("acquire", file, {"--resource", "busy", "--wait", "0"}));
  EXPECT_EQ(result.exit_code, 75) << describe(result);
  const JsonValue json = parse_output(result);
  EXPECT_TRUE(json["value"].is_null());
  EXPECT_EQ(json["error"].text, "not_acquired");
  EXPECT_NE(result.err.find("not_acquired"), std::string::npos) << result.err;
  // Whatever nodes 3 and 4 granted was undone; the other holder is intact.
  EXPECT_TRUE(eventually(
      [&] {
        return !cluster_.node(3).probe().exists(lock_key("busy")) &&
               !cluster_.node(4).probe().exists(lock_key("busy"));
      },
      milliseconds(3000)));
  EXPECT_EQ(nodes_holding(cluster_, "busy", "someone-else"), 3U);
}

TEST_F(LockCommandsTest, AcquireWithoutQuorumExits75NamesTheNodesAndLeavesNoKey) {
  const auto file = config();
  for (std::size_t i = 0; i < 3; ++i) cluster_.node(i).stop();
  const CliResult result =
      run_cli(command("acquire", file, {"--resource", "orphan", "--wait", "0"}));
  EXPECT_EQ(result.exit_code, 75) << describe(result);
  EXPECT_EQ(parse_output(result)["error"].text, "no_quorum");
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_NE(result.err.find("node " + cluster_.node(i).address() + ": unreachable"),
              std::string::npos)
        << result.err;
  }
  EXPECT_TRUE(
      eventually([&] { return nodes_holding(cluster_, "orphan") == 0; }, milliseconds(3000)));
}

TEST_F(LockCommandsTest, AcquireWaitsForAnExpiringHolder) {
  const auto file = config();
  const CliResult holder =
      run_cli(command("acquire", file, {"--resource", "handoff", "--ttl", "600"}));
  ASSERT_EQ(holder.exit_code, 0) << describe(holder);
  const CliResult waiter =
      run_cli(command("acquire", file, {"--resource", "handoff", "--wait", "10000"}));
  EXPECT_EQ(waiter.exit_code, 0) << describe(waiter);
  EXPECT_NE(parse_output(waiter)["value"].text, parse_output(holder)["value"].text);
}

TEST_F(LockCommandsTest, ExtendRenewsOurLock) {
  const auto file = config(milliseconds(30000));
  const CliResult acquired =
      run_cli(command("acquire", file, {"--resource", "renew", "--ttl", "1000"}));
  ASSERT_EQ(acquired.exit_code, 0) << describe(acquired);
  const std::string value = parse_output(acquired)["value"].text;

  const CliResult extended =
      run_cli(command("extend", file, {"--resource", "renew", "--value", value, "--ttl", "20000"}));
  ASSERT_EQ(extended.exit_code, 0) << describe(extended);
  const JsonValue json = parse_output(extended);
  EXPECT_EQ(json["resource"].text, "renew");
  EXPECT_EQ(json["value"].text, value);
  EXPECT_GT(json["validity_ms"].integer().value_or(0), 1000);
  EXPECT_TRUE(json["fence"].is_null());
  EXPECT_TRUE(json["error"].is_null());
  EXPECT_EQ(json["nodes"].items.size(), 5U);
  // The nodes that answered now carry the new TTL.
  std::size_t renewed = 0;
  for (std::size_t i = 0; i < cluster_.size(); ++i) {
    if (cluster_.node(i).probe().pttl(lock_key("renew")) > 1000) ++renewed;
  }
  EXPECT_GE(renewed, 3U);
}

TEST_F(LockCommandsTest, ExtendWithAnotherValueExits75AndChangesNothing) {
  const auto file = config(milliseconds(30000));
  const CliResult acquired = run_cli(command("acquire", file, {"--resource", "theirs"}));
  ASSERT_EQ(acquired.exit_code, 0) << describe(acquired);
  const std::string value = parse_output(acquired)["value"].text;
  const CliResult extended =
      run_cli(command("extend", file, {"--resource", "theirs", "--value", "not-the-value"}));
  EXPECT_EQ(extended.exit_code, 75) << describe(extended);
  EXPECT_EQ(parse_output(extended)["error"].text, "lost");
  EXPECT_GE(nodes_holding(cluster_, "theirs", value), 3U);
}

TEST_F(LockCommandsTest, ExtendNeverResurrectsAnExpiredLock) {
  const auto file = config();
  const CliResult acquired =
      run_cli(command("acquire", file, {"--resource", "gone", "--ttl", "300"}));
  ASSERT_EQ(acquired.exit_code, 0) << describe(acquired);
  const std::string value = parse_output(acquired)["value"].text;
  ASSERT_TRUE(eventually([&] { return nodes_holding(cluster_, "gone") == 0; }));
  const CliResult extended =
      run_cli(command("extend", file, {"--resource", "gone", "--value", value}));
  EXPECT_EQ(extended.exit_code, 75) << describe(extended);
  EXPECT_EQ(nodes_holding(cluster_, "gone"), 0U);
}

TEST_F(LockCommandsTest, ReleaseDeletesOurValueAndIsIdempotent) {
  const auto file = config();
  const CliResult acquired = run_cli(command("acquire", file, {"--resource", "done"}));
  ASSERT_EQ(acquired.exit_code, 0) << describe(acquired);
  const std::string value = parse_output(acquired)["value"].text;

  const CliResult released =
      run_cli(command("release", file, {"--resource", "done", "--value", value}));
  ASSERT_EQ(released.exit_code, 0) << describe(released);
  const JsonValue json = parse_output(released);
  EXPECT_EQ(json["resource"].text, "done");
  EXPECT_EQ(json["value"].text, value);
  EXPECT_GE(json["released"].integer().value_or(0), 3);
  EXPECT_TRUE(json["error"].is_null());
  EXPECT_EQ(json["nodes"].items.size(), 5U);
  EXPECT_EQ(nodes_holding(cluster_, "done"), 0U);

  const CliResult again =
      run_cli(command("release", file, {"--resource", "done", "--value", value}));
  EXPECT_EQ(again.exit_code, 0) << describe(again);
  EXPECT_EQ(parse_output(again)["released"].integer(), 0);
}

TEST_F(LockCommandsTest, ReleaseNeverDeletesAnotherHoldersValue) {
  const auto file = config();
  const CliResult acquired = run_cli(command("acquire", file, {"--resource", "keep"}));
  ASSERT_EQ(acquired.exit_code, 0) << describe(acquired);
  const std::string value = parse_output(acquired)["value"].text;
  const CliResult released =
      run_cli(command("release", file, {"--resource", "keep", "--value", "guess"}));
  EXPECT_EQ(released.exit_code, 0) << describe(released);
  EXPECT_EQ(parse_output(released)["released"].integer(), 0);
  EXPECT_GE(nodes_holding(cluster_, "keep", value), 3U);
}

TEST_F(LockCommandsTest, ReleaseWithoutQuorumExits75AndNamesTheNodes) {
  const auto file = config();
  const CliResult acquired = run_cli(command("acquire", file, {"--resource", "stuck"}));
  ASSERT_EQ(acquired.exit_code, 0) << describe(acquired);
  const std::string value = parse_output(acquired)["value"].text;
  for (std::size_t i = 2; i < 5; ++i) cluster_.node(i).stop();
  const CliResult released =
      run_cli(command("release", file, {"--resource", "stuck", "--value", value}));
  EXPECT_EQ(released.exit_code, 75) << describe(released);
  (void)parse_output(released);
  for (std::size_t i = 2; i < 5; ++i) {
    EXPECT_NE(released.err.find("node " + cluster_.node(i).address()), std::string::npos)
        << released.err;
  }
  EXPECT_EQ(nodes_holding(cluster_, "stuck"), 0U);  // the two live nodes let go
}

TEST_F(LockCommandsTest, TtlBeyondTheQuorumsMaxTtlIsAUsageError) {
  const auto file = config(milliseconds(2000));
  for (const std::string subcommand : {"acquire", "extend"}) {
    std::vector<std::string> arguments =
        command(subcommand, file, {"--resource", "long", "--ttl", "2001"});
    if (subcommand == "extend") arguments.insert(arguments.end(), {"--value", "v"});
    const CliResult result = run_cli(arguments);
    EXPECT_EQ(result.exit_code, 64) << describe(result);
    EXPECT_NE(result.err.find("exceeds the quorum's max_ttl (2000 ms"), std::string::npos)
        << result.err;
  }
  const auto longer = config(milliseconds(2000), "max_ttl_ms = 5000\n");
  EXPECT_EQ(run_cli(command("acquire", longer, {"--resource", "long", "--ttl", "5000"})).exit_code,
            0);
}

TEST_F(LockCommandsTest, NodeFlagsReplaceTheFile) {
  std::vector<std::string> arguments{"acquire", "--resource", "flags", "--ttl", "5000"};
  for (const std::string& address : cluster_.addresses()) {
    arguments.insert(arguments.end(), {"--node", address});
  }
  const CliResult result = run_cli(arguments);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_GE(nodes_holding(cluster_, "flags", parse_output(result)["value"].text), 3U);
}

TEST_F(LockCommandsTest, JsonIsValidForAnyResourceName) {
  const auto file = config(milliseconds(2000));
  const std::string replacement = "\xef\xbf\xbd";
  struct Case {
    std::string name;
    std::string shown;
  };
  const Case cases[] = {
      {"quote\"d", "quote\"d"},
      {"back\\slash", "back\\slash"},
      {"line\nbreak\ttab\r", "line\nbreak\ttab\r"},
      {"esc\x1b[0m\x01", "esc\x1b[0m\x01"},
      {"caf\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac-\xf0\x9f\x94\x92",
       "caf\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac-\xf0\x9f\x94\x92"},
      {"bad\xff\xfeutf8\xc3", "bad" + replacement + replacement + "utf8" + replacement},
  };
  for (const Case& test_case : cases) {
    const CliResult result = run_cli(command("acquire", file, {"--resource", test_case.name}));
    ASSERT_EQ(result.exit_code, 0) << describe(result);
    const JsonValue json = parse_output(result);
    EXPECT_EQ(json["resource"].text, test_case.shown);
    // The lock itself is on the exact bytes.
    EXPECT_GE(nodes_holding(cluster_, test_case.name, json["value"].text), 3U);
  }
}

// Nodes frozen after accepting the connection (SIGSTOP: the kernel still
// completes the TCP handshake and buffers what is written) must not grant a
// failed attempt once they resume: nothing that can grant is written behind
// an unanswered handshake, so the process can exit right after the failure
// and leave nothing held.
TEST_F(LockCommandsTest, AFailedAcquireAgainstFrozenNodesLeavesNothingBehind) {
  expect_nothing_left_by_a_failed_acquire_against_frozen_nodes(config(milliseconds(10000)));
}

// The same with acquires that carry a WAIT for replicas (min_replicas), which
// never share a batched call and so take another path out of the queue.
TEST_F(LockCommandsTest, AFailedAcquireWithAReplicaWaitAgainstFrozenNodesLeavesNothingBehind) {
  const TempDir scratch;
  const auto file = scratch / "replicas.toml";
  std::ofstream out(file);
  for (std::size_t i = 0; i < cluster_.size(); ++i) {
    out << "[[node]]\naddress = \"" << cluster_.node(i).address()
        << "\"\nmin_replicas = 1\nreplica_timeout_ms = 20\n";
  }
  out << "\n[lock]\nttl_ms = 10000\nnode_timeout_ms = 200\nretry_delay_ms = 20\n";
  out.close();
  expect_nothing_left_by_a_failed_acquire_against_frozen_nodes(file, config(milliseconds(10000)));
}

void LockCommandsTest::expect_nothing_left_by_a_failed_acquire_against_frozen_nodes(
    const std::filesystem::path& file, std::optional<std::filesystem::path> warm_up_file) {
  const std::filesystem::path warm = warm_up_file.value_or(file);
  // Every node carries its identity marker, as in a quorum in use.
  const CliResult first = run_cli(command("acquire", warm, {"--resource", "warm-up"}));
  ASSERT_EQ(first.exit_code, 0) << describe(first);
  const std::string value = parse_output(first)["value"].text;
  ASSERT_EQ(
      run_cli(command("release", warm, {"--resource", "warm-up", "--value", value})).exit_code, 0);

  for (std::size_t i = 0; i < 3; ++i) cluster_.node(i).pause();
  const CliResult failed = run_cli(command("acquire", file, {"--resource", "r7", "--wait", "0"}));
  for (std::size_t i = 0; i < 3; ++i) cluster_.node(i).resume();
  EXPECT_EQ(failed.exit_code, 75) << describe(failed);

  // Once a resumed node has read what the process left in its socket and
  // seen the process's connections close, only the probe's own connection
  // is left: everything the process wrote has run by then.
  for (std::size_t i = 0; i < 3; ++i) {
    RedisProbe probe(cluster_.node(i).port());
    EXPECT_TRUE(eventually([&] {
      const auto clients = probe.command({"CLIENT", "LIST"});
      return clients.kind == Reply::Kind::bulk_string &&
             std::count(clients.text.begin(), clients.text.end(), '\n') == 1;
    })) << "node "
        << i << " still has the process's connections";
    EXPECT_FALSE(probe.exists(lock_key("r7"))) << "node " << i << " granted the failed attempt";
  }
  // And the resource is free at once, not in a TTL.
  const CliResult next = run_cli(command("acquire", warm, {"--resource", "r7", "--wait", "0"}));
  EXPECT_EQ(next.exit_code, 0) << describe(next);
}

}  // namespace
}  // namespace redlock::test
