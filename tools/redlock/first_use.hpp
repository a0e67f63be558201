// What a refused acquire tells an operator whose quorum was first used
// while a node was down (docs/operations.md, "First use"): the nodes then
// wait out max_ttl, which reads like a data-loss incident. The nodes'
// recovering key says what happened (scripts.hpp, kFirstInitRecovering);
// this reads it from the nodes that answered "recovering" and prints it
// with the way out, `redlock init`.
#pragma once

#include <vector>

#include "redlock/config.hpp"
#include "redlock/outcome.hpp"

namespace redlock::cli {

// Prints at most one note; nothing when no node waits after a first use.
void print_first_use_note(const QuorumConfig& config, const std::vector<NodeOutcome>& nodes);

}  // namespace redlock::cli
