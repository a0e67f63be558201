// Which nodes of a quorum are one server named twice (two spellings of one
// address, a host name and its IP): pure logic over the run_ids the nodes
// answered with (INFO server). Used by AsyncClient::node_health() and by
// `redlock status`.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace redlock::detail {

// For each node, the index of the first earlier node with the same run_id,
// if any; an empty run_id (unknown) matches nothing. Linear in the count.
[[nodiscard]] std::vector<std::optional<std::size_t>> earlier_same_server(
    const std::vector<std::string_view>& run_ids);

}  // namespace redlock::detail
