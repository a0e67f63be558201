// What to do about nodes that lost their data (docs/algorithm.md, "The amnesia defence"): pure
// logic over what a probe of every node found.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace redlock::detail {

using FenceEntries = std::vector<std::pair<std::string, std::uint64_t>>;

// One node's state, as the probe script reports it.
struct NodeProbe {
  bool answered = false;
  bool marked = false;      // carries the identity marker
  bool has_locks = false;   // holds some lock key
  bool recovering = false;  // within its recovery delay
  bool unmerged = false;    // recovered with a delay, its second merge not run yet
  FenceEntries fence;       // its fence hash (counters only)
};

enum class RecoveryAction {
  none,        // every node that answered carries its marker
  initialise,  // a brand-new quorum (every node answered, all empty): mark
               // them, no delay
  recover,     // mark the unmarked nodes after merging fence counters, with
               // a delay of max_ttl before they may grant again
  remerge,     // merge the counters again into nodes recovered with a delay
               // whose delay is over (read after it was seen over)
  wait,        // not enough known to act safely; try again later
};

struct RecoveryPlan {
  RecoveryAction action = RecoveryAction::none;
  std::vector<std::size_t> targets;  // the nodes to write
  FenceEntries merged_fence;         // field-wise max over the sources
  bool delayed = false;              // set the recovering key for max_ttl
  // A first initialisation while some nodes did not answer (`silent`):
  // its markers are tagged (scripts.hpp, first_init_marker_value) and its
  // recovering key says so, for `redlock init`.
  bool first_init = false;
  std::vector<std::size_t> silent;
  std::string reason;  // for reports and node outcomes
};

// How many nodes, other than the ones that lost data, must be read so that
// every token acknowledged by a majority is seen: N - majority + 1.
[[nodiscard]] std::size_t recovery_sources_needed(std::size_t nodes) noexcept;

[[nodiscard]] RecoveryPlan plan_recovery(const std::vector<NodeProbe>& probes);

}  // namespace redlock::detail
