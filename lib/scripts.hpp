// The Lua scripts the protocol runs on every node (DESIGN 2.1-2.3), with
// their SHA-1 names for EVALSHA. Each runs atomically on its node.
#pragma once

#include <string>
#include <string_view>

namespace redlock::detail {

struct Script {
  std::string_view name;
  std::string_view body;
  std::string sha1;
};

// KEYS: lock key, fence hash. ARGV: value, ttl ms, resource.
// Returns {1, fence counter} when granted, {0, holder PTTL} when busy.
[[nodiscard]] const Script& acquire_script();
// KEYS: lock key. ARGV: value, ttl ms. Returns 1 when extended, else 0.
// Never creates the key: an expired lock stays expired.
[[nodiscard]] const Script& extend_script();
// KEYS: lock key. ARGV: value, release channel. Deletes only our own value,
// then publishes on the channel to wake waiters. Returns 1 when deleted.
[[nodiscard]] const Script& release_script();

// KEYS: fence hash. ARGV: resource, proposed token T. Stores T only if the
// node's counter for the resource is strictly smaller. Returns {1, T} when
// stored, else {0, counter}: a node never takes the same value twice, and
// says so, so two proposers of one T cannot both count this node.
[[nodiscard]] const Script& fence_script();

// Key names on a node.
[[nodiscard]] std::string lock_key(std::string_view prefix, std::string_view resource);
[[nodiscard]] std::string fence_key(std::string_view prefix);
[[nodiscard]] std::string release_channel(std::string_view prefix, std::string_view resource);

}  // namespace redlock::detail
