// Semaphores and locks over several resources from the command line, end
// to end: a real redlock process against five real redis-server nodes.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli_test_support.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

std::string permit_key(std::string_view semaphore, std::uint32_t permit) {
  return "redlock:sem:" + std::string(semaphore) + ":" + std::to_string(permit);
}

// How many running nodes hold `semaphore`'s permit key with exactly `value`.
std::size_t nodes_holding_permit(RedisCluster& cluster, std::string_view semaphore,
                                 std::uint32_t permit, std::string_view value) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    if (cluster.node(i).probe().get(permit_key(semaphore, permit)) == std::string(value)) ++count;
  }
  return count;
}

// How many permit keys of `semaphore` the nodes hold, all together.
std::size_t permit_keys(RedisCluster& cluster, std::string_view semaphore) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    count += cluster.node(i).probe().keys("redlock:sem:" + std::string(semaphore) + ":*").size();
  }
  return count;
}

std::uint32_t permit_number(const std::string& text) {
  return static_cast<std::uint32_t>(std::stoul(text));
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos;
       start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  return lines;
}

// Shell code that writes `text` (shell words) to FILE, one per line, in
// one rename: FILE exists only once it is complete.
std::string publish(const std::filesystem::path& file, const std::string& words) {
  return "printf '%s\\n' " + words + " > '" + file.string() + ".tmp' && mv '" + file.string() +
         ".tmp' '" + file.string() + "'; ";
}

class LockKindsTest : public CliClusterTest {
 protected:
  TempDir work_;
};

TEST_F(LockKindsTest, RunWithASemaphoreGivesTheCommandItsPermit) {
  const auto file = config();
  const auto seen = work_ / "env";
  const auto go = work_ / "go";
  CliOptions options;
  options.environment = {{"REDLOCK_FENCES", "stale"}};
  const std::string script =
      publish(seen, R"("$REDLOCK_RESOURCE" "$REDLOCK_PERMIT" "$REDLOCK_PERMITS" "$REDLOCK_VALUE" )"
                    R"("${REDLOCK_FENCE-unset}" "${REDLOCK_FENCES-unset}" "$REDLOCK_RESOURCES")") +
      wait_for_file(go);
  CliProcess run(command("run", file,
                         {"--semaphore", "llm-keys", "--permits", "10", "--", "sh", "-c", script}),
                 options);
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(seen); }));
  const std::vector<std::string> lines = lines_of(read_file(seen).value_or(""));
  ASSERT_EQ(lines.size(), 7U) << read_file(seen).value_or("");
  EXPECT_EQ(lines[0], "llm-keys");
  const int permit = std::stoi(lines[1]);
  EXPECT_GE(permit, 0);
  EXPECT_LT(permit, 10);
  EXPECT_EQ(lines[2], "10");
  EXPECT_EQ(lines[3].size(), 32U);
  EXPECT_EQ(lines[4], "unset");  // not fenced
  EXPECT_EQ(lines[5], "unset");  // and no outer run's tokens
  EXPECT_EQ(lines[6], "llm-keys");
  // The command holds exactly the permit it was told, with its value.
  EXPECT_GE(
      nodes_holding_permit(cluster_, "llm-keys", static_cast<std::uint32_t>(permit), lines[3]), 3U);
  // And the nodes that granted it record the count.
  std::size_t recording = 0;
  for (std::size_t i = 0; i < cluster_.size(); ++i) {
    if (cluster_.node(i).probe().get("redlock:permits:llm-keys") == "10") ++recording;
  }
  EXPECT_GE(recording, 3U);

  std::ofstream(go).put('\n');
  const CliResult result = run.wait();
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(permit_keys(cluster_, "llm-keys"), 0U) << "the permit was not released";
}

