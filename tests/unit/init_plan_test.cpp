// `redlock init`'s decision (protocol/init_plan.hpp): a quorum is declared
// brand-new only when a majority answered and no node that answered shows
// a sign of use.
#include "protocol/init_plan.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace redlock::detail {
namespace {

InitProbe empty(std::string name) {
  InitProbe probe;
  probe.name = std::move(name);
  probe.answered = true;
  return probe;
}

InitProbe silent(std::string name) {
  InitProbe probe;
  probe.name = std::move(name);
  probe.error = "connect: connection refused";
  return probe;
}

InitProbe first_init(std::string name) {
  InitProbe probe = empty(std::move(name));
  probe.marked = true;
  probe.first_init_marker = true;
  return probe;
}

std::string joined(const InitPlan& plan) {
  std::string text;
  for (const std::string& line : plan.refusals) text += line + "\n";
  return text;
}

TEST(InitPlan, AMajorityOfEmptyOrFirstInitNodesIsDeclaredOnEveryNodeThatAnswered) {
  const InitPlan plan = plan_init({first_init("n0"), empty("n1"), silent("n2")});
  EXPECT_TRUE(plan.declare) << joined(plan);
  EXPECT_EQ(plan.targets, (std::vector<std::size_t>{0, 1}));
}

TEST(InitPlan, FewerThanAMajorityAnsweringIsRefusedNamingTheSilentNodes) {
  const InitPlan plan = plan_init({empty("n0"), silent("n1"), silent("n2")});
  EXPECT_FALSE(plan.declare);
  EXPECT_TRUE(plan.targets.empty());
  const std::string text = joined(plan);
  EXPECT_NE(text.find("only 1 of 3 nodes answered; 2 must"), std::string::npos) << text;
  EXPECT_NE(text.find("node n1: connect: connection refused"), std::string::npos) << text;
  EXPECT_NE(text.find("node n2: "), std::string::npos) << text;
}

TEST(InitPlan, AnySignOfUseIsRefusedNamingTheNodeAndWhatItHolds) {
  InitProbe used = empty("n1");
  used.marked = true;  // a marker of a quorum in use
  InitProbe counters = empty("n2");
  counters.has_counters = true;
  counters.has_locks = true;
  const InitPlan plan = plan_init({first_init("n0"), used, counters});
  EXPECT_FALSE(plan.declare);
  const std::string text = joined(plan);
  EXPECT_NE(text.find("node n1 holds an identity marker of a quorum in use"), std::string::npos)
      << text;
  EXPECT_NE(text.find("node n2 holds fence counters, lock keys"), std::string::npos) << text;
  EXPECT_NE(text.find("not brand-new"), std::string::npos) << text;
}

TEST(InitPlan, AnEmptyNodeBesideNodesInUseIsARestartForRecoveryNotInit) {
  InitProbe in_use = empty("n0");
  in_use.marked = true;
  InitProbe also = empty("n1");
  also.marked = true;
  const InitPlan plan = plan_init({in_use, also, empty("n2")});
  EXPECT_FALSE(plan.declare);
  EXPECT_NE(joined(plan).find("the recovery round brings it back, not init"), std::string::npos)
      << joined(plan);
}

}  // namespace
}  // namespace redlock::detail
