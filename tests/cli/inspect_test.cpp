// `redlock inspect` end to end: a real redlock process against five real
// redis-server nodes, its JSON checked with the tests' own reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli_test_support.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos;
       start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  return lines;
}

// Every lock key and fence counter on every node, with its value: what a
// read-only command must leave exactly as it found it.
std::map<std::string, std::string> lock_data(RedisCluster& cluster) {
  std::map<std::string, std::string> data;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    if (!cluster.node(i).running()) continue;
    for (const char* pattern : {"redlock:lock:*", "redlock:sem:*", "redlock:permits:*"}) {
      for (const std::string& key : cluster.node(i).probe().keys(pattern)) {
        data[std::to_string(i) + " " + key] = cluster.node(i).probe().get(key).value_or("?");
      }
    }
  }
  return data;
}

class InspectTest : public CliClusterTest {
 protected:
  TempDir work_;

  JsonValue inspect_ok(const std::filesystem::path& file, std::vector<std::string> arguments) {
    const CliResult result = run_cli(command("inspect", file, std::move(arguments)));
    EXPECT_EQ(result.exit_code, 0) << describe(result);
    EXPECT_TRUE(result.err.empty()) << result.err;
    EXPECT_EQ(lines_of(result.out).size(), 1U) << result.out;
    return parse_output(result);
  }
};

TEST_F(InspectTest, AFreeResourceHasNoHolder) {
  const auto file = config();
  const JsonValue json = inspect_ok(file, {"--resource", "free"});
  EXPECT_EQ(json["resource"].text, "free");
  ASSERT_NE(json.find("holder"), nullptr) << json.text;
  EXPECT_TRUE(json["holder"].is_null());
  ASSERT_NE(json.find("validity_ms"), nullptr);
  EXPECT_TRUE(json["validity_ms"].is_null());
  EXPECT_EQ(json["fence"].integer(), 0);
  ASSERT_NE(json.find("error"), nullptr);
  EXPECT_TRUE(json["error"].is_null());
  EXPECT_EQ(json.find("semaphore"), nullptr);
  const JsonValue& nodes = json["nodes"];
  ASSERT_EQ(nodes.items.size(), cluster_.size());
  for (std::size_t i = 0; i < nodes.items.size(); ++i) {
    const JsonValue& node = nodes.items[i];
    EXPECT_EQ(node["node"].text, cluster_.node(i).address());
    EXPECT_EQ(node["answered"].kind, JsonValue::Kind::boolean);
    EXPECT_TRUE(node["answered"].boolean);
    ASSERT_NE(node.find("value"), nullptr);
    EXPECT_TRUE(node["value"].is_null());
    EXPECT_EQ(node["pttl_ms"].integer(), -2);
    EXPECT_EQ(node["fence"].integer(), 0);
    EXPECT_GE(node["latency_us"].integer().value_or(-1), 0);
    ASSERT_NE(node.find("detail"), nullptr);
    EXPECT_TRUE(node["detail"].is_null());
  }
  EXPECT_TRUE(lock_data(cluster_).empty()) << "inspect wrote a lock key";
}

TEST_F(InspectTest, AHeldResourceShowsTheAcquiredValueItsValidityAndFence) {
  const auto file = config(milliseconds(30000));
  const CliResult acquired =
      run_cli(command("acquire", file, {"--resource", "job", "--fenced", "--ttl", "20000"}));
  ASSERT_EQ(acquired.exit_code, 0) << describe(acquired);
  const JsonValue lock = parse_output(acquired);
  const std::string value = lock["value"].text;
  const std::optional<std::int64_t> token = lock["fence"].integer();
  ASSERT_TRUE(token.has_value()) << acquired.out;
  const auto before = lock_data(cluster_);

  const JsonValue json = inspect_ok(file, {"--resource", "job"});
  EXPECT_EQ(json["holder"].text, value) << json["holder"].text;
  const std::int64_t validity = json["validity_ms"].integer().value_or(-1);
  EXPECT_GT(validity, 10000);  // far more is left than half the TTL
  EXPECT_LE(validity, 20000);
  EXPECT_EQ(json["fence"].integer(), token);
  // The acquire returned once a majority held the value and stored the
  // token; a late node may have neither.
  std::size_t holding = 0;
  std::size_t with_token = 0;
  for (const JsonValue& node : json["nodes"].items) {
    if (node["fence"].integer() == token) ++with_token;
    if (node["value"].text != value) continue;
    ++holding;
    EXPECT_GT(node["pttl_ms"].integer().value_or(0), validity);
    EXPECT_LE(node["pttl_ms"].integer().value_or(0), 20000);
  }
  EXPECT_GE(holding, 3U);
  EXPECT_GE(with_token, 3U);
  // Read only: every key holds what it held, and the value still releases it.
  EXPECT_EQ(lock_data(cluster_), before);
  const CliResult released =
      run_cli(command("release", file, {"--resource", "job", "--value", value}));
  ASSERT_EQ(released.exit_code, 0) << describe(released);
  EXPECT_TRUE(inspect_ok(file, {"--resource", "job"})["holder"].is_null());
}

