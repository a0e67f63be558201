// `redlock status`'s view of a quorum member that is a Redis Cluster
// (docs/cli.md, "redlock status"): the slot map one seed answers, and each
// master it names asked as a single node is (node_probe.hpp). Fresh
// blocking connections, as for single nodes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "node_probe.hpp"
#include "protocol/slot_map.hpp"
#include "redlock/config.hpp"

namespace redlock::cli {

struct ShardReport {
  // The master as the map names it, and what it answered as a node.
  detail::ShardEndpoint master;
  NodeReport node;
  // The slot ranges the map gives it, and how many slots they hold.
  std::vector<std::pair<std::uint16_t, std::uint16_t>> ranges;
  std::size_t slots = 0;
};

struct ClusterReport {
  std::string name;
  // The seed whose CLUSTER SLOTS answer is the map; empty when none
  // answered (then `error` says why, for each seed tried).
  std::string seed;
  std::string error;
  std::vector<ShardReport> shards;
  // Slots the map gives some master.
  std::size_t covered = 0;
  // With a resource: the shard whose master serves its lock key's slot.
  std::optional<std::size_t> resource_shard;

  // The map read, every slot covered, and every master answered.
  [[nodiscard]] bool up() const;
  // The map read, and some master answered.
  [[nodiscard]] bool answered() const;
};

// Reads `member`'s map from its seeds, in order: the shards, their ranges
// and the resource's shard, no master asked (each shard's `node` is left
// as it is default-built).
[[nodiscard]] ClusterReport read_cluster_map(const NodeConfig& member, Milliseconds timeout,
                                             const std::optional<std::string>& resource);

// The same, then asks each master.
[[nodiscard]] ClusterReport probe_cluster(const NodeConfig& member, Milliseconds timeout,
                                          const LockConfig& lock,
                                          const std::optional<std::string>& resource);

}  // namespace redlock::cli
