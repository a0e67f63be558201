#include "protocol/recovery_plan.hpp"

#include <algorithm>
#include <map>

#include "protocol/quorum.hpp"

namespace redlock::detail {

namespace {

bool blank(const NodeProbe& probe) {
  return probe.answered && !probe.marked && !probe.has_locks && probe.fence.empty();
}

FenceEntries merge_max(const std::vector<NodeProbe>& probes, bool marked_only,
                       bool merged_only = false) {
  std::map<std::string, std::uint64_t> merged;
  for (const NodeProbe& probe : probes) {
    if (!probe.answered || (marked_only && !probe.marked)) continue;
    if (merged_only && probe.unmerged) continue;
    for (const auto& [field, value] : probe.fence) {
      auto& slot = merged[field];
      slot = std::max(slot, value);
    }
  }
  return {merged.begin(), merged.end()};
}

// Nodes recovered with a delay take the counters of the others once more
// when the delay is over: a fence round or ticket draw in flight at the
// node's crash may have counted an answer the node gave before it, and
// every such round ended within the delay (max_ttl), storing its value
// on a majority that, without this node, still meets any N - majority + 1
// other nodes. Sources are nodes that need no second merge themselves.
RecoveryPlan plan_second_merge(const std::vector<NodeProbe>& probes) {
  RecoveryPlan plan;
  std::size_t sources = 0;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const NodeProbe& probe = probes[i];
    if (!probe.answered || !probe.marked) continue;
    if (!probe.unmerged) {
      ++sources;
    } else if (!probe.recovering) {
      plan.targets.push_back(i);
    }
  }
  if (plan.targets.empty()) {
    plan.reason = "every node that answered carries its identity marker";
    return plan;
  }
  const std::size_t needed = recovery_sources_needed(probes.size());
  if (sources < needed) {
    plan.action = RecoveryAction::wait;
    plan.reason = "recovered after data loss; its second counter merge needs " +
                  std::to_string(needed) + " nodes that need none, " + std::to_string(sources) +
                  " answered";
    plan.targets.clear();
    return plan;
  }
  plan.action = RecoveryAction::remerge;
  plan.merged_fence = merge_max(probes, true, true);
  plan.reason = "recovered after data loss: fence counters merged again from " +
                std::to_string(sources) + " nodes once its delay was over";
  return plan;
}

}  // namespace

std::size_t recovery_sources_needed(std::size_t nodes) noexcept {
  return nodes - majority(nodes) + 1;
}

RecoveryPlan plan_recovery(const std::vector<NodeProbe>& probes) {
  RecoveryPlan plan;
  const std::size_t nodes = probes.size();
  std::size_t answered = 0;
  std::size_t marked = 0;
  std::vector<std::size_t> unmarked;
  for (std::size_t i = 0; i < nodes; ++i) {
    if (!probes[i].answered) continue;
    ++answered;
    if (probes[i].marked) {
      ++marked;
    } else {
      unmarked.push_back(i);
    }
  }
  if (unmarked.empty()) return plan_second_merge(probes);
  plan.targets = unmarked;

  if (marked == 0) {
    const bool all_blank = std::all_of(unmarked.begin(), unmarked.end(),
                                       [&](std::size_t i) { return blank(probes[i]); });
    if (answered < majority(nodes)) {
      plan.action = RecoveryAction::wait;
      plan.reason = "no node carries an identity marker and only " + std::to_string(answered) +
                    " of " + std::to_string(nodes) + " answered; waiting for a majority";
      plan.targets.clear();
      return plan;
    }
    if (all_blank && answered == nodes) {
      plan.action = RecoveryAction::initialise;
      plan.reason = "brand-new quorum: every node answered and is empty";
      return plan;
    }
    if (all_blank) {
      // A majority that lost its data while the rest are unreachable looks
      // just like a brand-new quorum: only every node's answer tells them
      // apart. Marked now, but with the delay.
      plan.action = RecoveryAction::recover;
      plan.delayed = true;
      plan.first_init = true;
      for (std::size_t i = 0; i < probes.size(); ++i) {
        if (!probes[i].answered) plan.silent.push_back(i);
      }
      plan.reason = "every node that answered is empty, but only " + std::to_string(answered) +
                    " of " + std::to_string(nodes) +
                    " answered (a majority that lost its data looks the same): recovering with "
                    "a delay";
      return plan;
    }
    // Data but no markers anywhere: a quorum used without the defence, or a
    // majority that lost its data. Not guessed: treat every node as
    // recovering — counters merged, no grants for max_ttl — and say so.
    plan.action = RecoveryAction::recover;
    plan.delayed = true;
    plan.merged_fence = merge_max(probes, false);
    plan.reason =
        "no node carries an identity marker but some hold lock data (used without the "
        "amnesia defence, or a majority lost its data): recovering all with a delay";
    return plan;
  }

  const std::size_t needed = recovery_sources_needed(nodes);
  if (marked < needed) {
    plan.action = RecoveryAction::wait;
    plan.reason = "lost its data; recovery needs the counters of " + std::to_string(needed) +
                  " marked nodes, " + std::to_string(marked) + " answered";
    plan.targets.clear();
    return plan;
  }
  plan.action = RecoveryAction::recover;
  plan.delayed = true;
  plan.merged_fence = merge_max(probes, true);
  plan.reason = "lost its data: fence counters restored from " + std::to_string(marked) +
                " nodes; no grants until the longest lock could have expired";
  return plan;
}

}  // namespace redlock::detail
