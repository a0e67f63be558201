// The Lua bodies of the lock kinds beyond the mutex (docs/algorithm.md,
// "Lock kinds"): a lock over several resources at once and a semaphore's
// permits. scripts.cpp puts them in the one table; the acquires and the
// fence open with the node rules there. Each answers in the shape the
// mutex's script of the same role answers, so one parser reads both.
#pragma once

#include <string_view>

namespace redlock::detail {

// acquire_all — KEYS: node marker, recovering key, fence hash, then the
//   lock key of every resource. ARGV: value, ttl ms, amnesia defence, "1"
//   when fenced else "0", then every resource's fence field. Grants every
//   key or none: {1, the highest fence counter of the resources} ({1, 0}
//   unfenced), {0, PTTL of the first key held}, {2, 0}, {3, ms left}.
extern const std::string_view kAcquireAllBody;
// extend_all — KEYS: the lock keys. ARGV: value, ttl ms. Extends every key
//   when every key holds the value (1), else none (0).
extern const std::string_view kExtendAllBody;
// release_all — KEYS: node marker, recovering key, then the lock keys.
//   ARGV: value, then per lock key its release channel ("" publishes
//   nothing) and waiting set ("" for none). Deletes every key that holds
//   the value, then serves each deleted key's fair line as the plain
//   release does (its first live waiter's claim granted, or named), else
//   publishes the value on its channel, and names the next waiter in each
//   mutex line unless a claim was granted; 1 when it deleted any, else 0.
extern const std::string_view kReleaseAllBody;
// adopt_all — opens with the node rules. KEYS: node marker, recovering key,
//   then the lock keys. ARGV: the set's value, ttl ms, amnesia defence, then
//   per lock key the value it holds now (a member's own lock). When every
//   key holds its own value, the set's, or nothing (a node where that
//   member was not granted; taken only when the node rules allow, as an
//   acquire would take it), sets every key to the set's value for ttl ms
//   (1), else changes none (0): the members a set took one at a time, each
//   on its own majority, become one lock held on a majority
//   (docs/algorithm.md, "A set's turn").
extern const std::string_view kAdoptAllBody;
// fence_all — KEYS: node marker, recovering key, fence hash. ARGV: amnesia
//   defence, proposed token T, then the fence fields. Stores T in every
//   field when every counter is below T, else none: {1, T}, {0, the highest
//   counter at or above T}, {2, 0}, {3, ms left}.
extern const std::string_view kFenceAllBody;
// permit_acquire — KEYS: node marker, recovering key, fence hash, the
//   semaphore's count key. ARGV: value, ttl ms, amnesia defence, permits k,
//   the permit to try first, the permits' key prefix (permit j's key is the
//   prefix followed by j), the permits' fence field prefix ("" unfenced).
//   Refuses {4, recorded count} when the count key records another count
//   while a permit of either count is held; otherwise grants the first free
//   permit from the one tried first on (cyclically), keeps k recorded for
//   at least the ttl (for twice the ttl, renewed once less than one ttl is
//   left), and answers {1, fence counter, permit}; {0, the soonest
//   holder's PTTL} when every permit is held; {2, 0}; {3, ms left}.
extern const std::string_view kPermitAcquireBody;
// permit_extend — KEYS: the permit's key, the count key. ARGV: value, ttl
//   ms, permits k. Extends the permit when it holds the value, and keeps the
//   count recorded at least as long (1); else 0.
extern const std::string_view kPermitExtendBody;

// inspect — reads, never writes. KEYS: a lock key (or a semaphore's count
//   key), the fence hash. ARGV: "lock", the fence field; or "permits", the
//   permits' key prefix, their fence field prefix, the count the caller
//   names. For a lock: {1 when the key exists else 0, its value or "", its
//   PTTL, its fence counter}; when readers hold it (reader_scripts.hpp),
//   {2, "", its PTTL, its fence counter, then each live reader's value and
//   ms left, at most 1024 of them}. For a semaphore: {the recorded count or "",
//   then for every permit up to the larger of the two counts (at most
//   1024): exists, value, PTTL, counter}, flattened.
extern const std::string_view kInspectBody;

}  // namespace redlock::detail