TEST_F(LockKindsTest, TwoHoldersOfATwoPermitSemaphoreGetDifferentPermitsAndAThirdExits75) {
  const auto file = config();
  const auto go = work_ / "go";
  const auto first_seen = work_ / "first";
  const auto second_seen = work_ / "second";
  const auto holder = [&](const std::filesystem::path& seen) {
    return command("run", file,
                   {"--semaphore", "pair", "--permits", "2", "--fenced", "--", "sh", "-c",
                    publish(seen, R"("$REDLOCK_PERMIT" "$REDLOCK_FENCE" "$REDLOCK_VALUE")") +
                        wait_for_file(go)});
  };
  // One after the other: the second asks once the first holds its permit.
  CliProcess first(holder(first_seen));
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(first_seen); }));
  CliProcess second(holder(second_seen));
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(second_seen); }));

  const std::vector<std::string> one = lines_of(read_file(first_seen).value_or(""));
  const std::vector<std::string> two = lines_of(read_file(second_seen).value_or(""));
  ASSERT_EQ(one.size(), 3U);
  ASSERT_EQ(two.size(), 3U);
  EXPECT_EQ((std::set<std::string>{one[0], two[0]}), (std::set<std::string>{"0", "1"}))
      << "permits " << one[0] << " and " << two[0];
  EXPECT_GE(std::stoll(one[1]), 1);  // REDLOCK_FENCE with --fenced
  EXPECT_GE(std::stoll(two[1]), 1);
  EXPECT_GE(nodes_holding_permit(cluster_, "pair", permit_number(one[0]), one[2]), 3U);
  EXPECT_GE(nodes_holding_permit(cluster_, "pair", permit_number(two[0]), two[2]), 3U);

  // Both permits are held: a third holder gets none, and runs nothing.
  const auto ran = work_ / "ran";
  const CliResult third = run_cli(command(
      "run", file,
      {"--semaphore", "pair", "--permits", "2", "--wait", "0", "--", "touch", ran.string()}));
  EXPECT_EQ(third.exit_code, 75) << describe(third);
  EXPECT_FALSE(std::filesystem::exists(ran));
  EXPECT_NE(third.err.find("run semaphore \"pair\": not_acquired"), std::string::npos) << third.err;
  // The holders keep what they held.
  EXPECT_GE(nodes_holding_permit(cluster_, "pair", permit_number(one[0]), one[2]), 3U);
  EXPECT_GE(nodes_holding_permit(cluster_, "pair", permit_number(two[0]), two[2]), 3U);

  std::ofstream(go).put('\n');
  EXPECT_EQ(first.wait().exit_code, 0);
  EXPECT_EQ(second.wait().exit_code, 0);
  EXPECT_EQ(permit_keys(cluster_, "pair"), 0U);
}

TEST_F(LockKindsTest, ACountMismatchExits64AndNamesBothCounts) {
  const auto file = config(milliseconds(30000));
  const CliResult held =
      run_cli(command("acquire", file, {"--semaphore", "pool", "--permits", "3"}));
  ASSERT_EQ(held.exit_code, 0) << describe(held);
  const std::size_t held_keys = permit_keys(cluster_, "pool");
  ASSERT_GE(held_keys, 3U);

  const auto ran = work_ / "ran";
  const CliResult run = run_cli(
      command("run", file, {"--semaphore", "pool", "--permits", "5", "--", "touch", ran.string()}));
  EXPECT_EQ(run.exit_code, 64) << describe(run);
  EXPECT_FALSE(std::filesystem::exists(ran));
  const std::string headline = lines_of(run.err).empty() ? "" : lines_of(run.err).front();
  EXPECT_NE(headline.find("run semaphore \"pool\": --permits 5 differs"), std::string::npos)
      << run.err;
  EXPECT_NE(headline.find("(3 permits)"), std::string::npos) << run.err;

  const CliResult acquire =
      run_cli(command("acquire", file, {"--semaphore", "pool", "--permits", "5"}));
  EXPECT_EQ(acquire.exit_code, 64) << describe(acquire);
  const JsonValue json = parse_output(acquire);
  EXPECT_EQ(json["error"].text, "invalid_argument");
  ASSERT_NE(json.find("permit"), nullptr) << acquire.out;
  EXPECT_TRUE(json["permit"].is_null());
  EXPECT_EQ(json["permits"].integer(), 5);
  EXPECT_NE(acquire.err.find("--permits 5 differs"), std::string::npos) << acquire.err;
  EXPECT_NE(acquire.err.find("(3 permits)"), std::string::npos) << acquire.err;
  // Neither left a permit: only the first holder's is there.
  EXPECT_EQ(permit_keys(cluster_, "pool"), held_keys);
}

