// `redlock status` end to end.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "cli_test_support.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

class StatusTest : public CliClusterTest {};

TEST_F(StatusTest, TableShowsEveryNode) {
  const auto file = config();
  const CliResult result = run_cli(command("status", file));
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("NODE"), std::string::npos);
  for (std::size_t i = 0; i < cluster_.size(); ++i) {
    EXPECT_NE(result.out.find(cluster_.node(i).address()), std::string::npos) << result.out;
  }
  EXPECT_NE(result.out.find("master"), std::string::npos);
  EXPECT_NE(result.out.find("quorum 3 of 5: 5 reachable"), std::string::npos) << result.out;
  EXPECT_TRUE(result.err.empty()) << result.err;
}

TEST_F(StatusTest, NamesNodesMarkedUnderAnotherMaxTtl) {
  // A client with max_ttl 500 ms marks every node; status under a
  // configuration whose max_ttl is 4000 ms says that their recovery delays
  // disagree.
  const auto marked_by = config(milliseconds(500), "max_ttl_ms = 500\n");
  ASSERT_EQ(run_cli(command("acquire", marked_by, {"--resource", "mark"})).exit_code, 0);
  const auto file = config(milliseconds(500), "max_ttl_ms = 4000\n");
  const CliResult result = run_cli(command("status", file, {"--json"}));
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("was marked by a client with max_ttl 500 ms, this configuration's is "
                            "4000 ms"),
            std::string::npos)
      << result.err;
  const JsonValue json = parse_output(result);
  for (const JsonValue& node : json["nodes"].items) {
    EXPECT_EQ(node["marker_max_ttl_ms"].integer().value_or(-1), 500) << result.out;
  }
  const CliResult same = run_cli(command("status", marked_by));
  EXPECT_EQ(same.err.find("was marked by"), std::string::npos) << same.err;
}

TEST_F(StatusTest, JsonDescribesEveryNode) {
  const auto file = config();
  const CliResult result = run_cli(command("status", file, {"--json"}));
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  const JsonValue json = parse_output(result);
  EXPECT_EQ(json["quorum"].integer(), 3);
  EXPECT_EQ(json["reachable"].integer(), 5);
  EXPECT_EQ(json.find("resource"), nullptr);
  const JsonValue& nodes = json["nodes"];
  ASSERT_EQ(nodes.items.size(), 5U);
  for (std::size_t i = 0; i < nodes.items.size(); ++i) {
    const JsonValue& node = nodes.items[i];
    EXPECT_EQ(node["address"].text, cluster_.node(i).address());
    EXPECT_EQ(node["reachable"].kind, JsonValue::Kind::boolean);
    EXPECT_TRUE(node["reachable"].boolean);
    EXPECT_GE(node["rtt_us"].integer().value_or(-1), 0);
    EXPECT_EQ(node["role"].text, "master");
    EXPECT_EQ(node["appendonly"].text, "no");
    EXPECT_EQ(node["persistence"].text, "off");
    EXPECT_TRUE(node["error"].is_null());
  }
}

TEST_F(StatusTest, ResourceShowsHoldersAndWhetherTheQuorumCouldGrant) {
  const auto file = config(milliseconds(30000));
  const CliResult free_result = run_cli(command("status", file, {"--resource", "job", "--json"}));
  ASSERT_EQ(free_result.exit_code, 0) << describe(free_result);
  const JsonValue free_json = parse_output(free_result);
  EXPECT_EQ(free_json["resource"].text, "job");
  EXPECT_TRUE(free_json["grantable"].boolean);
  EXPECT_EQ(free_json["free_nodes"].integer(), 5);
  for (const JsonValue& node : free_json["nodes"].items) {
    EXPECT_EQ(node["pttl_ms"].integer(), -2);
    EXPECT_TRUE(node["holder"].is_null());
  }

  const CliResult acquired = run_cli(command("acquire", file, {"--resource", "job", "--fenced"}));
  ASSERT_EQ(acquired.exit_code, 0) << describe(acquired);
  const JsonValue lock = parse_output(acquired);
  ASSERT_TRUE(eventually([&] { return nodes_holding(cluster_, "job") == 5; }));

  const CliResult held_result = run_cli(command("status", file, {"--resource", "job", "--json"}));
  ASSERT_EQ(held_result.exit_code, 0) << describe(held_result);
  const JsonValue held = parse_output(held_result);
  EXPECT_FALSE(held["grantable"].boolean);
  EXPECT_EQ(held["held_nodes"].integer(), 5);
  std::size_t with_fence = 0;
  for (const JsonValue& node : held["nodes"].items) {
    EXPECT_GT(node["pttl_ms"].integer().value_or(0), 0);
    EXPECT_EQ(node["holder"].text, lock["value"].text);
    if (node["fence"].integer() == lock["fence"].integer()) ++with_fence;
  }
  EXPECT_GE(with_fence, 3U);

  const CliResult table = run_cli(command("status", file, {"--resource", "job"}));
  ASSERT_EQ(table.exit_code, 0) << describe(table);
  EXPECT_NE(table.out.find(lock["value"].text), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("cannot be granted now"), std::string::npos) << table.out;
}

