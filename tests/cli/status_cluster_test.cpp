// `redlock status` with a member that is a Redis Cluster (docs/cli.md,
// "redlock status"): each cluster member's shards, their masters, node ids,
// run ids and slot coverage, from real clusters; and members that are not
// independent — one cluster named twice, a server in two members — refused
// with exit 78.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_test_support.hpp"
#include "cluster_cli.hpp"

namespace redlock::test {
namespace {

// `redlock status` (with --json when `json`) over `--node` each of `members`.
CliResult status_of(const std::vector<std::string>& members, bool json) {
  std::vector<std::string> args{"status"};
  if (json) args.emplace_back("--json");
  for (const std::string& member : members) args.insert(args.end(), {"--node", member});
  return run_cli(args);
}

TEST(StatusCluster, ListsEachShardsMasterNodeIdRunIdAndSlots) {
  ShardedMember member = three_shards(0);
  RedisServer first;
  RedisServer second;
  const std::vector<std::string> members{first.address(), second.address(),
                                         cluster_node(member.seeds())};
  const CliResult result = status_of(members, true);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  const JsonValue json = parse_output(result);
  EXPECT_EQ(json["reachable"].integer(), 3);
  EXPECT_TRUE(json["not_independent"].items.empty());
  const JsonValue& nodes = json["nodes"];
  ASSERT_EQ(nodes.items.size(), 3U);
  EXPECT_TRUE(nodes.items[0]["cluster"].is_null());
  const JsonValue& cluster = nodes.items[2]["cluster"];
  ASSERT_FALSE(cluster.is_null()) << result.out;
  EXPECT_EQ(nodes.items[2]["role"].text, "cluster");
  EXPECT_TRUE(nodes.items[2]["reachable"].boolean);
  EXPECT_EQ(cluster["covered_slots"].integer(), 16384);
  ASSERT_EQ(cluster["shards"].items.size(), member.shards());
  for (std::size_t shard = 0; shard < member.shards(); ++shard) {
    const JsonValue* found = nullptr;
    for (const JsonValue& each : cluster["shards"].items) {
      if (each["master"].text == member.master(shard).address()) found = &each;
    }
    ASSERT_NE(found, nullptr) << "shard " << shard << " in " << result.out;
    const auto [first_slot, last_slot] = member.slots_of(shard);
    ASSERT_EQ((*found)["slots"].items.size(), 1U);
    EXPECT_EQ((*found)["slots"].items[0].items[0].integer(), first_slot);
    EXPECT_EQ((*found)["slots"].items[0].items[1].integer(), last_slot);
    EXPECT_EQ((*found)["slot_count"].integer(), last_slot - first_slot + 1);
    EXPECT_TRUE((*found)["reachable"].boolean);
    EXPECT_EQ((*found)["role"].text, "master");
    // The ids the servers give themselves.
    const Reply myid = RedisProbe(member.master(shard).port()).command({"CLUSTER", "MYID"});
    EXPECT_EQ((*found)["node_id"].text, myid.text);
    EXPECT_EQ((*found)["run_id"].text.size(), 40U);
  }

  const CliResult shown = status_of(members, false);
  ASSERT_EQ(shown.exit_code, 0) << describe(shown);
  EXPECT_NE(shown.out.find("3 shards, 16384 of 16384 slots covered"), std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find(member.master(0).address()), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("quorum 2 of 3: 3 reachable"), std::string::npos) << shown.out;
}

TEST(StatusCluster, AMemberWithAMasterDownIsDegradedAndNotCounted) {
  ShardedMember member = three_shards(0);
  RedisServer first;
  RedisServer second;
  const std::string down = member.master(1).address();
  member.master(1).stop();
  const std::vector<std::string> members{first.address(), second.address(),
                                         cluster_node(member.seeds())};
  const CliResult result = status_of(members, true);
  // Two of three members up: still a quorum.
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  const JsonValue json = parse_output(result);
  EXPECT_EQ(json["reachable"].integer(), 2);
  const JsonValue& row = json["nodes"].items.at(2);
  EXPECT_FALSE(row["reachable"].boolean);
  EXPECT_NE(row["error"].text.find("1 of 3 masters did not answer"), std::string::npos)
      << result.out;
  EXPECT_NE(result.err.find("master " + down), std::string::npos) << result.err;
  EXPECT_NE(status_of(members, false).out.find("degraded"), std::string::npos);
}

TEST(StatusCluster, MembersThatAreNotIndependentAreRefusedWithExit78) {
  ShardedMember member = three_shards(1);
  RedisServer single;
  // One cluster named twice, by two of its servers: every master node id
  // is in both maps.
  const std::string by_master = cluster_node({member.master(0).address()});
  const std::string by_replica = cluster_node({member.replicas(1).front()->address()});
  const CliResult twice = run_cli(
      {"status", "--json", "--node", by_master, "--node", by_replica, "--node", single.address()});
  EXPECT_EQ(twice.exit_code, 78) << describe(twice);
  EXPECT_NE(twice.err.find("are one Redis Cluster"), std::string::npos) << twice.err;
  const JsonValue json = parse_output(twice);
  ASSERT_EQ(json["not_independent"].items.size(), 1U) << twice.out;
  EXPECT_EQ(json["not_independent"].items[0]["reason"].text, "one cluster");

  // A single member that is one of the cluster's masters, named by an
  // address the configuration cannot tell from a seed: the cluster is
  // reached through a replica.
  const CliResult shared =
      run_cli({"status", "--node", member.master(2).address(), "--node",
               cluster_node({member.replicas(0).front()->address()}), "--node", single.address()});
  EXPECT_EQ(shared.exit_code, 78) << describe(shared);
  EXPECT_NE(shared.err.find("share a server"), std::string::npos) << shared.err;

  // Independent members: no refusal.
  RedisServer another;
  const CliResult fine = run_cli(
      {"status", "--node", by_master, "--node", single.address(), "--node", another.address()});
  EXPECT_EQ(fine.exit_code, 0) << describe(fine);
}

// The lock commands over members that are clusters, with a single server
// beside them (the quorum names its keys per slot on every member):
// acquire holds the resource on the master of its slot in each member,
// status --resource shows the holder and the slot's marker on each, and
// release frees it.
TEST(StatusCluster, AcquireStatusAndReleaseOverClusterMembers) {
  ShardedMember first = three_shards(0);
  ShardedMember second = three_shards(0);
  RedisServer single;
  const std::vector<std::string> nodes{"--node", cluster_node(first.seeds()),
                                       "--node", cluster_node(second.seeds()),
                                       "--node", single.address()};
  std::vector<std::string> acquire{"acquire", "--resource", "deploy"};
  acquire.insert(acquire.end(), nodes.begin(), nodes.end());
  const CliResult held = run_cli(acquire);
  ASSERT_EQ(held.exit_code, 0) << describe(held);
  const std::string value = parse_output(held)["value"].text;
  ASSERT_FALSE(value.empty()) << held.out;

  std::vector<std::string> status{"status", "--json", "--resource", "deploy"};
  status.insert(status.end(), nodes.begin(), nodes.end());
  const CliResult shown = run_cli(status);
  ASSERT_EQ(shown.exit_code, 0) << describe(shown);
  const JsonValue json = parse_output(shown);
  ASSERT_EQ(json["nodes"].items.size(), 3U) << shown.out;
  for (const JsonValue& node : json["nodes"].items) {
    EXPECT_EQ(node["holder"].text, value) << shown.out;
    EXPECT_TRUE(node["marked"].boolean) << "the resource slot's marker: " << shown.out;
  }

  std::vector<std::string> release{"release", "--resource", "deploy", "--value", value};
  release.insert(release.end(), nodes.begin(), nodes.end());
  const CliResult released = run_cli(release);
  EXPECT_EQ(released.exit_code, 0) << describe(released);
  const CliResult after = run_cli(status);
  const JsonValue after_json = parse_output(after);
  for (const JsonValue& node : after_json["nodes"].items) {
    EXPECT_TRUE(node["holder"].is_null()) << after.out;
  }
}

}  // namespace
}  // namespace redlock::test