TEST_F(LockKindsTest, AcquirePrintsThePermitAndReleaseWithThePermitFreesIt) {
  const auto file = config(milliseconds(30000));
  const CliResult acquired =
      run_cli(command("acquire", file, {"--semaphore", "one", "--permits", "1", "--ttl", "1000"}));
  ASSERT_EQ(acquired.exit_code, 0) << describe(acquired);
  const JsonValue json = parse_output(acquired);
  EXPECT_EQ(json["resource"].text, "one");
  EXPECT_EQ(json["permit"].integer(), 0);
  EXPECT_EQ(json["permits"].integer(), 1);
  EXPECT_TRUE(json["error"].is_null());
  EXPECT_EQ(json.find("resources"), nullptr) << acquired.out;
  const std::string value = json["value"].text;
  EXPECT_GE(nodes_holding_permit(cluster_, "one", 0, value), 3U);

  // The only permit is taken.
  const CliResult refused =
      run_cli(command("acquire", file, {"--semaphore", "one", "--permits", "1", "--wait", "0"}));
  EXPECT_EQ(refused.exit_code, 75) << describe(refused);
  const JsonValue busy = parse_output(refused);
  ASSERT_NE(busy.find("permit"), nullptr) << refused.out;
  EXPECT_TRUE(busy["permit"].is_null());
  EXPECT_EQ(busy["error"].text, "not_acquired");

  // Extend needs the count; it renews the permit's key.
  const CliResult extended = run_cli(command("extend", file,
                                             {"--semaphore", "one", "--permit", "0", "--permits",
                                              "1", "--value", value, "--ttl", "20000"}));
  ASSERT_EQ(extended.exit_code, 0) << describe(extended);
  EXPECT_EQ(parse_output(extended)["permit"].integer(), 0);
  std::size_t renewed = 0;
  for (std::size_t i = 0; i < cluster_.size(); ++i) {
    if (cluster_.node(i).probe().pttl(permit_key("one", 0)) > 1000) ++renewed;
  }
  EXPECT_GE(renewed, 3U);

  // Release needs only the permit.
  const CliResult released =
      run_cli(command("release", file, {"--semaphore", "one", "--permit", "0", "--value", value}));
  ASSERT_EQ(released.exit_code, 0) << describe(released);
  const JsonValue freed = parse_output(released);
  EXPECT_EQ(freed["permit"].integer(), 0);
  ASSERT_NE(freed.find("permits"), nullptr) << released.out;
  EXPECT_TRUE(freed["permits"].is_null());
  EXPECT_GE(freed["released"].integer().value_or(0), 3);
  EXPECT_EQ(permit_keys(cluster_, "one"), 0U);
  const CliResult again =
      run_cli(command("acquire", file, {"--semaphore", "one", "--permits", "1", "--wait", "0"}));
  EXPECT_EQ(again.exit_code, 0) << describe(again);
}

TEST_F(LockKindsTest, ReleaseOfAnotherPermitOrValueFreesNothing) {
  const auto file = config(milliseconds(30000));
  const CliResult acquired =
      run_cli(command("acquire", file, {"--semaphore", "mine", "--permits", "2"}));
  ASSERT_EQ(acquired.exit_code, 0) << describe(acquired);
  const JsonValue json = parse_output(acquired);
  const auto permit = static_cast<std::uint32_t>(json["permit"].integer().value_or(0));
  const std::string value = json["value"].text;
  const std::string other = std::to_string(1 - permit);
  for (const auto& [which, with] :
       {std::pair{other, value}, std::pair{std::to_string(permit), std::string("guess")}}) {
    const CliResult released = run_cli(
        command("release", file,
                {"--semaphore", "mine", "--permit", which, "--permits", "2", "--value", with}));
    EXPECT_EQ(released.exit_code, 0) << describe(released);
    EXPECT_EQ(parse_output(released)["released"].integer(), 0);
  }
  EXPECT_GE(nodes_holding_permit(cluster_, "mine", permit, value), 3U);
}

