// Configuration lookup, check-config, usage errors, help and version — the
// exit codes 78 and 64 end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "cli_test_support.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

class ConfigTest : public CliClusterTest {
 protected:
  ConfigTest() : CliClusterTest(3) {}
  TempDir work_;
};

TEST_F(ConfigTest, CheckConfigSummarisesAValidFile) {
  const auto file = config(milliseconds(8000));
  const CliResult result = run_cli({"check-config", file.string()});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find(": valid"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("3 nodes, quorum 2"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("ttl 8000 ms"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(cluster_.node(2).address()), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("amnesia defence on, strict persistence off; release ends when every "
                            "node answered"),
            std::string::npos)
      << result.out;
}

TEST_F(ConfigTest, CheckConfigSaysWhenAReleaseEndsAtAMajority) {
  const auto file = work_ / "majority.toml";
  write_text(file, cluster_.config_toml("release_at_majority = true\namnesia_defence = false\n"));
  const CliResult result = run_cli({"check-config", file.string()});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("amnesia defence off"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("release ends at a majority"), std::string::npos) << result.out;
}

TEST_F(ConfigTest, CheckConfigSaysWhatASingleNodeCannotPromise) {
  const auto file = work_ / "single.toml";
  write_text(file, "[[node]]\naddress = \"" + cluster_.node(0).address() + "\"\n");
  const CliResult result = run_cli({"check-config", file.string()});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("1 node, quorum 1 (tolerates 0 unavailable)"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("note: a single node tolerates no failure, and the amnesia defence "
                            "cannot work with it"),
            std::string::npos)
      << result.out;
  const CliResult three = run_cli({"check-config", config(milliseconds(8000)).string()});
  EXPECT_EQ(three.out.find("a single node"), std::string::npos) << three.out;
}

TEST_F(ConfigTest, CheckConfigNamesFileLineAndColumn) {
  const auto file = work_ / "bad.toml";
  write_text(file, "[[node]]\naddress = \"127.0.0.1:7101\"\n\n[lock]\ntll_ms = 5\n");
  const CliResult result = run_cli({"check-config", file.string()});
  EXPECT_EQ(result.exit_code, 78) << describe(result);
  EXPECT_NE(result.err.find(file.string() + ":5:1: lock.tll_ms"), std::string::npos) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
}

TEST_F(ConfigTest, CheckConfigOfAMissingFile) {
  const CliResult result = run_cli({"check-config", (work_ / "none.toml").string()});
  EXPECT_EQ(result.exit_code, 78) << describe(result);
  EXPECT_NE(result.err.find("cannot open"), std::string::npos) << result.err;
}

TEST_F(ConfigTest, EverySubcommandReportsABadFileWith78) {
  const auto file = work_ / "bad.toml";
  write_text(file, "[lock]\nttl_ms = \"ten\"\n");
  const std::vector<std::vector<std::string>> invocations = {
      {"run", "--config", file.string(), "--resource", "r", "--", "true"},
      {"acquire", "--config", file.string(), "--resource", "r"},
      {"extend", "--config", file.string(), "--resource", "r", "--value", "v"},
      {"release", "--config", file.string(), "--resource", "r", "--value", "v"},
      {"status", "--config", file.string()},
  };
  for (const auto& arguments : invocations) {
    const CliResult result = run_cli(arguments);
    EXPECT_EQ(result.exit_code, 78) << arguments.front() << ": " << describe(result);
    EXPECT_NE(result.err.find(file.string() + ":2:10:"), std::string::npos) << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
}

// A cluster member (docs/algorithm.md, "A cluster as a member") is read and
// checked, and shown by check-config, which contacts no node; a database
// other than 0 is refused at file:line:col.
TEST_F(ConfigTest, AClusterMemberIsChecked) {
  const auto file = work_ / "cluster.toml";
  write_text(file, "[[node]]\ncluster = [\"127.0.0.1:7000\", \"127.0.0.1:7001\"]\n" +
                       cluster_.config_toml());
  const CliResult checked = run_cli({"check-config", file.string()});
  ASSERT_EQ(checked.exit_code, 0) << describe(checked);
  EXPECT_NE(checked.out.find("4 nodes, quorum 3"), std::string::npos) << checked.out;
  EXPECT_NE(
      checked.out.find("a Redis Cluster, seeds 127.0.0.1:7000 127.0.0.1:7001 (keys per slot)"),
      std::string::npos)
      << checked.out;
  const auto bad = work_ / "cluster-db.toml";
  write_text(bad, "[[node]]\ncluster = [\"127.0.0.1:7000\"]\ndb = 2\n");
  const CliResult refused = run_cli({"check-config", bad.string()});
  EXPECT_EQ(refused.exit_code, 78) << describe(refused);
  EXPECT_NE(
      refused.err.find(bad.string() + ":3:6: node[0].db: a Redis Cluster has database 0 only"),
      std::string::npos)
      << refused.err;
}

TEST_F(ConfigTest, TheEnvironmentVariableNamesTheFile) {
  const auto file = config();
  CliOptions options;
  options.environment = {{"REDLOCK_CONFIG", file.string()}};
  const CliResult result = run_cli({"acquire", "--resource", "from-env"}, options);
  EXPECT_EQ(result.exit_code, 0) << describe(result);
}

TEST_F(ConfigTest, TheLocalFileIsTheLastResort) {
  write_text(work_ / "redlock.toml", cluster_.config_toml());
  CliOptions options;
  options.working_directory = work_.path();
  const CliResult result = run_cli({"acquire", "--resource", "from-cwd"}, options);
  EXPECT_EQ(result.exit_code, 0) << describe(result);
}

TEST_F(ConfigTest, TheFlagWinsOverTheEnvironment) {
  const auto file = config();
  CliOptions options;
  options.environment = {{"REDLOCK_CONFIG", (work_ / "absent.toml").string()}};
  const CliResult result =
      run_cli({"acquire", "--config", file.string(), "--resource", "flag"}, options);
  EXPECT_EQ(result.exit_code, 0) << describe(result);
}

TEST_F(ConfigTest, NoConfigurationAnywhereExits78) {
  const CliResult result = run_cli({"acquire", "--resource", "r"});
  EXPECT_EQ(result.exit_code, 78) << describe(result);
  EXPECT_NE(result.err.find("no configuration file"), std::string::npos) << result.err;
}

TEST_F(ConfigTest, ABadNodeAddressExits78) {
  const CliResult result = run_cli({"acquire", "--node", "127.0.0.1:99999", "--resource", "r"});
  EXPECT_EQ(result.exit_code, 78) << describe(result);
  EXPECT_NE(result.err.find("--node"), std::string::npos) << result.err;
}

TEST(CliUsage, UsageErrorsExit64WithOneLine) {
  const std::vector<std::vector<std::string>> invocations = {
      {},
      {"frobnicate"},
      {"acquire"},
      {"acquire", "--resource", "r", "--ttl", "soon"},
      {"run", "--resource", "r"},
      {"extend", "--resource", "r"},
      {"release", "--value", "v"},
      {"status", "--value", "v"},
      {"inspect"},
      {"inspect", "--resource", "r", "--semaphore", "s"},
      {"check-config"},
      {"acquire", "--resource", "r", "--node", "a:1", "--config", "f"},
  };
  for (const auto& arguments : invocations) {
    const CliResult result = run_cli(arguments);
    EXPECT_EQ(result.exit_code, 64) << describe(result);
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_TRUE(result.err.starts_with("redlock: ")) << result.err;
    EXPECT_TRUE(result.out.empty());
  }
}

TEST(CliUsage, HelpOnEverySubcommand) {
  for (const std::string subcommand :
       {"run", "acquire", "extend", "release", "status", "inspect", "check-config"}) {
    const CliResult result = run_cli({subcommand, "--help"});
    EXPECT_EQ(result.exit_code, 0) << describe(result);
    EXPECT_TRUE(result.out.starts_with("usage: redlock " + subcommand)) << result.out;
  }
  const CliResult overview = run_cli({"--help"});
  EXPECT_EQ(overview.exit_code, 0);
  EXPECT_NE(overview.out.find("check-config"), std::string::npos);
  EXPECT_NE(overview.out.find("inspect"), std::string::npos);
}

TEST(CliUsage, Version) {
  const CliResult result = run_cli({"--version"});
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  ASSERT_TRUE(result.out.starts_with("redlock ")) << result.out;
  const std::string version = result.out.substr(8);
  EXPECT_EQ(std::count(version.begin(), version.end(), '.'), 2) << result.out;
  EXPECT_EQ(version.find_first_not_of("0123456789."), version.size() - 1) << result.out;
  EXPECT_TRUE(version.ends_with("\n")) << result.out;
}

}  // namespace
}  // namespace redlock::test
