// The CLI with a quorum file's lock_key: acquire writes the lock where the
// pattern says, and inspect, status --resource and release find it there;
// check-config names the pattern; a resource whose lock key is one of the
// library's own keys is a usage error.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "cli_test_support.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

class LockKeyCliTest : public CliClusterTest {
 protected:
  LockKeyCliTest() : CliClusterTest(3) {}

  std::filesystem::path file_ = config(milliseconds(30000), "lock_key = \"{resource}\"\n");

  std::size_t nodes_holding_at(const std::string& key, const std::string& value) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < cluster_.size(); ++i) {
      if (cluster_.node(i).probe().get(key) == value) ++count;
    }
    return count;
  }
};

TEST_F(LockKeyCliTest, EveryCommandFindsTheLockWhereThePatternPutsIt) {
  const CliResult acquired = run_cli(command("acquire", file_, {"--resource", "job"}));
  ASSERT_EQ(acquired.exit_code, 0) << describe(acquired);
  const std::string value = parse_output(acquired)["value"].text;
  ASSERT_TRUE(eventually([&] { return nodes_holding_at("job", value) == 3; }));
  EXPECT_EQ(nodes_holding(cluster_, "job"), 0U);  // nothing at redlock:lock:job

  const CliResult inspected = run_cli(command("inspect", file_, {"--resource", "job"}));
  ASSERT_EQ(inspected.exit_code, 0) << describe(inspected);
  EXPECT_EQ(parse_output(inspected)["holder"].text, value);

  const CliResult status = run_cli(command("status", file_, {"--resource", "job", "--json"}));
  ASSERT_EQ(status.exit_code, 0) << describe(status);
  const JsonValue json = parse_output(status);
  EXPECT_EQ(json["held_nodes"].integer(), 3);
  for (const JsonValue& node : json["nodes"].items) EXPECT_EQ(node["holder"].text, value);

  const CliResult released =
      run_cli(command("release", file_, {"--resource", "job", "--value", value}));
  ASSERT_EQ(released.exit_code, 0) << describe(released);
  EXPECT_EQ(nodes_holding_at("job", value), 0U);
}

TEST_F(LockKeyCliTest, CheckConfigNamesThePattern) {
  const CliResult result = run_cli({"check-config", file_.string()});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("lock key \"{resource}\""), std::string::npos) << result.out;
}

TEST_F(LockKeyCliTest, AResourceNamedLikeTheLibrarysOwnKeysExits64) {
  const CliResult result = run_cli(command("acquire", file_, {"--resource", "redlock:fence"}));
  EXPECT_EQ(result.exit_code, 64) << describe(result);
  for (std::size_t i = 0; i < cluster_.size(); ++i) {
    EXPECT_NE(cluster_.node(i).probe().command({"TYPE", "redlock:fence"}).text, "string");
  }
}

}  // namespace
}  // namespace redlock::test