TEST_F(LockKindsTest, RunOverSeveralResourcesSetsResourcesAndFences) {
  const auto file = config();
  const auto seen = work_ / "env";
  const auto names = work_ / "names";
  const auto tokens = work_ / "tokens";
  const auto go = work_ / "go";
  CliOptions options;
  options.environment = {{"REDLOCK_PERMIT", "7"}};
  const std::string script =
      "printf '%s' \"$REDLOCK_RESOURCES\" > '" + names.string() + "'; printf '%s' \"" +
      "$REDLOCK_FENCES\" > '" + tokens.string() + "'; " +
      publish(seen, R"("$REDLOCK_RESOURCE" "$REDLOCK_FENCE" "$REDLOCK_VALUE" )"
                    R"("${REDLOCK_PERMIT-unset}")") +
      wait_for_file(go);
  CliProcess run(command("run", file,
                         {"--resource", "orders", "--resource", "stock line", "--resource",
                          "ledger", "--fenced", "--", "sh", "-c", script}),
                 options);
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(seen); }));
  const std::vector<std::string> env = lines_of(read_file(seen).value_or(""));
  ASSERT_EQ(env.size(), 4U);
  EXPECT_EQ(env[0], "orders");
  EXPECT_EQ(env[3], "unset");  // an outer run's permit does not leak in
  EXPECT_EQ(read_file(names), "orders\nstock line\nledger");
  const std::vector<std::string> fences = lines_of(read_file(tokens).value_or("") + "\n");
  ASSERT_EQ(fences.size(), 3U) << read_file(tokens).value_or("");
  EXPECT_EQ(fences[0], env[1]) << "REDLOCK_FENCE is the first resource's token";
  for (const std::string& token : fences) EXPECT_GE(std::stoll(token), 1) << token;
  // Every resource is held with the command's value while it runs.
  for (const char* name : {"orders", "stock line", "ledger"}) {
    EXPECT_GE(nodes_holding(cluster_, name, env[2]), 3U) << name;
  }

  std::ofstream(go).put('\n');
  const CliResult result = run.wait();
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  for (const char* name : {"orders", "stock line", "ledger"}) {
    EXPECT_EQ(nodes_holding(cluster_, name), 0U) << name;
  }
}

TEST_F(LockKindsTest, AcquireOfSeveralResourcesPrintsResourcesAndFences) {
  const auto file = config(milliseconds(30000));
  const CliResult acquired = run_cli(command(
      "acquire", file, {"--resource", "x", "--resource", "y\"q", "--fenced", "--ttl", "1000"}));
  ASSERT_EQ(acquired.exit_code, 0) << describe(acquired);
  const JsonValue json = parse_output(acquired);
  EXPECT_EQ(json["resource"].text, "x");
  const JsonValue& resources = json["resources"];
  ASSERT_EQ(resources.items.size(), 2U) << acquired.out;
  EXPECT_EQ(resources.items[0].text, "x");
  EXPECT_EQ(resources.items[1].text, "y\"q");
  const JsonValue& fences = json["fences"];
  ASSERT_EQ(fences.items.size(), 2U) << acquired.out;
  ASSERT_TRUE(fences.items[0].integer().has_value());
  ASSERT_TRUE(fences.items[1].integer().has_value());
  EXPECT_EQ(json["fence"].integer(), fences.items[0].integer());
  EXPECT_EQ(json.find("permit"), nullptr) << acquired.out;
  const std::string value = json["value"].text;
  EXPECT_GE(nodes_holding(cluster_, "x", value), 3U);
  EXPECT_GE(nodes_holding(cluster_, "y\"q", value), 3U);

  const CliResult extended = run_cli(
      command("extend", file,
              {"--resource", "x", "--resource", "y\"q", "--value", value, "--ttl", "20000"}));
  ASSERT_EQ(extended.exit_code, 0) << describe(extended);
  const JsonValue renewal = parse_output(extended);
  ASSERT_EQ(renewal["resources"].items.size(), 2U) << extended.out;
  ASSERT_EQ(renewal["fences"].items.size(), 2U) << extended.out;
  EXPECT_TRUE(renewal["fences"].items[0].is_null());
  for (const char* name : {"x", "y\"q"}) {
    std::size_t renewed = 0;
    for (std::size_t i = 0; i < cluster_.size(); ++i) {
      if (cluster_.node(i).probe().pttl(lock_key(name)) > 1000) ++renewed;
    }
    EXPECT_GE(renewed, 3U) << name;
  }

  const CliResult released = run_cli(
      command("release", file, {"--resource", "x", "--resource", "y\"q", "--value", value}));
  ASSERT_EQ(released.exit_code, 0) << describe(released);
  EXPECT_EQ(parse_output(released)["resources"].items.size(), 2U);
  EXPECT_EQ(nodes_holding(cluster_, "x"), 0U);
  EXPECT_EQ(nodes_holding(cluster_, "y\"q"), 0U);
}

