#include "protocol/init_plan.hpp"

#include "protocol/quorum.hpp"

namespace redlock::detail {

InitPlan plan_init(const std::vector<InitProbe>& probes) {
  InitPlan plan;
  std::size_t answered = 0;
  bool any_in_use = false;
  bool any_empty_unmarked = false;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const InitProbe& probe = probes[i];
    if (!probe.answered) continue;
    ++answered;
    plan.targets.push_back(i);
    std::string held;
    if (probe.marked && !probe.first_init_marker) held = "an identity marker of a quorum in use";
    if (probe.has_counters) held += std::string(held.empty() ? "" : ", ") + "fence counters";
    if (probe.has_locks) held += std::string(held.empty() ? "" : ", ") + "lock keys";
    if (!held.empty()) {
      any_in_use = true;
      plan.refusals.push_back("node " + probe.name + " holds " + held);
    } else if (!probe.marked) {
      any_empty_unmarked = true;
    }
  }
  const std::size_t needed = majority(probes.size());
  if (answered < needed) {
    plan.refusals.push_back("only " + std::to_string(answered) + " of " +
                            std::to_string(probes.size()) + " nodes answered; " +
                            std::to_string(needed) + " must");
    for (const InitProbe& probe : probes) {
      if (!probe.answered) plan.refusals.push_back("node " + probe.name + ": " + probe.error);
    }
  }
  if (any_in_use && any_empty_unmarked) {
    plan.refusals.push_back(
        "an empty node beside nodes in use has lost its data (a restart without it): the "
        "recovery round brings it back, not init");
  } else if (any_in_use) {
    plan.refusals.push_back("the quorum has been used: it is not brand-new");
  }
  plan.declare = plan.refusals.empty();
  if (!plan.declare) plan.targets.clear();
  return plan;
}

}  // namespace redlock::detail