TEST_F(InspectTest, ASemaphoreShowsEachHeldPermitWithItsHoldersValue) {
  const auto file = config(milliseconds(30000));
  std::map<std::int64_t, std::pair<std::string, std::int64_t>> held;  // permit -> value, fence
  for (int i = 0; i < 2; ++i) {
    const CliResult acquired =
        run_cli(command("acquire", file, {"--semaphore", "pool", "--permits", "4", "--fenced"}));
    ASSERT_EQ(acquired.exit_code, 0) << describe(acquired);
    const JsonValue lock = parse_output(acquired);
    held[lock["permit"].integer().value_or(-1)] = {lock["value"].text,
                                                   lock["fence"].integer().value_or(-1)};
  }
  ASSERT_EQ(held.size(), 2U);

  const JsonValue json = inspect_ok(file, {"--semaphore", "pool"});
  EXPECT_EQ(json["semaphore"].text, "pool");
  EXPECT_EQ(json.find("resource"), nullptr);
  EXPECT_EQ(json["permits"].integer(), 4);
  const JsonValue& holders = json["holders"];
  ASSERT_EQ(holders.items.size(), 2U) << "holders: " << holders.items.size();
  std::map<std::int64_t, std::pair<std::string, std::int64_t>> seen;
  for (const JsonValue& holder : holders.items) {
    seen[holder["permit"].integer().value_or(-1)] = {holder["value"].text,
                                                     holder["fence"].integer().value_or(-1)};
    EXPECT_GT(holder["validity_ms"].integer().value_or(-1), 0);
    EXPECT_LE(holder["validity_ms"].integer().value_or(-1), 30000);
  }
  EXPECT_EQ(seen, held);
  EXPECT_GE(json["fence"].integer().value_or(-1), 1);
  // A majority records the count and shows every permit of it (a node a
  // late grant has not reached records none: it shows permit 0 only).
  std::size_t recording = 0;
  for (const JsonValue& node : json["nodes"].items) {
    EXPECT_TRUE(node["answered"].boolean);
    const std::vector<JsonValue>& permits = node["permits"].items;
    for (std::size_t permit = 0; permit < permits.size(); ++permit) {
      EXPECT_EQ(permits[permit]["permit"].integer(), static_cast<std::int64_t>(permit));
    }
    if (node["permits_recorded"].integer() == 4 && permits.size() == 4) ++recording;
  }
  EXPECT_GE(recording, 3U);

  // Asked with a larger count, every permit up to it is read; the count a
  // majority records is still the one printed.
  const JsonValue wider = inspect_ok(file, {"--semaphore", "pool", "--permits", "6"});
  EXPECT_EQ(wider["permits"].integer(), 4);
  EXPECT_EQ(wider["holders"].items.size(), 2U);
  for (const JsonValue& node : wider["nodes"].items) {
    EXPECT_EQ(node["permits"].items.size(), 6U);
  }
}

TEST_F(InspectTest, AnUnusedSemaphoreHasNoHoldersAndTheCountAsked) {
  const auto file = config();
  const JsonValue unasked = inspect_ok(file, {"--semaphore", "idle"});
  ASSERT_NE(unasked.find("permits"), nullptr);
  EXPECT_TRUE(unasked["permits"].is_null());
  EXPECT_EQ(unasked["holders"].kind, JsonValue::Kind::array);
  EXPECT_TRUE(unasked["holders"].items.empty());
  const JsonValue asked = inspect_ok(file, {"--semaphore", "idle", "--permits", "3"});
  EXPECT_EQ(asked["permits"].integer(), 3);
  for (const JsonValue& node : asked["nodes"].items) {
    EXPECT_EQ(node["permits_recorded"].integer(), 0);
    EXPECT_EQ(node["permits"].items.size(), 3U);
  }
  EXPECT_TRUE(lock_data(cluster_).empty()) << "inspect wrote a key";
}

// A value with quotes, a newline and a terminal escape, set on the nodes
// directly: the JSON carries it intact, the raw output carries none of it.
TEST_F(InspectTest, AHoldersValueIsEscaped) {
  const auto file = config();
  // A first command marks the nodes, so a lock key set by hand is not taken
  // for one a node kept across a loss of its data.
  ASSERT_EQ(run_cli(command("inspect", file, {"--resource", "other"})).exit_code, 0);
  const std::string hostile = "v\"\\\n\x1b[31mred\x07";
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(cluster_.node(i).probe().set(lock_key("odd"), hostile, milliseconds(30000)));
  }
  const CliResult result = run_cli(command("inspect", file, {"--resource", "odd"}));
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(result.out.find('\x1b'), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find('\x07'), std::string::npos) << result.out;
  EXPECT_EQ(lines_of(result.out).size(), 1U) << result.out;
  const JsonValue json = parse_output(result);
  EXPECT_EQ(json["holder"].text, hostile);
  EXPECT_EQ(json["nodes"].items.at(0)["value"].text, hostile);
  EXPECT_TRUE(json["nodes"].items.at(4)["value"].is_null());
}