TEST_F(LockKindsTest, AMutexOnOneNameKeepsAMultiResourceLockOut) {
  const auto file = config(milliseconds(30000));
  const CliResult mutex = run_cli(command("acquire", file, {"--resource", "b"}));
  ASSERT_EQ(mutex.exit_code, 0) << describe(mutex);
  const std::string holder = parse_output(mutex)["value"].text;

  const CliResult acquire = run_cli(command(
      "acquire", file, {"--resource", "a", "--resource", "b", "--resource", "c", "--wait", "0"}));
  EXPECT_EQ(acquire.exit_code, 75) << describe(acquire);
  const JsonValue json = parse_output(acquire);
  EXPECT_EQ(json["error"].text, "not_acquired");
  EXPECT_TRUE(json["value"].is_null());
  ASSERT_NE(json.find("fences"), nullptr) << acquire.out;
  EXPECT_TRUE(json["fences"].is_null());
  EXPECT_EQ(json["resources"].items.size(), 3U) << acquire.out;
  EXPECT_NE(acquire.err.find("acquire \"a\", \"b\", \"c\": not_acquired"), std::string::npos)
      << acquire.err;

  const auto ran = work_ / "ran";
  const CliResult run = run_cli(
      command("run", file,
              {"--resource", "c", "--resource", "b", "--wait", "0", "--", "touch", ran.string()}));
  EXPECT_EQ(run.exit_code, 75) << describe(run);
  EXPECT_FALSE(std::filesystem::exists(ran));
  // Each node grants all or nothing: no node took a or c.
  EXPECT_TRUE(eventually(
      [&] { return nodes_holding(cluster_, "a") == 0 && nodes_holding(cluster_, "c") == 0; },
      milliseconds(3000)));
  EXPECT_EQ(nodes_holding(cluster_, "b", holder), nodes_holding(cluster_, "b"));
}

// Every one of these is refused by the parser: exit 64, one line saying
// what is wrong, no node asked, no command run.
TEST_F(LockKindsTest, ReadersShareWithSharedAndKeepAWriterOut) {
  const auto file = config(milliseconds(30000));
  const CliResult first = run_cli(command("acquire", file, {"--resource", "doc", "--shared"}));
  const CliResult second = run_cli(command("acquire", file, {"--resource", "doc", "--shared"}));
  ASSERT_EQ(first.exit_code, 0) << describe(first);
  ASSERT_EQ(second.exit_code, 0) << describe(second);
  const JsonValue json = parse_output(first);
  EXPECT_TRUE(json["shared"].boolean) << first.out;
  const std::string value = json["value"].text;
  const std::string other = parse_output(second)["value"].text;

  const CliResult writer = run_cli(command("acquire", file, {"--resource", "doc", "--wait", "0"}));
  EXPECT_EQ(writer.exit_code, 75) << describe(writer);
  EXPECT_EQ(parse_output(writer)["error"].text, "not_acquired");
  EXPECT_EQ(parse_output(writer).find("shared"), nullptr) << writer.out;

  const CliResult extended = run_cli(command(
      "extend", file, {"--resource", "doc", "--shared", "--value", value, "--ttl", "20000"}));
  EXPECT_EQ(extended.exit_code, 0) << describe(extended);
  // Without --shared the value is taken for a writer's, which it is not.
  const CliResult as_writer =
      run_cli(command("extend", file, {"--resource", "doc", "--value", value}));
  EXPECT_EQ(as_writer.exit_code, 75) << describe(as_writer);

  for (const std::string& each : {value, other}) {
    const CliResult released =
        run_cli(command("release", file, {"--resource", "doc", "--shared", "--value", each}));
    ASSERT_EQ(released.exit_code, 0) << describe(released);
    EXPECT_GE(parse_output(released)["released"].integer().value_or(0), 3);
  }
  const CliResult now = run_cli(command("acquire", file, {"--resource", "doc", "--wait", "0"}));
  EXPECT_EQ(now.exit_code, 0) << describe(now);
}

