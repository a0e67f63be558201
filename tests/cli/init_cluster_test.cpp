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

long long keys_on(RedisServer& server) { return server.probe().command({"DBSIZE"}).integer; }

// A quorum of one cluster member of three shards and two single servers.
class InitCluster : public ::testing::Test {
 protected:
  // `command` over `--node` each member.
  std::vector<std::string> with_nodes(std::vector<std::string> command) const {
    for (const std::string& node :
         {cluster_node(member.seeds()), first.address(), second_address}) {
      command.insert(command.end(), {"--node", node});
    }
    return command;
  }
  // Every server's number of keys: the cluster's masters, then the singles.
  std::vector<long long> keys_everywhere() {
    std::vector<long long> keys;
    for (std::size_t shard = 0; shard < member.shards(); ++shard) {
      keys.push_back(keys_on(member.master(shard)));
    }
    keys.push_back(keys_on(first));
    keys.push_back(keys_on(second));
    return keys;
  }
  // Sets the marker of shard `shard`'s first slot on its master to `value`.
  void mark_first_slot(std::size_t shard, const std::string& value) {
    const auto slot = static_cast<std::uint16_t>(member.slots_of(shard).first);
    ASSERT_TRUE(
        member.master(shard)
            .probe()
            .command({"SET", "redlock:{" + std::string(detail::slot_tag(slot)) + "}node", value})
            .is_ok());
  }

  ShardedMember member = three_shards(0);
  RedisServer first;
  RedisServer second;
  const std::string second_address = second.address();
};

// The flow of a new quorum whose first use found a member down: that
// slot's delay, then init, then a lock in that slot and in a slot never
// used, while the member is still down.
TEST_F(InitCluster, AFirstUseWithAMemberDownThenInitMarksEverySlotAndLocksFollow) {
  second.stop();
  const CliResult refused = run_cli(with_nodes({"acquire", "--resource", "job", "--wait", "1500"}));
  EXPECT_EQ(refused.exit_code, 75) << describe(refused);
  EXPECT_NE(refused.err.find(second_address + " did not answer when the quorum was first used"),
            npos)
      << refused.err;

  const CliResult init = run_cli(with_nodes({"init"}));
  ASSERT_EQ(init.exit_code, 0) << describe(init);
  EXPECT_NE(init.out.find("the quorum is declared brand-new: 2 of 3 nodes marked"), npos)
      << init.out;
  EXPECT_NE(init.out.find("(its first-use delay cleared)"), npos) << init.out;
  EXPECT_NE(init.err.find(second_address + " did not answer"), npos) << init.err;
  // Every slot's marker, each on the server that has the slot, naming it.
  EXPECT_EQ(keys_on(first), detail::kClusterSlots);
  for (std::size_t shard = 0; shard < member.shards(); ++shard) {
    const auto [first_slot, last_slot] = member.slots_of(shard);
    EXPECT_EQ(keys_on(member.master(shard)), last_slot - first_slot + 1) << "shard " << shard;
    const std::string marker =
        member.master(shard)
            .probe()
            .command(
                {"GET", "redlock:{" +
                            std::string(detail::slot_tag(static_cast<std::uint16_t>(last_slot))) +
                            "}node"})
            .text;
    const std::string run_id = member.master(shard).probe().command({"INFO", "server"}).text;
    ASSERT_NE(marker.find(" run_id="), npos) << marker;
    EXPECT_NE(run_id.find("run_id:" + marker.substr(marker.find(" run_id=") + 8)), npos) << marker;
  }

  const CliResult job = run_cli(with_nodes({"acquire", "--resource", "job", "--wait", "0"}));
  EXPECT_EQ(job.exit_code, 0) << describe(job);
  const CliResult fresh =
      run_cli(with_nodes({"acquire", "--resource", "never-used", "--wait", "0"}));
  EXPECT_EQ(fresh.exit_code, 0) << describe(fresh);
}

// A quorum in use is not brand-new: refused, naming what each member
// holds, and nothing is written on any server.
TEST_F(InitCluster, AQuorumInUseIsRefusedAndNothingIsWritten) {
  const CliResult held = run_cli(with_nodes({"acquire", "--resource", "job"}));
  ASSERT_EQ(held.exit_code, 0) << describe(held);
  const std::vector<long long> before = keys_everywhere();

  const CliResult init = run_cli(with_nodes({"init"}));
  EXPECT_EQ(init.exit_code, 75) << describe(init);
  EXPECT_NE(init.err.find("holds an identity marker of a quorum in use, lock keys"), npos)
      << init.err;
  EXPECT_NE(init.err.find("refused; nothing was written"), npos) << init.err;
  EXPECT_EQ(keys_everywhere(), before);
}

// A member shows use when any of its masters does: a marker of a quorum
// in use on one master is not hidden by the first use's tagged markers on
// the others, whichever master answers first.
TEST_F(InitCluster, AMemberWithAMarkerInUseOnOneMasterIsInUseWhateverTheOthersShow) {
  for (std::size_t shard = 0; shard < member.shards(); ++shard) {
    mark_first_slot(shard,
                    shard == 1 ? "in-use" : std::string(detail::kFirstInitMarkerPrefix) + "x");
  }
  const CliResult init = run_cli(with_nodes({"init"}));
  EXPECT_EQ(init.exit_code, 75) << describe(init);
  EXPECT_NE(init.err.find("holds an identity marker of a quorum in use"), npos) << init.err;
  EXPECT_EQ(keys_on(first), 0);
}

// A master that does not answer does not hide what the member's other
// masters show: a marker of a quorum in use there refuses init, though
// the member as a whole did not answer.
TEST_F(InitCluster, AMemberWithAMasterDownStillShowsTheUseItsOtherMastersShow) {
  mark_first_slot(1, "in-use");
  member.master(2).stop();
  const CliResult init = run_cli(with_nodes({"init"}));
  EXPECT_EQ(init.exit_code, 75) << describe(init);
  EXPECT_NE(init.err.find("holds an identity marker of a quorum in use"), npos) << init.err;
  EXPECT_EQ(keys_on(first), 0);
  EXPECT_EQ(keys_on(second), 0);
}

// Lock keys named outside the prefix's slot keys (a lock_key such as
// "app:{prefix}{resource}") are signs of use too.
TEST_F(InitCluster, LockKeysOfACustomLockKeyAreSignsOfUse) {
  const std::filesystem::path file =
      std::filesystem::path(testing::TempDir()) / "init-cluster-lock-key.toml";
  std::string toml = "[[node]]\ncluster = [";
  for (std::size_t i = 0; i < member.seeds().size(); ++i) {
    toml += (i > 0 ? ", \"" : "\"") + member.seeds()[i] + "\"";
  }
  toml += "]\n\n[[node]]\naddress = \"" + first.address() + "\"\n\n[[node]]\naddress = \"" +
          second_address + "\"\n\n[lock]\nlock_key = \"app:{prefix}{resource}\"\n";
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
TEST_F(InitCluster, MembersThatAreOneClusterAreRefusedWithExit78) {
  const std::string by_first = cluster_node({member.master(0).address()});
  const std::string by_second = cluster_node({member.master(1).address()});
  const CliResult twice =
      run_cli({"init", "--node", by_first, "--node", by_second, "--node", first.address()});
  EXPECT_EQ(twice.exit_code, 78) << describe(twice);
  EXPECT_NE(twice.err.find("init: node " + by_first + " and node " + by_second +
                           " are one Redis Cluster"),
            npos)
      << twice.err;
  for (const long long keys : keys_everywhere()) EXPECT_EQ(keys, 0);
}

}  // namespace
}  // namespace redlock::test