TEST_F(InspectTest, WithoutAMajorityExits75AndNamesTheSilentNodes) {
  const auto file = config();
  ASSERT_EQ(run_cli(command("acquire", file, {"--resource", "job"})).exit_code, 0);
  for (std::size_t i = 0; i < 3; ++i) cluster_.node(i).stop();
  const CliResult result = run_cli(command("inspect", file, {"--resource", "job"}));
  EXPECT_EQ(result.exit_code, 75) << describe(result);
  const std::vector<std::string> errors = lines_of(result.err);
  ASSERT_EQ(errors.size(), 4U) << result.err;
  EXPECT_EQ(errors[0],
            "redlock: inspect \"job\": no_quorum: only 2 of 5 nodes answered; a "
            "majority needs 3");
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(errors[1 + i].starts_with("redlock: inspect: node " + cluster_.node(i).address() +
                                          ": no answer: "))
        << errors[1 + i];
  }
  const JsonValue json = parse_output(result);
  EXPECT_EQ(json["error"].text, "no_quorum");
  EXPECT_TRUE(json["holder"].is_null());
  EXPECT_TRUE(json["fence"].is_null());
  const JsonValue& nodes = json["nodes"];
  ASSERT_EQ(nodes.items.size(), 5U);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(nodes.items[i]["answered"].boolean, i >= 3) << i;
    EXPECT_EQ(nodes.items[i]["detail"].is_null(), i >= 3) << i;
  }
  // What the nodes that answered hold is still shown.
  EXPECT_FALSE(nodes.items[3]["value"].text.empty());
  EXPECT_TRUE(nodes.items[0]["value"].is_null());

  const CliResult semaphore = run_cli(command("inspect", file, {"--semaphore", "pool"}));
  EXPECT_EQ(semaphore.exit_code, 75) << describe(semaphore);
  EXPECT_NE(semaphore.err.find("inspect semaphore \"pool\": no_quorum"), std::string::npos)
      << semaphore.err;
  const JsonValue none = parse_output(semaphore);
  EXPECT_TRUE(none["holders"].is_null());
  EXPECT_TRUE(none["permits"].is_null());
}

TEST_F(InspectTest, AMinorityDownStillAnswersAndNamesIt) {
  const auto file = config();
  cluster_.node(4).stop();
  const CliResult result = run_cli(command("inspect", file, {"--resource", "job"}));
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(lines_of(result.err),
            std::vector<std::string>{"redlock: inspect: node " + cluster_.node(4).address() +
                                     ": no answer: connect: connection refused"})
      << result.err;
  const JsonValue json = parse_output(result);
  EXPECT_TRUE(json["error"].is_null());
  EXPECT_FALSE(json["nodes"].items.at(4)["answered"].boolean);
  EXPECT_TRUE(json["nodes"].items.at(4)["pttl_ms"].is_null());
}

// Refused by the parser: exit 64, one line saying what is wrong, nothing
// on stdout, no node asked.
TEST_F(InspectTest, UsageErrorsExit64) {
  const auto file = config();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--resource", "r", "--semaphore", "s"}, "--semaphore and --resource exclude each other"},
      {{}, "--resource R or --semaphore S is required"},
      {{"--resource", "r", "--permits", "2"}, "--permits K is the count of a semaphore"},
      {{"--semaphore", "s", "--permits", "0"}, "--permits: expected a whole number from 1 to 1024"},
      {{"--semaphore", "s", "--permits", "1025"},
       "--permits: expected a whole number from 1 to 1024"},
      {{"--semaphore", "s", "--permit", "1"}, "--permit is not an option of `redlock inspect`"},
      {{"--resource", "a", "--resource", "b"}, "--resource given more than once"},
      {{"--resource", "r", "--value", "v"}, "--value is not an option of `redlock inspect`"},
      {{"--resource", ""}, "--resource: expected a non-empty value"},
  };
  for (const auto& [arguments, message] : cases) {
    const CliResult result = run_cli(command("inspect", file, arguments));
    EXPECT_EQ(result.exit_code, 64) << message << "\n" << describe(result);
    EXPECT_EQ(lines_of(result.err).size(), 1U) << result.err;
    EXPECT_NE(result.err.find("redlock: inspect: " + message), std::string::npos) << message << "\n"
                                                                                  << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
  EXPECT_TRUE(lock_data(cluster_).empty());
}

TEST_F(InspectTest, AConfigErrorExits78) {
  const CliResult missing =
      run_cli({"inspect", "--config", (work_ / "none.toml").string(), "--resource", "r"});
  EXPECT_EQ(missing.exit_code, 78) << describe(missing);
  EXPECT_TRUE(missing.out.empty()) << missing.out;
  const CliResult address = run_cli({"inspect", "--node", "bad::", "--resource", "r"});
  EXPECT_EQ(address.exit_code, 78) << describe(address);
}

}  // namespace
}  // namespace redlock::test