TEST_F(LockKindsTest, RunSharedSetsRedlockSharedAndTwoReadersRunAtOnce) {
  const auto file = config();
  const auto seen_a = work_ / "a";
  const auto seen_b = work_ / "b";
  const auto go = work_ / "go";
  CliOptions options;
  options.environment = {{"REDLOCK_SHARED", "stale"}};
  const auto reader = [&](const std::filesystem::path& seen) {
    return command("run", file,
                   {"--resource", "doc", "--shared", "--", "sh", "-c",
                    publish(seen, R"("${REDLOCK_SHARED-unset}")") + wait_for_file(go)});
  };
  CliProcess a(reader(seen_a), options);
  CliProcess b(reader(seen_b), options);
  // Both commands run at once, each with REDLOCK_SHARED=1.
  ASSERT_TRUE(eventually(
      [&] { return std::filesystem::exists(seen_a) && std::filesystem::exists(seen_b); }));
  EXPECT_EQ(read_file(seen_a).value_or(""), "1\n");
  EXPECT_EQ(read_file(seen_b).value_or(""), "1\n");
  // A writer's run is refused meanwhile, and never sees REDLOCK_SHARED.
  const CliResult writer =
      run_cli(command("run", file, {"--resource", "doc", "--wait", "0", "--", "sh", "-c", "true"}),
              options);
  EXPECT_EQ(writer.exit_code, 75) << describe(writer);
  { std::ofstream(go.string()) << "go"; }
  EXPECT_EQ(a.wait().exit_code, 0);
  EXPECT_EQ(b.wait().exit_code, 0);
  const auto seen_w = work_ / "w";
  const CliResult after = run_cli(command("run", file,
                                          {"--resource", "doc", "--", "sh", "-c",
                                           publish(seen_w, R"("${REDLOCK_SHARED-unset}")")}),
                                  options);
  EXPECT_EQ(after.exit_code, 0) << describe(after);
  EXPECT_EQ(read_file(seen_w).value_or(""), "unset\n");
}

TEST_F(LockKindsTest, FairWaitersAreServedInLine) {
  const auto file = config(milliseconds(30000));
  const CliResult held = run_cli(command("acquire", file, {"--resource", "job", "--fair"}));
  ASSERT_EQ(held.exit_code, 0) << describe(held);
  const std::string value = parse_output(held)["value"].text;
  // A fair waiter behind it gets the lock once it is released (run waits in
  // line; the release wakes it).
  const auto ran = work_ / "ran";
  CliProcess waiter(
      command("run", file,
              {"--resource", "job", "--fair", "--wait", "10000", "--", "touch", ran.string()}));
  ASSERT_TRUE(eventually([&] {
    std::size_t queued = 0;
    for (std::size_t i = 0; i < cluster_.size(); ++i) {
      if (cluster_.node(i).probe().command({"ZCARD", "redlock:queue:job"}).integer == 1) ++queued;
    }
    return queued >= 3;
  })) << "the waiter is not in line";
  EXPECT_FALSE(std::filesystem::exists(ran));
  const CliResult released =
      run_cli(command("release", file, {"--resource", "job", "--value", value}));
  EXPECT_EQ(released.exit_code, 0) << describe(released);
  EXPECT_EQ(waiter.wait().exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(ran));
}

