// `redlock init` end to end, and the note a refused acquire prints after a
// first use with a node down (docs/operations.md, "First use").
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "cli_test_support.hpp"
#include "scripts/scripts.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

class InitTest : public CliClusterTest {
 protected:
  InitTest() : CliClusterTest(5) {}
  std::string marker_on(std::size_t node) {
    return cluster_.node(node).probe().command({"GET", "redlock:node"}).text;
  }
};

// The flow a user meets: the quorum's first use finds a node down, so the
// nodes that answered wait out max_ttl; the refused acquire says why and
// names the way out; `redlock init` declares the quorum new; locks follow.
TEST_F(InitTest, AFirstUseWithANodeDownThenInitThenLocks) {
  const auto file = config();
  cluster_.node(4).stop();
  const CliResult refused =
      run_cli(command("acquire", file, {"--resource", "job", "--wait", "1500"}));
  EXPECT_EQ(refused.exit_code, 75) << describe(refused);
  EXPECT_NE(refused.err.find("note: " + cluster_.node(4).address() +
                             " did not answer when the quorum was first used"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("`redlock init` declares it so; next step: "
                             "docs/operations.md#first-use"),
            std::string::npos)
      << refused.err;
  // status tells the same story, with the next step.
  const CliResult status = run_cli(command("status", file));
  EXPECT_NE(status.err.find("ms more: " + cluster_.node(4).address() +
                            " did not answer when the quorum was first used"),
            std::string::npos)
      << status.err;
  EXPECT_NE(status.err.find("next step: docs/operations.md#first-use"), std::string::npos)
      << status.err;
  // The first use tagged its markers.
  EXPECT_TRUE(detail::is_first_init_marker(marker_on(0))) << marker_on(0);

  const CliResult init = run_cli(command("init", file));
  EXPECT_EQ(init.exit_code, 0) << describe(init);
  EXPECT_NE(init.out.find("the quorum is declared brand-new: 4 of 5 nodes marked"),
            std::string::npos)
      << init.out;
  EXPECT_NE(init.out.find("(its first-use delay cleared)"), std::string::npos) << init.out;
  EXPECT_NE(init.err.find(cluster_.node(4).address() + " did not answer"), std::string::npos)
      << init.err;
  EXPECT_FALSE(detail::is_first_init_marker(marker_on(0))) << marker_on(0);
  EXPECT_EQ(cluster_.node(0).probe().command({"EXISTS", "redlock:recovering"}).integer, 0);

  const CliResult locked = run_cli(command("acquire", file, {"--resource", "job", "--wait", "0"}));
  EXPECT_EQ(locked.exit_code, 0) << describe(locked);
}

// A brand-new quorum whose nodes all answer needs no init, but init on it
// is harmless: every node is marked.
TEST_F(InitTest, InitOfAnEmptyQuorumMarksEveryNode) {
  const auto file = config();
  const CliResult init = run_cli(command("init", file));
  EXPECT_EQ(init.exit_code, 0) << describe(init);
  for (std::size_t i = 0; i < cluster_.size(); ++i) EXPECT_FALSE(marker_on(i).empty()) << i;
  const CliResult locked = run_cli(command("acquire", file, {"--resource", "job", "--wait", "0"}));
  EXPECT_EQ(locked.exit_code, 0) << describe(locked);
}

// A quorum in use is not brand-new: refused, naming what the nodes hold,
// and nothing is written.
TEST_F(InitTest, AQuorumInUseIsRefusedAndNothingIsWritten) {
  const auto file = config();
  const CliResult first = run_cli(command("acquire", file, {"--resource", "job", "--fenced"}));
  ASSERT_EQ(first.exit_code, 0) << describe(first);
  const std::string before = marker_on(0);
  const CliResult init = run_cli(command("init", file));
  EXPECT_EQ(init.exit_code, 75) << describe(init);
  EXPECT_NE(init.err.find("holds an identity marker of a quorum in use, fence counters, lock keys"),
            std::string::npos)
      << init.err;
  EXPECT_NE(init.err.find("the quorum has been used: it is not brand-new"), std::string::npos)
      << init.err;
  EXPECT_NE(init.err.find("refused; nothing was written"), std::string::npos) << init.err;
  EXPECT_EQ(marker_on(0), before);
}

// An empty node beside nodes in use lost its data: recovery brings it
// back, not init.
TEST_F(InitTest, AnEmptyNodeBesideNodesInUseIsLeftToRecovery) {
  const auto file = config();
  const CliResult first = run_cli(command("acquire", file, {"--resource", "job"}));
  ASSERT_EQ(first.exit_code, 0) << describe(first);
  (void)cluster_.node(2).probe().command({"FLUSHALL"});
  const CliResult init = run_cli(command("init", file));
  EXPECT_EQ(init.exit_code, 75) << describe(init);
  EXPECT_NE(init.err.find("the recovery round brings it back, not init"), std::string::npos)
      << init.err;
  EXPECT_TRUE(marker_on(2).empty()) << "init wrote on the emptied node";
}

// Fewer than a majority answering: refused, naming the silent nodes.
TEST_F(InitTest, FewerThanAMajorityAnsweringIsRefused) {
  const auto file = config();
  for (std::size_t i : {0U, 1U, 2U}) cluster_.node(i).stop();
  const CliResult init = run_cli(command("init", file));
  EXPECT_EQ(init.exit_code, 75) << describe(init);
  EXPECT_NE(init.err.find("only 2 of 5 nodes answered; 3 must"), std::string::npos) << init.err;
  EXPECT_NE(init.err.find("node " + cluster_.node(0).address() + ": "), std::string::npos)
      << init.err;
  EXPECT_TRUE(marker_on(3).empty());
}

}  // namespace
}  // namespace redlock::test
