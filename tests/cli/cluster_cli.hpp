// What the CLI tests of cluster members share: a member of three shards,
// and the `--node` form that names it by its seeds.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cluster_member.hpp"

namespace redlock::test {

inline ShardedMember three_shards(std::size_t replicas) {
  ShardedMemberOptions options;
  options.shards = 3;
  options.replicas_per_shard = replicas;
  return ShardedMember(options);
}

// "redis+cluster://<seed>,<seed>,...".
inline std::string cluster_node(const std::vector<std::string>& seeds) {
  std::string url = "redis+cluster://";
  for (std::size_t i = 0; i < seeds.size(); ++i) url += (i > 0 ? "," : "") + seeds[i];
  return url;
}

}  // namespace redlock::test
