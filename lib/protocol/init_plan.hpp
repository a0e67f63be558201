// `redlock init`: whether a quorum may be declared brand-new (docs/cli.md,
// "redlock init"), pure logic over what each node showed.
//
// A first use of a quorum with a node down marks the nodes that answered
// with the recovery delay, since a majority that lost its data looks the
// same (docs/algorithm.md, "The amnesia defence"). An operator who knows
// the nodes are new may say so; the word is taken only where the nodes show
// no sign of use: no lock key, no fence counter, and no identity marker but
// one a first initialisation that never completed wrote.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace redlock::detail {

// What one node showed `redlock init`.
struct InitProbe {
  std::string name;
  bool answered = false;
  std::string error;               // why it did not answer
  bool marked = false;             // carries an identity marker
  bool first_init_marker = false;  // ... written by an incomplete first initialisation
  bool has_locks = false;          // holds some lock key
  bool has_counters = false;       // its fence hash holds a counter
};

struct InitPlan {
  bool declare = false;              // write the markers on every node that answered
  std::vector<std::size_t> targets;  // those nodes
  // Why not (empty when declare): one line per node that stands in the
  // way, then what to do instead.
  std::vector<std::string> refusals;
};

[[nodiscard]] InitPlan plan_init(const std::vector<InitProbe>& probes);

}  // namespace redlock::detail
