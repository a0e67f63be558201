// Which nodes of a quorum are one server named twice (two spellings of one
// address, a host name and its IP): pure logic over the run_ids the nodes
// answered with (INFO server). Used by AsyncClient::node_health() and by
// `redlock status`; and which members of a quorum with a Redis Cluster
// among them are not independent (docs/algorithm.md, "A cluster as a
// member").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

// For each node, the index of the first earlier node with the same run_id,
// if any; an empty run_id (unknown) matches nothing. Linear in the count.
[[nodiscard]] std::vector<std::optional<std::size_t>> earlier_same_server(
    const std::vector<std::string_view>& run_ids);

// What one member's servers answered: each server's run_id, and for a
// cluster member each master's cluster node id (CLUSTER SLOTS). Empty
// (unknown) entries match nothing.
struct MemberServers {
  bool cluster = false;
  std::vector<std::string> run_ids;
  std::vector<std::string> node_ids;
};

// Two members that are not independent, one of them a cluster: one
// cluster named twice (a master node id in both), or a server in both (a
// run_id in both: a cluster's master that is also a single member, or in
// another cluster). `shared` is the id they share.
struct SharedMembers {
  std::size_t first = 0;
  std::size_t second = 0;
  bool same_cluster = false;
  std::string shared;
};

// Every such pair, first < second, in order. Two single members that share
// a server are not listed: earlier_same_server says so, and they count as
// one master.
[[nodiscard]] std::vector<SharedMembers> members_not_independent(
    const std::vector<MemberServers>& members);

// How node health names a member's tie to `other`, the other member of
// `pair`: "not independent: one Redis Cluster with <other>", or "... shares
// a server with <other>".
[[nodiscard]] std::string not_independent_text(const SharedMembers& pair, std::string_view other);

}  // namespace redlock::detail
