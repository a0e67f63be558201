// The Lua scripts the protocol runs on every node (docs/algorithm.md, "Keys and scripts"), with
// their SHA-1 names for EVALSHA. Each runs atomically on its node.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

struct Script {
  std::string_view name;
  std::string_view body;
  std::string sha1;
};

// KEYS: lock key, fence hash, node marker, recovering key. ARGV: value, ttl
// ms, resource (empty for an unfenced acquire, which needs no counter),
// amnesia defence ("1" or "0"). Returns {1, fence counter} when granted
// ({1, 0} unfenced), {0, holder PTTL} when busy; with the defence on, {2, 0} when
// the node has no identity marker and {3, ms left} while it is recovering.
[[nodiscard]] const Script& acquire_script();
// KEYS: lock key. ARGV: value, ttl ms. Returns 1 when extended, else 0.
// Never creates the key: an expired lock stays expired.
[[nodiscard]] const Script& extend_script();
// KEYS: lock key. ARGV: value, release channel. Deletes only our own value,
// then publishes the (now dead) value on the channel to wake waiters (an
// empty channel publishes nothing: an unlock nobody should hear); the value
// lets a waiter count one release once, however many nodes report it.
// Returns 1 when deleted.
[[nodiscard]] const Script& release_script();

// KEYS: fence hash, node marker. ARGV: resource, proposed token T, amnesia
// defence ("1"/"0"); with the defence on, a node without its marker answers
// {2, 0} and stores nothing. Stores T only if the
// node's counter for the resource is strictly smaller. Returns {1, T} when
// stored, else {0, counter}: a node never takes the same value twice, and
// says so, so two proposers of one T cannot both count this node.
[[nodiscard]] const Script& fence_script();

// KEYS: node marker, recovering key, fence hash. ARGV: lock key pattern.
// Returns {marker exists, recovering PTTL, any lock key exists, fence hash
// as HGETALL}: what the recovery decision needs to know about a node.
[[nodiscard]] const Script& probe_script();
// KEYS: node marker, recovering key, fence hash. ARGV: delay ms, marker
// value, recovering value, then field/value pairs to merge into the fence
// hash (field-wise max). Does nothing and returns 0 when the marker exists
// (someone recovered the node first); otherwise merges, sets the recovering
// key for the delay (none when 0), writes the marker, returns 1.
[[nodiscard]] const Script& recover_script();

// The batched form of `script`, or nullptr when it has none: one call
// that runs the script for several requests and answers an array with one
// reply per request (an error reply for a request whose command failed),
// as if the requests had run one after another. For acquire, extend,
// release and fence. Its KEYS are the keys after the first of the first
// request, which every request of the batch must have the same (the
// marker, the fence hash, the recovering key of one prefix), then each
// request's first key; its ARGV every request's arguments in order, the
// same number for each. See NodeConnection for when requests are batched.
[[nodiscard]] const Script* batch_script(const Script& script);
// Every script a node is given at connect (SCRIPT LOAD), batched forms
// included.
[[nodiscard]] const std::vector<const Script*>& node_scripts();

// Key names on a node.
[[nodiscard]] std::string marker_key(std::string_view prefix);
[[nodiscard]] std::string recovering_key(std::string_view prefix);
[[nodiscard]] std::string lock_pattern(std::string_view prefix);
[[nodiscard]] std::string lock_key(std::string_view prefix, std::string_view resource);
[[nodiscard]] std::string fence_key(std::string_view prefix);
[[nodiscard]] std::string release_channel(std::string_view prefix, std::string_view resource);

}  // namespace redlock::detail
