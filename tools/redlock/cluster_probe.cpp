#include "cluster_probe.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <utility>

#include "parallel.hpp"
#include "protocol/hash_slot.hpp"
#include "report.hpp"
#include "scripts/scripts.hpp"
#include "transport/blocking_session.hpp"
#include "transport/cluster_link.hpp"
#include "transport/cluster_slots.hpp"

namespace redlock::cli {
namespace {

// The map `seed` answers, or why not.
std::optional<std::vector<detail::SlotRange>> read_map(const NodeConfig& member,
                                                       const ClusterSeed& seed,
                                                       Milliseconds timeout, std::string& error) {
  detail::BlockingSession session(
      detail::member_server(member, seed.host, seed.port, seed.unix_path));
  session.set_deadline(SteadyClock::now() + timeout, timeout);
  if (!session.open()) {
    error = session.failure();
    return std::nullopt;
  }
  const detail::BlockingReply reply = session.command({"CLUSTER", "SLOTS"});
  if (!reply) {
    error = session.failure();
    return std::nullopt;
  }
  return detail::slot_ranges_from(*reply, seed.host, error);
}

}  // namespace

bool ClusterReport::up() const {
  return !seed.empty() && covered == detail::kClusterSlots &&
         std::all_of(shards.begin(), shards.end(),
                     [](const ShardReport& shard) { return shard.node.reachable; });
}

bool ClusterReport::answered() const {
  return !seed.empty() && std::any_of(shards.begin(), shards.end(), [](const ShardReport& shard) {
    return shard.node.reachable;
  });
}

ClusterReport read_cluster_map(const NodeConfig& member, Milliseconds timeout,
                               const std::optional<std::string>& resource) {
  ClusterReport report;
  report.name = member.name;
  std::optional<std::vector<detail::SlotRange>> ranges;
  for (const ClusterSeed& seed : member.cluster) {
    std::string why;
    ranges = read_map(member, seed, timeout, why);
    if (ranges) {
      std::string invalid;
      if (!detail::SlotMap::from_ranges(*ranges, invalid)) {
        why = "its slot map is not one a cluster answers: " + invalid;
        ranges.reset();
      }
    }
    if (ranges) {
      report.seed = endpoint_address(seed.host, seed.port, seed.unix_path);
      break;
    }
    if (!report.error.empty()) report.error += "; ";
    report.error += "seed " + endpoint_address(seed.host, seed.port, seed.unix_path) + ": " + why;
  }
  if (!ranges) return report;
  report.error.clear();
  // One shard per master, in the order the map first names each.
  for (const detail::SlotRange& range : *ranges) {
    auto shard = std::find_if(
        report.shards.begin(), report.shards.end(),
        [&](const ShardReport& known) { return known.master.same_server(range.master); });
    if (shard == report.shards.end()) {
      report.shards.push_back(ShardReport{range.master, {}, {}, 0});
      shard = std::prev(report.shards.end());
    }
    shard->ranges.emplace_back(range.first, range.last);
    shard->slots += static_cast<std::size_t>(range.last - range.first) + 1;
    report.covered += static_cast<std::size_t>(range.last - range.first) + 1;
  }
  for (ShardReport& shard : report.shards) {
    std::sort(shard.ranges.begin(), shard.ranges.end());
  }
  if (resource) {
    const std::uint16_t slot = detail::resource_slot(*resource);
    for (std::size_t i = 0; i < report.shards.size(); ++i) {
      for (const auto& [first, last] : report.shards[i].ranges) {
        if (slot >= first && slot <= last) report.resource_shard = i;
      }
    }
  }
  return report;
}

ClusterReport probe_cluster(const NodeConfig& member, Milliseconds timeout, const LockConfig& lock,
                            const std::optional<std::string>& resource) {
  ClusterReport report = read_cluster_map(member, timeout, resource);
  // Every master at once, as status asks every member.
  for_each_in_parallel(report.shards.size(), [&](std::size_t i) {
    ShardReport& shard = report.shards[i];
    const NodeConfig server =
        detail::member_server(member, shard.master.host, shard.master.port, {});
    // A quorum with a cluster member names its keys per slot: the
    // resource's master reads its slot's marker, recovering key and fence
    // counter, the others none (docs/algorithm.md, "Key layout").
    shard.node =
        probe_node(server, timeout, lock, report.resource_shard == i ? resource : std::nullopt,
                   detail::KeyLayout::per_slot);
  });
  return report;
}

}  // namespace redlock::cli
