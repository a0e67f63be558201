// `redlock init` on a quorum with a Redis Cluster member (docs/cli.md,
// "redlock init"): every slot of every member marked, server by server, so
// that a slot first used while a member is down is granted at once; a
// quorum in use refused with nothing written; members that are one
// cluster refused with exit 78. Real clusters of three shards.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_test_support.hpp"
#include "cluster_cli.hpp"
#include "protocol/hash_slot.hpp"
#include "scripts/scripts.hpp"

namespace redlock::test {
namespace {

constexpr auto npos = std::string::npos;

std::vector<std::string> with(const std::vector<std::string>& nodes,
                              std::vector<std::string> arguments) {
  arguments.insert(arguments.end(), nodes.begin(), nodes.end());
  return arguments;
}

long long keys_on(RedisServer& server) { return server.probe().command({"DBSIZE"}).integer; }

// The flow of a new quorum whose first use found a member down: that
// slot's delay, then init, then a lock in that slot and in a slot never
// used, while the member is still down.
TEST(InitCluster, AFirstUseWithAMemberDownThenInitMarksEverySlotAndLocksFollow) {
  ShardedMember member = three_shards(0);
  RedisServer single;
  RedisServer down;
  const std::string down_address = down.address();
  const std::vector<std::string> nodes{
      "--node", cluster_node(member.seeds()), "--node", single.address(), "--node", down_address};
  down.stop();
  const CliResult refused =
      run_cli(with(nodes, {"acquire", "--resource", "job", "--wait", "1500"}));
  EXPECT_EQ(refused.exit_code, 75) << describe(refused);
  EXPECT_NE(refused.err.find(down_address + " did not answer when the quorum was first used"), npos)
      << refused.err;

  const CliResult init = run_cli(with(nodes, {"init"}));
  ASSERT_EQ(init.exit_code, 0) << describe(init);
  EXPECT_NE(init.out.find("the quorum is declared brand-new: 2 of 3 nodes marked"), npos)
      << init.out;
  EXPECT_NE(init.out.find("(its first-use delay cleared)"), npos) << init.out;
  EXPECT_NE(init.err.find(down_address + " did not answer"), npos) << init.err;
  // Every slot's marker, each on the server that has the slot, naming it.
  EXPECT_EQ(keys_on(single), detail::kClusterSlots);
  for (std::size_t shard = 0; shard < member.shards(); ++shard) {
    const auto [first, last] = member.slots_of(shard);
    EXPECT_EQ(keys_on(member.master(shard)), last - first + 1) << "shard " << shard;
    const std::string marker =
        member.master(shard)
            .probe()
            .command({"GET", "redlock:{" +
                                 std::string(detail::slot_tag(static_cast<std::uint16_t>(last))) +
                                 "}node"})
            .text;
    const std::string run_id = member.master(shard).probe().command({"INFO", "server"}).text;
    ASSERT_NE(marker.find(" run_id="), npos) << marker;
    EXPECT_NE(run_id.find("run_id:" + marker.substr(marker.find(" run_id=") + 8)), npos) << marker;
  }

  const CliResult job = run_cli(with(nodes, {"acquire", "--resource", "job", "--wait", "0"}));
  EXPECT_EQ(job.exit_code, 0) << describe(job);
  const CliResult fresh =
      run_cli(with(nodes, {"acquire", "--resource", "never-used", "--wait", "0"}));
  EXPECT_EQ(fresh.exit_code, 0) << describe(fresh);
}

// A quorum in use is not brand-new: refused, naming what each member
// holds, and nothing is written on any server.
TEST(InitCluster, AQuorumInUseIsRefusedAndNothingIsWritten) {
  ShardedMember member = three_shards(0);
  RedisServer first;
  RedisServer second;
  const std::vector<std::string> nodes{"--node", cluster_node(member.seeds()),
                                       "--node", first.address(),
                                       "--node", second.address()};
  const CliResult held = run_cli(with(nodes, {"acquire", "--resource", "job"}));
  ASSERT_EQ(held.exit_code, 0) << describe(held);
  std::vector<long long> before;
  for (std::size_t shard = 0; shard < member.shards(); ++shard) {
    before.push_back(keys_on(member.master(shard)));
  }
  before.push_back(keys_on(first));
  before.push_back(keys_on(second));

  const CliResult init = run_cli(with(nodes, {"init"}));
  EXPECT_EQ(init.exit_code, 75) << describe(init);
  EXPECT_NE(init.err.find("holds an identity marker of a quorum in use, lock keys"), npos)
      << init.err;
  EXPECT_NE(init.err.find("refused; nothing was written"), npos) << init.err;
  std::vector<long long> after;
  for (std::size_t shard = 0; shard < member.shards(); ++shard) {
    after.push_back(keys_on(member.master(shard)));
  }
  after.push_back(keys_on(first));
  after.push_back(keys_on(second));
  EXPECT_EQ(after, before);
}

// A member shows use when any of its masters does: a marker of a quorum
// in use on one master is not hidden by the first use's tagged markers on
// the others, whichever master answers first.
TEST(InitCluster, AMemberWithAMarkerInUseOnOneMasterIsInUseWhateverTheOthersShow) {
  ShardedMember member = three_shards(0);
  RedisServer first;
  RedisServer second;
  const std::vector<std::string> nodes{"--node", cluster_node(member.seeds()),
                                       "--node", first.address(),
                                       "--node", second.address()};
  for (std::size_t shard = 0; shard < member.shards(); ++shard) {
    const auto slot = static_cast<std::uint16_t>(member.slots_of(shard).first);
    const std::string value =
        shard == 1 ? "in-use" : std::string(detail::kFirstInitMarkerPrefix) + "x";
    ASSERT_TRUE(
        member.master(shard)
            .probe()
            .command({"SET", "redlock:{" + std::string(detail::slot_tag(slot)) + "}node", value})
            .is_ok());
  }
  const CliResult init = run_cli(with(nodes, {"init"}));
  EXPECT_EQ(init.exit_code, 75) << describe(init);
  EXPECT_NE(init.err.find("holds an identity marker of a quorum in use"), npos) << init.err;
  EXPECT_EQ(keys_on(first), 0);
}

// A master that does not answer does not hide what the member's other
// masters show: a marker of a quorum in use there refuses init, though
// the member as a whole did not answer.
TEST(InitCluster, AMemberWithAMasterDownStillShowsTheUseItsOtherMastersShow) {
  ShardedMember member = three_shards(0);
  RedisServer first;
  RedisServer second;
  const std::vector<std::string> nodes{"--node", cluster_node(member.seeds()),
                                       "--node", first.address(),
                                       "--node", second.address()};
  const auto slot = static_cast<std::uint16_t>(member.slots_of(1).first);
  ASSERT_TRUE(
      member.master(1)
          .probe()
          .command({"SET", "redlock:{" + std::string(detail::slot_tag(slot)) + "}node", "in-use"})
          .is_ok());
  member.master(2).stop();
  const CliResult init = run_cli(with(nodes, {"init"}));
  EXPECT_EQ(init.exit_code, 75) << describe(init);
  EXPECT_NE(init.err.find("holds an identity marker of a quorum in use"), npos) << init.err;
  EXPECT_EQ(keys_on(first), 0);
  EXPECT_EQ(keys_on(second), 0);
}

// Lock keys named outside the prefix's slot keys (a lock_key such as
// "app:{prefix}{resource}") are signs of use too.
TEST(InitCluster, LockKeysOfACustomLockKeyAreSignsOfUse) {
  ShardedMember member = three_shards(0);
  RedisServer first;
  RedisServer second;
  const std::filesystem::path file =
      std::filesystem::path(testing::TempDir()) / "init-cluster-lock-key.toml";
  std::string toml = "[[node]]\ncluster = [";
  for (std::size_t i = 0; i < member.seeds().size(); ++i) {
    toml += (i > 0 ? ", \"" : "\"") + member.seeds()[i] + "\"";
  }
  toml += "]\n\n[[node]]\naddress = \"" + first.address() + "\"\n\n[[node]]\naddress = \"" +
          second.address() + "\"\n\n[lock]\nlock_key = \"app:{prefix}{resource}\"\n";
  write_text(file, toml);
  // A lock held on the single servers alone, under the custom key.
  for (RedisServer* server : {&first, &second}) {
    ASSERT_TRUE(server->probe()
                    .command({"SET", "app:redlock:{0th}orders:42", "holder", "PX", "60000"})
                    .is_ok());
  }
  const CliResult init = run_cli({"init", "--config", file.string()});
  EXPECT_EQ(init.exit_code, 75) << describe(init);
  EXPECT_NE(init.err.find("holds lock keys"), npos) << init.err;
  std::filesystem::remove(file);
}

// One cluster named twice makes no quorum: exit 78, as status, and
// nothing is written.
TEST(InitCluster, MembersThatAreOneClusterAreRefusedWithExit78) {
  ShardedMember member = three_shards(0);
  RedisServer single;
  const CliResult twice =
      run_cli({"init", "--node", cluster_node({member.master(0).address()}), "--node",
               cluster_node({member.master(1).address()}), "--node", single.address()});
  EXPECT_EQ(twice.exit_code, 78) << describe(twice);
  EXPECT_NE(
      twice.err.find("init: node " + cluster_node({member.master(0).address()}) + " and node " +
                     cluster_node({member.master(1).address()}) + " are one Redis Cluster"),
      npos)
      << twice.err;
  for (std::size_t shard = 0; shard < member.shards(); ++shard) {
    EXPECT_EQ(keys_on(member.master(shard)), 0) << "shard " << shard;
  }
  EXPECT_EQ(keys_on(single), 0);
}

}  // namespace
}  // namespace redlock::test
