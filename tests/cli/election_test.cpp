// `redlock campaign` and `redlock leader` end to end: a real redlock process
// against five real redis-server nodes.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_support.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

class ElectionCliTest : public CliClusterTest {
 protected:
  TempDir work_;
};

TEST_F(ElectionCliTest, CampaignRunsTheCommandAsLeaderWithItsTermAndLeaderShowsIt) {
  const auto file = config();
  const auto seen = work_ / "term";
  const auto go = work_ / "go";
  CliOptions options;
  options.environment = {{"REDLOCK_TERM", "stale"}};
  const std::string script = "printf '%s\\n' \"$REDLOCK_TERM\" \"$REDLOCK_RESOURCE\" > '" +
                             seen.string() + ".tmp' && mv '" + seen.string() + ".tmp' '" +
                             seen.string() + "'; i=0; while [ ! -e '" + go.string() +
                             "' ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done";
  CliProcess leader(
      command("campaign", file,
              {"--name", "cron", "--payload", "host-a:9000", "--", "sh", "-c", script}),
      options);
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(seen); }));
  const std::string lines = read_file(seen).value_or("");
  const std::string term = lines.substr(0, lines.find('\n'));
  EXPECT_EQ(lines.substr(lines.find('\n') + 1), "election:cron\n");
  ASSERT_FALSE(term.empty());
  EXPECT_NE(term, "stale");

  const CliResult shown = run_cli(command("leader", file, {"--name", "cron"}));
  ASSERT_EQ(shown.exit_code, 0) << describe(shown);
  const JsonValue json = parse_output(shown);
  EXPECT_EQ(json["name"].text, "cron");
  EXPECT_EQ(std::to_string(json["term"].integer().value_or(-1)), term);
  EXPECT_EQ(json["payload"].text, "host-a:9000");
  EXPECT_GT(json["validity_ms"].integer().value_or(0), 0);
  EXPECT_EQ(shown.out.find("value"), std::string::npos) << "the lock value was printed";

  // Another candidate gives up after its --wait.
  const CliResult rival = run_cli(
      command("campaign", file, {"--name", "cron", "--wait", "100", "--", "sh", "-c", "true"}));
  EXPECT_EQ(rival.exit_code, 75) << describe(rival);

  { std::ofstream(go.string()) << "go"; }
  EXPECT_EQ(leader.wait().exit_code, 0);
  const CliResult after = run_cli(command("leader", file, {"--name", "cron"}));
  ASSERT_EQ(after.exit_code, 0) << describe(after);
  const JsonValue none = parse_output(after);
  ASSERT_NE(none.find("leader"), nullptr) << after.out;
  EXPECT_TRUE(none["leader"].is_null());
  EXPECT_EQ(none.find("term"), nullptr);
}

TEST_F(ElectionCliTest, AWaitingCampaignIsElectedOnceTheLeaderResigns) {
  const auto file = config();
  const auto first_term = work_ / "first";
  const auto second_term = work_ / "second";
  const auto go = work_ / "go";
  const auto write_term = [&](const std::filesystem::path& out, bool wait) {
    std::string script = "printf '%s' \"$REDLOCK_TERM\" > '" + out.string() + ".tmp' && mv '" +
                         out.string() + ".tmp' '" + out.string() + "'";
    if (wait) {
      script += "; i=0; while [ ! -e '" + go.string() +
                "' ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done";
    }
    return script;
  };
  CliProcess first(
      command("campaign", file, {"--name", "db", "--", "sh", "-c", write_term(first_term, true)}));
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(first_term); }));
  // No --wait: it waits as long as it takes.
  CliProcess second(command("campaign", file,
                            {"--name", "db", "--", "sh", "-c", write_term(second_term, false)}));
  EXPECT_FALSE(eventually([&] { return std::filesystem::exists(second_term); }, milliseconds(300)));
  { std::ofstream(go.string()) << "go"; }
  EXPECT_EQ(first.wait().exit_code, 0);
  EXPECT_EQ(second.wait().exit_code, 0);
  EXPECT_GT(std::stoll(read_file(second_term).value_or("0")),
            std::stoll(read_file(first_term).value_or("0")));
}

TEST_F(ElectionCliTest, LeaderWithoutAMajorityExits75AndNamesTheNodes) {
  const auto file = config();
  for (std::size_t i = 0; i < 3; ++i) cluster_.node(i).stop();
  const CliResult result = run_cli(command("leader", file, {"--name", "x"}));
  EXPECT_EQ(result.exit_code, 75) << describe(result);
  const JsonValue json = parse_output(result);
  EXPECT_TRUE(json["leader"].is_null());
  EXPECT_EQ(json["error"].text, "no_quorum");
  EXPECT_NE(result.err.find("only 2 of 5 nodes answered"), std::string::npos) << result.err;
}

TEST_F(ElectionCliTest, UsageErrorsExit64) {
  const auto file = config();
  for (const std::vector<std::string>& arguments :
       {std::vector<std::string>{"campaign", "--config", file.string(), "--", "true"},
        std::vector<std::string>{"leader", "--config", file.string()},
        std::vector<std::string>{"campaign", "--config", file.string(), "--name", "n"},
        std::vector<std::string>{"campaign", "--config", file.string(), "--name", "n", "--payload",
                                 std::string(4097, 'x'), "--", "true"},
        std::vector<std::string>{"leader", "--config", file.string(), "--name", "n", "--resource",
                                 "r"}}) {
    const CliResult result = run_cli(arguments);
    EXPECT_EQ(result.exit_code, 64) << describe(result);
  }
}

}  // namespace
}  // namespace redlock::test
