#include "first_use.hpp"

#include <optional>
#include <string>

#include "cluster_probe.hpp"
#include "node_probe.hpp"
#include "report.hpp"
#include "scripts/key_space.hpp"
#include "text/escape.hpp"

namespace redlock::cli {
namespace {

// The first use's story `node` keeps for `resource`'s keys, if it waits
// after one.
std::optional<std::string> story_of(const NodeConfig& node, const QuorumConfig& config,
                                    const std::string& resource) {
  const Milliseconds timeout = config.lock.connect_timeout;
  if (node.cluster.empty()) {
    return probe_node(node, timeout, config.lock, resource, detail::key_layout(config))
        .first_use_note;
  }
  const ClusterReport cluster = probe_cluster(node, timeout, config.lock, resource);
  if (!cluster.resource_shard) return std::nullopt;
  return cluster.shards[*cluster.resource_shard].node.first_use_note;
}

}  // namespace

void print_first_use_note(const QuorumConfig& config, const std::vector<NodeOutcome>& nodes,
                          const std::string& resource) {
  for (const NodeOutcome& outcome : nodes) {
    // Within a recovery delay (an unmarked node reports no time left).
    if (outcome.status != NodeStatus::recovering || outcome.holder_ttl_ms < 0) continue;
    if (outcome.node >= config.nodes.size()) continue;
    const std::optional<std::string> story = story_of(config.nodes[outcome.node], config, resource);
    if (!story) continue;
    print_error("note: " + detail::escape_text(*story) +
                ". If this quorum is brand-new, `redlock init` declares it so; next step: "
                "docs/operations.md#first-use");
    return;
  }
}

}  // namespace redlock::cli
