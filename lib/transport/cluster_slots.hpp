// A cluster's slot map off the wire: the ranges a CLUSTER SLOTS reply
// lists (docs/algorithm.md, "A cluster as a member"). Each entry is
// [first slot, last slot, master, replica...], each server [host, port,
// node id, (Redis 7: a map of hostname and the like)]. A host that is
// empty, "?" or nil (a server that does not know the address it is reached
// at)
// is `answering_host`, the host of the server that answered; when that is
// empty too (a seed reached by a Unix socket), the entry names no master
// the client could reach, and the map is refused.
#pragma once

#include <hiredis/hiredis.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/slot_map.hpp"

namespace redlock::detail {

// The ranges of `reply`; nullopt with `error` set (escaped, one line) when
// the reply is not a CLUSTER SLOTS answer: an error reply (its text), or
// an entry of another shape.
[[nodiscard]] std::optional<std::vector<SlotRange>> slot_ranges_from(
    const redisReply& reply, std::string_view answering_host, std::string& error);

}  // namespace redlock::detail
