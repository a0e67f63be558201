// What a refused acquire tells an operator whose quorum was first used
// while a node was down (docs/operations.md, "First use"): the nodes then
// wait out max_ttl, which reads like a data-loss incident. The nodes'
// recovering key says what happened (scripts.hpp, kFirstInitRecovering);
// this reads it from the nodes that answered "recovering" and prints it
// with the way out, `redlock init`.
#pragma once

#include <string>
#include <vector>

#include "redlock/config.hpp"
#include "redlock/outcome.hpp"

namespace redlock::cli {

// Prints at most one note; nothing when no node waits after a first use.
// `resource`: the name the lock's keys are under (a lock's resource, a
// semaphore's name), whose slot's recovering key tells the story when the
// quorum names its keys per slot (scripts/key_space.hpp); a cluster
// member is read at the master of that slot.
void print_first_use_note(const QuorumConfig& config, const std::vector<NodeOutcome>& nodes,
                          const std::string& resource);

}  // namespace redlock::cli