TEST_F(LockKindsTest, KindUsageErrorsExit64) {
  const auto file = config();
  const auto ran = work_ / "ran";
  struct Case {
    std::vector<std::string> arguments;
    std::string message;
  };
  std::vector<std::string> many{"acquire"};
  for (int i = 0; i < 65; ++i) many.insert(many.end(), {"--resource", "r" + std::to_string(i)});
  const std::vector<Case> cases{
      {{"run", "--semaphore", "s", "--permits", "2", "--resource", "r", "--", "touch",
        ran.string()},
       "--semaphore and --resource exclude each other"},
      {{"acquire", "--resource", "r", "--permits", "2"}, "--permits K is the count of a semaphore"},
      {{"acquire", "--semaphore", "s", "--permits", "2", "--permit", "1"},
       "--permit is not an option of `redlock acquire`"},
      {{"run", "--semaphore", "s", "--permits", "2", "--permit", "0", "--", "touch", ran.string()},
       "--permit is not an option of `redlock run`"},
      {{"release", "--semaphore", "s", "--permit", "2", "--permits", "2", "--value", "v"},
       "--permit 2 is not a permit of a 2-permit semaphore"},
      {{"extend", "--semaphore", "s", "--permit", "5", "--permits", "3", "--value", "v"},
       "--permit 5 is not a permit of a 3-permit semaphore"},
      {{"acquire", "--semaphore", "s", "--permits", "0"},
       "--permits: expected a whole number from 1 to 1024"},
      {{"run", "--semaphore", "s", "--permits", "1025", "--", "touch", ran.string()},
       "--permits: expected a whole number from 1 to 1024"},
      {{"acquire", "--semaphore", "s"}, "--semaphore S needs --permits K"},
      {{"extend", "--semaphore", "s", "--permit", "0", "--value", "v"},
       "--semaphore S needs --permits K to extend"},
      {{"release", "--semaphore", "s", "--value", "v"}, "--semaphore S needs --permit I"},
      {{"acquire", "--resource", "a", "--resource", "a"}, "--resource \"a\" given twice"},
      {many, "--resource given more than 64 times"},
      {{"status", "--resource", "a", "--resource", "b"}, "--resource given more than once"},
      {{"acquire", "--semaphore", "s", "--permits", "2", "--shared"},
       "--shared takes the read side of a resource's read-write lock"},
      {{"run", "--resource", "a", "--resource", "b", "--shared", "--", "touch", ran.string()},
       "--shared takes the read side of one resource"},
      {{"status", "--resource", "a", "--shared"}, "--shared is not an option of `redlock status`"},
      {{"acquire", "--semaphore", "s", "--permits", "2", "--fair"},
       "--fair waits in line for one resource"},
      {{"acquire", "--resource", "a", "--shared", "--fair"},
       "--fair and --shared exclude each other"},
      {{"release", "--resource", "a", "--value", "v", "--fair"},
       "--fair is not an option of `redlock release`"},
  };
  for (const Case& test_case : cases) {
    std::vector<std::string> arguments = test_case.arguments;
    arguments.insert(arguments.begin() + 1, {"--config", file.string()});
    const CliResult result = run_cli(arguments);
    EXPECT_EQ(result.exit_code, 64) << test_case.message << "\n" << describe(result);
    EXPECT_NE(result.err.find(test_case.message), std::string::npos) << test_case.message << "\n"
                                                                     << result.err;
    EXPECT_EQ(lines_of(result.err).size(), 1U) << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
  EXPECT_FALSE(std::filesystem::exists(ran));
  // Nothing reached a node.
  for (std::size_t i = 0; i < cluster_.size(); ++i) {
    EXPECT_TRUE(cluster_.node(i).probe().keys("redlock:*").empty()) << "node " << i;
  }
}

}  // namespace
}  // namespace redlock::test