TEST_F(StatusTest, ADownNodeIsNamedButAMajorityIsEnough) {
  const auto file = config();
  cluster_.node(4).stop();
  const CliResult result = run_cli(command("status", file, {"--json"}));
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  const JsonValue json = parse_output(result);
  EXPECT_EQ(json["reachable"].integer(), 4);
  const JsonValue& down = json["nodes"].items.at(4);
  EXPECT_FALSE(down["reachable"].boolean);
  EXPECT_TRUE(down["rtt_us"].is_null());
  EXPECT_FALSE(down["error"].text.empty());
  EXPECT_NE(result.err.find("node " + cluster_.node(4).address() + ": connect"), std::string::npos)
      << result.err;
}

TEST_F(StatusTest, WithoutAReachableMajorityExits75) {
  const auto file = config();
  for (std::size_t i = 0; i < 3; ++i) cluster_.node(i).stop();
  const CliResult result = run_cli(command("status", file));
  EXPECT_EQ(result.exit_code, 75) << describe(result);
  EXPECT_NE(result.out.find("(no quorum)"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find("only 2 of 5 nodes reachable"), std::string::npos) << result.err;
}

TEST(StatusPersistence, ReportsAofModes) {
  RedisCluster cluster(3, Persistence::aof_always);
  const CliResult result =
      run_cli({"status", "--json", "--node", cluster.node(0).address(), "--node",
               cluster.node(1).address(), "--node", cluster.node(2).address()});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  const JsonValue json = parse_output(result);
  for (const JsonValue& node : json["nodes"].items) {
    EXPECT_EQ(node["appendonly"].text, "yes");
    EXPECT_EQ(node["appendfsync"].text, "always");
    EXPECT_EQ(node["persistence"].text, "aof always");
  }
}

TEST(StatusPersistence, UnknownWhereConfigIsDenied) {
  RedisServerOptions options;
  options.extra_arguments = {"--rename-command", "CONFIG", ""};
  RedisCluster cluster(3, options);
  std::vector<std::string> arguments{"status", "--json"};
  for (const std::string& address : cluster.addresses()) {
    arguments.insert(arguments.end(), {"--node", address});
  }
  const CliResult result = run_cli(arguments);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  const JsonValue json = parse_output(result);
  for (const JsonValue& node : json["nodes"].items) {
    EXPECT_TRUE(node["reachable"].boolean);
    EXPECT_EQ(node["appendonly"].text, "unknown");
    EXPECT_EQ(node["persistence"].text, "unknown");
  }
}

}  // namespace
}  // namespace redlock::test

namespace redlock::test {
namespace {

// A server that was promoted from a replica and holds a marker naming
// another server: status says what the next session there will do.
TEST(StatusPromoted, NamesAPromotedServerWhoseMarkerNamesAnotherServer) {
  RedisServer promoted;
  RedisServer plain;
  RedisProbe probe = promoted.probe();
  ASSERT_EQ(probe.command({"REPLICAOF", "127.0.0.1", "1"}).text, "OK");
  ASSERT_EQ(probe.command({"REPLICAOF", "NO", "ONE"}).text, "OK");
  const std::string foreign =
      "redlock-node-00 max_ttl_ms=10000 run_id=0000000000000000000000000000000000000000";
  for (RedisServer* server : {&promoted, &plain}) {
    ASSERT_EQ(server->probe().command({"SET", "redlock:node", foreign}).text, "OK");
  }
  const CliResult result =
      run_cli({"status", "--json", "--node", promoted.address(), "--node", plain.address()});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("node " + promoted.address() + " was promoted from a replica"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(result.err.find("node " + plain.address() + " was promoted"), std::string::npos)
      << "a server that shows no promotion kept its own data" << result.err;
  const JsonValue json = parse_output(result);
  EXPECT_TRUE(json["nodes"].items.at(0)["promoted"].boolean);
  EXPECT_FALSE(json["nodes"].items.at(1)["promoted"].boolean);
  EXPECT_EQ(json["nodes"].items.at(0)["marker_run_id"].text, std::string(40, '0'));
}

}  // namespace
}  // namespace redlock::test
