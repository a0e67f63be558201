// The scenario file format: the catalog parses, errors point at
// file:line:col, targets and expectations mean what docs/chaos.md says.
#include "scenario.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace redlock::chaos {
namespace {

ScenarioParseResult parse(const std::string& text) { return parse_scenario(text, "s.toml"); }

TEST(ScenarioCatalog, EveryFileParsesAndNamesItsFile) {
  const auto files = catalog_files(CHAOS_SCENARIO_DIR);
  ASSERT_GE(files.size(), 19u);
  for (const auto& file : files) {
    const ScenarioParseResult result = load_scenario(file);
    ASSERT_TRUE(result.scenario) << result.error;
    EXPECT_EQ(result.scenario->name, file.stem().string()) << "a scenario is named after its file";
    EXPECT_FALSE(result.scenario->description.empty()) << file;
    EXPECT_FALSE(result.scenario->variants.empty()) << file;
  }
}

TEST(ScenarioCatalog, KleppmannScenariosExpectTheirViolationsOnlyUnfenced) {
  const ScenarioParseResult pause =
      load_scenario(std::string(CHAOS_SCENARIO_DIR) + "/s07-pause-before-write.toml");
  ASSERT_TRUE(pause.scenario) << pause.error;
  const Expectations& unfenced = pause.scenario->expectations.at(Variant::unfenced);
  const Expectations& fenced = pause.scenario->expectations.at(Variant::fenced);
  EXPECT_EQ(unfenced.at(static_cast<std::size_t>(invariant_index("C8"))), Expectation::violated);
  for (Expectation expectation : fenced) EXPECT_EQ(expectation, Expectation::holds);
}

TEST(ScenarioCatalog, TheLockKindScenariosExpectViolationsOnlyWhereTheDefenceIsMissing) {
  const std::pair<std::string, LockKind> cases[] = {
      {"s25-semaphore-pause-before-write", LockKind::semaphore},
      {"s26-semaphore-restart-without-persistence", LockKind::semaphore},
      {"s27-semaphore-restart-with-recovery", LockKind::semaphore},
      {"s28-semaphore-kill-two-nodes", LockKind::semaphore},
      {"s29-multi-pause-before-write", LockKind::multi},
      {"s30-multi-restart-without-persistence", LockKind::multi},
      {"s31-multi-restart-with-recovery", LockKind::multi},
      {"s32-multi-kill-two-nodes", LockKind::multi},
  };
  for (const auto& [name, kind] : cases) {
    const ScenarioParseResult result =
        load_scenario(std::string(CHAOS_SCENARIO_DIR) + "/" + name + ".toml");
    ASSERT_TRUE(result.scenario) << result.error;
    EXPECT_EQ(result.scenario->lock.kind, kind) << name;
    const bool demonstrates = name.find("pause") != std::string::npos ||
                              name.find("without-persistence") != std::string::npos;
    for (const auto& [variant, expectations] : result.scenario->expectations) {
      const bool expects_violation = std::find(expectations.begin(), expectations.end(),
                                               Expectation::violated) != expectations.end();
      // The pause is Kleppmann's case: only fencing stops it.
      const bool should =
          name.find("pause") != std::string::npos ? variant == Variant::unfenced : demonstrates;
      EXPECT_EQ(expects_violation, should) << name << " " << to_string(variant);
    }
  }
}

TEST(ScenarioCatalog, TheReentrantScenariosExpectViolationsOnlyOfTheUnfencedPauseBeforeAWrite) {
  const std::string names[] = {
      "s33-reentrant-pause-before-write",
      "s34-reentrant-pause-in-nested-hold",
      "s35-reentrant-restart-with-recovery",
      "s36-reentrant-kill-two-nodes",
  };
  for (const std::string& name : names) {
    const ScenarioParseResult result =
        load_scenario(std::string(CHAOS_SCENARIO_DIR) + "/" + name + ".toml");
    ASSERT_TRUE(result.scenario) << result.error;
    EXPECT_TRUE(result.scenario->lock.reentrant) << name;
    for (const auto& [variant, expectations] : result.scenario->expectations) {
      // Only a stop between the check and the write beats the loss signal;
      // only fencing stops what it writes.
      const bool should =
          name == "s33-reentrant-pause-before-write" && variant == Variant::unfenced;
      for (const char* id : {"C4", "C8", "C14"}) {
        EXPECT_EQ(expectations.at(static_cast<std::size_t>(invariant_index(id))),
                  should ? Expectation::violated : Expectation::holds)
            << name << " " << to_string(variant) << " " << id;
      }
      EXPECT_EQ(std::count(expectations.begin(), expectations.end(), Expectation::holds),
                kInvariantCount - (should ? 3 : 0))
          << name << " " << to_string(variant);
    }
  }
}

TEST(ScenarioParse, DefaultsWhenOnlyANameIsGiven) {
  const ScenarioParseResult result = parse("name = \"x\"\n");
  ASSERT_TRUE(result.scenario) << result.error;
  EXPECT_EQ(result.scenario->nodes.count, 5);
  EXPECT_FALSE(result.scenario->nodes.tls);
  EXPECT_EQ(result.scenario->clients.count, 2);
  ASSERT_EQ(result.scenario->variants.size(), 2u);
  EXPECT_EQ(result.scenario->expectations.size(), 2u);
}

TEST(ScenarioParse, ReadsEverySectionAndSortsTheSchedule) {
  const ScenarioParseResult result = parse(R"(
name = "full"
description = "d"
duration_ms = 1234
variants = ["fenced"]
[nodes]
count = 3
persistence = "everysec"
tls = true
[lock]
ttl_ms = 700
retry_delay_ms = 5
renew = true
max_renewals = 4
release_at_majority = true
[clients]
count = 3
critical_section_ms = 7
[[clients.override]]
index = 2
clock_rate = 0.5
[[nemesis]]
at_ms = 900
action = "clock-rate"
target = "n1"
rate = 1.5
duration_ms = 100
[[nemesis]]
at_ms = 100
action = "link"
target = "c*->n2"
mode = "delay"
direction = "down"
delay_ms = 30
[expect.fenced]
violated = ["C3"]
may = ["C8"]
)");
  ASSERT_TRUE(result.scenario) << result.error;
  const Scenario& s = *result.scenario;
  EXPECT_EQ(s.duration, Milliseconds(1234));
  EXPECT_EQ(s.nodes.persistence, NodePersistence::everysec);
  EXPECT_TRUE(s.nodes.tls);
  EXPECT_EQ(s.lock.ttl, Milliseconds(700));
  EXPECT_TRUE(s.lock.renew);
  EXPECT_TRUE(s.lock.release_at_majority);
  EXPECT_EQ(s.clients.spec(2).clock_rate, 0.5);
  EXPECT_EQ(s.clients.spec(2).critical_section, Milliseconds(7)) << "overrides start from defaults";
  EXPECT_EQ(s.clients.spec(0).clock_rate, 1.0);
  ASSERT_EQ(s.nemesis.size(), 2u);
  EXPECT_EQ(s.nemesis[0].action, NemesisAction::link);
  EXPECT_EQ(s.nemesis[0].direction, Direction::down);
  EXPECT_EQ(s.nemesis[1].rate, 1.5);
  ASSERT_EQ(s.variants.size(), 1u);
  const Expectations& fenced = s.expectations.at(Variant::fenced);
  EXPECT_EQ(fenced[2], Expectation::violated);
  EXPECT_EQ(fenced[7], Expectation::may);
  EXPECT_EQ(fenced[0], Expectation::holds);
}

TEST(ScenarioParse, UnknownKeyIsPinnedToItsLineAndColumn) {
  const ScenarioParseResult result = parse("name = \"x\"\n[lock]\nttl_ms = 5\n  tll = 3\n");
  ASSERT_FALSE(result.scenario);
  EXPECT_EQ(result.error.rfind("s.toml:4:3: tll: unknown key in [lock]", 0), 0u) << result.error;
}

TEST(ScenarioParse, BadEnumNamesTheChoices) {
  const ScenarioParseResult result =
      parse("name = \"x\"\n[[nemesis]]\naction = \"explode\"\ntarget = \"n0\"\n");
  ASSERT_FALSE(result.scenario);
  EXPECT_NE(result.error.find("s.toml:3:"), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("power-loss"), std::string::npos) << result.error;
}

TEST(ScenarioParse, TargetOutOfRangeIsAnError) {
  const ScenarioParseResult result =
      parse("name = \"x\"\n[nodes]\ncount = 3\n[[nemesis]]\naction = \"kill\"\ntarget = \"n3\"\n");
  ASSERT_FALSE(result.scenario);
  EXPECT_NE(result.error.find("s.toml:4:"), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("\"n0\"..\"n2\""), std::string::npos) << result.error;
}

TEST(ScenarioParse, PausePointNeedsAClient) {
  const ScenarioParseResult result = parse(
      "name = \"x\"\n[[nemesis]]\naction = \"pause\"\ntarget = \"n1\"\npoint = \"before-write\"\n");
  ASSERT_FALSE(result.scenario);
  EXPECT_NE(result.error.find("needs a client"), std::string::npos) << result.error;
}

TEST(ScenarioParse, LinkStepReadsTheTimeoutModeAndAProgressBudget) {
  const ScenarioParseResult result = parse(R"(
name = "x"
[[nemesis]]
action = "link"
target = "c0->n*"
mode = "timeout"
duration_ms = 500
progress_within_ms = 800
)");
  ASSERT_TRUE(result.scenario) << result.error;
  ASSERT_EQ(result.scenario->nemesis.size(), 1u);
  const NemesisStep& step = result.scenario->nemesis[0];
  EXPECT_EQ(step.mode, LinkMode::timeout);
  EXPECT_EQ(step.progress_within, Milliseconds(800));
}

TEST(ScenarioParse, ProgressBudgetNeedsALinkThatEndsByItself) {
  // Without duration_ms the link ends only at the final heal, which
  // leaves the clients no time to show progress.
  const ScenarioParseResult forever = parse(
      "name = \"x\"\n[[nemesis]]\naction = \"link\"\ntarget = \"c0->n1\"\nmode = "
      "\"blackhole\"\nprogress_within_ms = 800\n");
  ASSERT_FALSE(forever.scenario);
  EXPECT_NE(forever.error.find("s.toml:2:"), std::string::npos) << forever.error;
  EXPECT_NE(forever.error.find("progress_within_ms needs a link step with duration_ms"),
            std::string::npos)
      << forever.error;

  const ScenarioParseResult node_fault = parse(
      "name = \"x\"\n[[nemesis]]\naction = \"kill\"\ntarget = \"n1\"\nduration_ms = 100\n"
      "progress_within_ms = 800\n");
  ASSERT_FALSE(node_fault.scenario);
  EXPECT_NE(node_fault.error.find("progress_within_ms needs a link step"), std::string::npos)
      << node_fault.error;
}

TEST(ScenarioParse, UnknownInvariantIsAnError) {
  const ScenarioParseResult result =
      parse("name = \"x\"\n[expect.unfenced]\nviolated = [\"C18\"]\n");
  ASSERT_FALSE(result.scenario);
  EXPECT_NE(result.error.find("s.toml:3:"), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("C18"), std::string::npos) << result.error;
}

TEST(ScenarioParse, InvalidTomlHasAPosition) {
  const ScenarioParseResult result = parse("name = \"x\"\n[lock\n");
  ASSERT_FALSE(result.scenario);
  EXPECT_EQ(result.error.rfind("s.toml:2:", 0), 0u) << result.error;
}

// What toml++ 3.3.0 itself cannot take (a stack overflow, undefined
// behaviour; docs/testing.md, "Fuzzing") is refused before it is called, by
// the quorum file's pre-scan; corpus entries deep-dotted-header.toml and
// non-ascii-bare-key.toml of fuzz/fuzz_scenario.
TEST(ScenarioParse, WhatTomlPlusPlusCannotTakeIsRefusedFirst) {
  std::string deep = "name = \"deep\"\n[a";
  for (int i = 0; i < 40000; ++i) deep += ".a";
  deep += "]\n";
  for (const std::string& text : {deep, std::string("name = \"x\"\n\xC3\xA9t\xC3\xA9 = 1\n")}) {
    const ScenarioParseResult result = parse(text);
    ASSERT_FALSE(result.scenario);
    EXPECT_NE(result.error.find("s.toml:2:"), std::string::npos) << result.error;
    EXPECT_NE(result.error.find("invalid TOML"), std::string::npos) << result.error;
  }
}

TEST(ScenarioParse, MissingNameIsAnError) {
  const ScenarioParseResult result = parse("duration_ms = 5\n");
  ASSERT_FALSE(result.scenario);
  EXPECT_NE(result.error.find("name"), std::string::npos) << result.error;
}

TEST(ScenarioLockKind, AMutexByDefaultWithOneStorage) {
  const ScenarioParseResult result = parse("name = \"x\"\n");
  ASSERT_TRUE(result.scenario) << result.error;
  EXPECT_EQ(result.scenario->lock.kind, LockKind::mutex);
  EXPECT_EQ(result.scenario->resources_of(1), (std::vector<std::string>{"chaos"}));
  EXPECT_EQ(resource_keys(*result.scenario),
            (std::vector<ResourceKeys>{{"chaos:counter", "chaos:log"}}));
}

TEST(ScenarioLockKind, ASemaphoreHasOneStoragePerPermit) {
  const ScenarioParseResult result =
      parse("name = \"x\"\n[lock]\npermits = 3\nkind = \"semaphore\"\n");
  ASSERT_TRUE(result.scenario) << result.error;
  EXPECT_EQ(result.scenario->lock.kind, LockKind::semaphore);
  EXPECT_EQ(result.scenario->lock.permits, 3u);
  const auto keys = resource_keys(*result.scenario);
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(keys[2], (ResourceKeys{"chaos:counter:permit2", "chaos:log:permit2"}));
}

TEST(ScenarioLockKind, AMultiLockSetPerClientWithOneStoragePerResource) {
  const ScenarioParseResult result = parse(R"(
name = "x"
[clients]
count = 3
[[clients.override]]
index = 1
resources = ["c"]
[[clients.override]]
index = 2
resources = ["b", "c"]
think_ms = 4
[lock]
kind = "multi"
resources = ["a", "b"]
)");
  ASSERT_TRUE(result.scenario) << result.error;
  const Scenario& scenario = *result.scenario;
  EXPECT_EQ(scenario.resources_of(0), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(scenario.resources_of(1), (std::vector<std::string>{"c"}));
  EXPECT_EQ(scenario.resources_of(2), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(scenario.clients.spec(2).think.count(), 4);
  EXPECT_EQ(scenario.all_resources(), (std::vector<std::string>{"a", "b", "c"}));
  const auto keys = resource_keys(scenario);
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(keys[1], (ResourceKeys{"chaos:counter:b", "chaos:log:b"}));
}

TEST(ScenarioLockKind, KeysOfAnotherKindOrMissingOnesArePinned) {
  const std::pair<std::string, std::string> cases[] = {
      {"name = \"x\"\n[lock]\nkind = \"semaphore\"\n",
       "s.toml:3:8: lock.kind: a semaphore needs lock.permits"},
      {"name = \"x\"\n[lock]\npermits = 2\n", "s.toml:3:11: lock.permits: only a semaphore"},
      {"name = \"x\"\n[lock]\npermits = 0\nkind = \"semaphore\"\n",
       "s.toml:3:11: lock.permits: expected an integer from 1 to 1024"},
      {"name = \"x\"\n[lock]\nkind = \"multi\"\n",
       "s.toml:3:8: lock.kind: a lock over several resources needs lock.resources"},
      {"name = \"x\"\n[lock]\nkind = \"lease\"\n",
       "s.toml:3:8: lock.kind: \"lease\" is not one of"},
      {"name = \"x\"\n[lock]\nresources = [\"a\"]\n",
       "s.toml:3:13: lock.resources: only kind = \"multi\""},
      {"name = \"x\"\n[[clients.override]]\nindex = 0\nresources = [\"a\"]\n[lock]\npermits = 2\n"
       "kind = \"semaphore\"\n",
       "s.toml:4:13: clients.override.resources: only kind = \"multi\""},
      {"name = \"x\"\n[lock]\nkind = \"multi\"\nresources = [\"a\", \"b\", \"a\"]\n",
       "s.toml:4:24: lock.resources: \"a\" is named twice"},
      {"name = \"x\"\n[lock]\nkind = \"multi\"\nresources = []\n",
       "s.toml:4:13: lock.resources: expected an array of 1 to 64"},
      {"name = \"x\"\n[lock]\nkind = \"multi\"\nresources = [\"a\", \"\"]\n",
       "s.toml:4:19: lock.resources: expected a non-empty string"},
  };
  for (const auto& [text, error] : cases) {
    const ScenarioParseResult result = parse(text);
    ASSERT_FALSE(result.scenario) << text;
    EXPECT_EQ(result.error.rfind(error, 0), 0u) << text << " -> " << result.error;
  }
}

TEST(ScenarioReentrant, OffByDefaultAndReadOnAMutex) {
  const ScenarioParseResult plain = parse("name = \"x\"\n");
  ASSERT_TRUE(plain.scenario) << plain.error;
  EXPECT_FALSE(plain.scenario->lock.reentrant);
  const ScenarioParseResult reentrant = parse(
      "name = \"x\"\n[lock]\nreentrant = true\n[[nemesis]]\naction = \"pause\"\ntarget = "
      "\"c0\"\npoint = \"after-nest\"\n");
  ASSERT_TRUE(reentrant.scenario) << reentrant.error;
  EXPECT_TRUE(reentrant.scenario->lock.reentrant);
  EXPECT_EQ(reentrant.scenario->lock.kind, LockKind::mutex);
  ASSERT_EQ(reentrant.scenario->nemesis.size(), 1u);
  EXPECT_EQ(reentrant.scenario->nemesis[0].point, PausePoint::after_nest);
  EXPECT_EQ(to_string(PausePoint::after_nest), "after-nest");
}

TEST(ScenarioReentrant, OtherKindsAndPointsWithoutANestedHoldArePinned) {
  const std::pair<std::string, std::string> cases[] = {
      {"name = \"x\"\n[lock]\nreentrant = true\nkind = \"semaphore\"\npermits = 2\n",
       "s.toml:3:13: lock.reentrant: reentrant holds run on kind = \"mutex\" only"},
      {"name = \"x\"\n[lock]\nkind = \"multi\"\nresources = [\"a\"]\nreentrant = true\n",
       "s.toml:5:13: lock.reentrant: reentrant holds run on kind = \"mutex\" only"},
      {"name = \"x\"\n[lock]\nreentrant = 1\n", "s.toml:3:13: lock.reentrant: expected"},
      {"name = \"x\"\n[[nemesis]]\naction = \"pause\"\ntarget = \"c0\"\npoint = \"after-nest\"\n",
       "s.toml:2:1: nemesis: point \"after-nest\" needs lock.reentrant = true"},
      {"name = \"x\"\n[lock]\nreentrant = true\n[[nemesis]]\naction = \"pause\"\ntarget = "
       "\"c0\"\npoint = \"in-flight\"\n",
       "s.toml:4:1: nemesis: point \"in-flight\" is not available with lock.reentrant"},
  };
  for (const auto& [text, error] : cases) {
    const ScenarioParseResult result = parse(text);
    ASSERT_FALSE(result.scenario) << text;
    EXPECT_EQ(result.error.rfind(error, 0), 0u) << text << " -> " << result.error;
  }
}

TEST(ScenarioClusters, AClusterMemberIsReadWithItsShapeAndItsActions) {
  const ScenarioParseResult result = parse(
      "name = \"x\"\n[nodes]\ncount = 3\nclusters = [0, 2]\nshards = 4\nreplicas = 2\n"
      "cluster_node_timeout_ms = 700\n"
      "[[nemesis]]\naction = \"failover\"\ntarget = \"n2\"\nlag = true\nwhen_holding = 0\n"
      "[[nemesis]]\nat_ms = 10\naction = \"migrate\"\ntarget = \"n0\"\n"
      "[[nemesis]]\nat_ms = 20\naction = \"kill\"\ntarget = \"n0\"\n"
      "[[nemesis]]\nat_ms = 30\naction = \"link\"\ntarget = \"c0->n1\"\nmode = \"blackhole\"\n");
  ASSERT_TRUE(result.scenario) << result.error;
  const NodesSpec& nodes = result.scenario->nodes;
  EXPECT_EQ(nodes.clusters, (std::vector<int>{0, 2}));
  EXPECT_TRUE(nodes.is_cluster(2));
  EXPECT_FALSE(nodes.is_cluster(1));
  EXPECT_EQ(nodes.shards, 4);
  EXPECT_EQ(nodes.replicas, 2);
  EXPECT_EQ(nodes.cluster_node_timeout, Milliseconds(700));
  ASSERT_EQ(result.scenario->nemesis.size(), 4u);
  EXPECT_EQ(result.scenario->nemesis[0].action, NemesisAction::failover);
  EXPECT_TRUE(result.scenario->nemesis[0].lag);
  EXPECT_EQ(result.scenario->nemesis[1].action, NemesisAction::migrate);
  EXPECT_FALSE(result.scenario->nemesis[1].lag);
}

TEST(ScenarioClusters, WhatACatalogClusterMemberCannotTakeIsPinned) {
  const std::string base = "name = \"x\"\n[nodes]\ncount = 3\nclusters = [0]\n";
  const std::pair<std::string, std::string> cases[] = {
      {"name = \"x\"\n[nodes]\ncount = 3\nclusters = [3]\n",
       "s.toml:4:12: nodes.clusters: no node 3 (nodes.count is 3)"},
      {"name = \"x\"\n[nodes]\nclusters = [1, 1]\n",
       "s.toml:3:16: nodes.clusters: node 1 is named twice"},
      {base + "tls = true\n",
       "s.toml:5:7: nodes.tls: cluster members run without TLS in the harness"},
      {base + "[[nemesis]]\naction = \"link\"\ntarget = \"c0->n0\"\nmode = \"blackhole\"\n",
       "s.toml:5:1: nemesis: n0 is a cluster member, whose servers the clients reach directly"},
      {base + "[[nemesis]]\naction = \"link\"\ntarget = \"c0->n*\"\nmode = \"blackhole\"\n",
       "s.toml:5:1: nemesis: n0 is a cluster member"},
      {base + "[[nemesis]]\naction = \"clock-jump\"\ntarget = \"n0\"\ndelta_ms = 5\n",
       "s.toml:5:1: nemesis: n0 is a cluster member: clock-jump acts on single-server nodes only"},
      {base + "[[nemesis]]\naction = \"failover\"\ntarget = \"n1\"\n",
       "s.toml:5:1: nemesis: target must be a cluster member"},
      {base + "replicas = 0\n[[nemesis]]\naction = \"failover\"\ntarget = \"n0\"\n",
       "s.toml:6:1: nemesis: a failover needs nodes.replicas of at least 1"},
      {base + "[[nemesis]]\naction = \"migrate\"\ntarget = \"n0\"\nlag = true\n",
       "s.toml:5:1: nemesis: lag applies to action = \"failover\" only"},
  };
  for (const auto& [text, error] : cases) {
    const ScenarioParseResult result = parse(text);
    ASSERT_FALSE(result.scenario) << text;
    EXPECT_EQ(result.error.rfind(error, 0), 0u) << text << " -> " << result.error;
  }
}

TEST(ScenarioCatalog, TheClusterScenariosExpectViolationsOnlyWithoutTheDefence) {
  const std::pair<std::string, bool> cases[] = {
      {"s50-cluster-failover-with-lag", true},
      {"s51-cluster-failover-with-recovery", false},
      {"s52-cluster-slot-migrated", false},
      {"s53-cluster-shard-master-killed", false},
  };
  for (const auto& [name, demonstrates] : cases) {
    const ScenarioParseResult result =
        load_scenario(std::string(CHAOS_SCENARIO_DIR) + "/" + name + ".toml");
    ASSERT_TRUE(result.scenario) << result.error;
    EXPECT_FALSE(result.scenario->nodes.clusters.empty()) << name;
    EXPECT_EQ(result.scenario->lock.amnesia_defence, !demonstrates) << name;
    for (const auto& [variant, expectations] : result.scenario->expectations) {
      const Expectation exclusion =
          expectations.at(static_cast<std::size_t>(invariant_index("C3")));
      EXPECT_EQ(exclusion, demonstrates ? Expectation::violated : Expectation::holds)
          << name << " " << to_string(variant);
    }
  }
}

TEST(ScenarioTargets, LinksExpandStars) {
  const auto all = parse_link_target("c*->n*", 2, 3);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->clients, (std::vector<int>{0, 1}));
  EXPECT_EQ(all->nodes, (std::vector<int>{0, 1, 2}));
  const auto one = parse_link_target("c1->n2", 2, 3);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->clients, (std::vector<int>{1}));
  EXPECT_EQ(one->nodes, (std::vector<int>{2}));
  const auto resource = parse_link_target("c0->r", 2, 3);
  ASSERT_TRUE(resource);
  EXPECT_TRUE(resource->resource);
  EXPECT_TRUE(resource->nodes.empty());
}

TEST(ScenarioTargets, MalformedOrOutOfRangeTargetsAreRefused) {
  EXPECT_FALSE(parse_link_target("c0-n1", 2, 3));
  EXPECT_FALSE(parse_link_target("c2->n1", 2, 3));
  EXPECT_FALSE(parse_link_target("c0->n3", 2, 3));
  EXPECT_FALSE(parse_node_target("n", 3));
  EXPECT_FALSE(parse_node_target("n-1", 3));
  EXPECT_FALSE(parse_node_target("n1x", 3));
  EXPECT_FALSE(parse_client_target("n1", 3));
  EXPECT_EQ(parse_client_target("c2", 3), 2);
}

TEST(ScenarioJudge, RegressionFailsOnAnUnexpectedViolation) {
  CheckResult result;
  result.verdicts.fill(Verdict::holds);
  result.verdicts[2] = Verdict::violated;
  const Verdicts verdicts = judge(result, Expectations{});
  EXPECT_FALSE(verdicts.regression_ok);
  EXPECT_TRUE(verdicts.demonstration_ok);
  EXPECT_EQ(verdicts.unexpected, (std::vector<std::string>{"C3"}));
}

TEST(ScenarioJudge, DemonstrationFailsWhenAnExpectedViolationDidNotAppear) {
  CheckResult result;
  result.verdicts.fill(Verdict::holds);
  Expectations expectations{};
  expectations[7] = Expectation::violated;
  expectations[2] = Expectation::may;
  const Verdicts verdicts = judge(result, expectations);
  EXPECT_TRUE(verdicts.regression_ok);
  EXPECT_FALSE(verdicts.demonstration_ok);
  EXPECT_EQ(verdicts.missing, (std::vector<std::string>{"C8"}));
}

TEST(ScenarioJudge, MayAcceptsEither) {
  CheckResult result;
  result.verdicts.fill(Verdict::holds);
  result.verdicts[4] = Verdict::violated;
  Expectations expectations{};
  expectations[4] = Expectation::may;
  const Verdicts verdicts = judge(result, expectations);
  EXPECT_TRUE(verdicts.regression_ok);
  EXPECT_TRUE(verdicts.demonstration_ok);
}

}  // namespace
}  // namespace redlock::chaos
