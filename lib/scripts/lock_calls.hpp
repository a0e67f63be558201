// The script calls that extend and release a held lock of any kind
// (docs/algorithm.md, "Lock kinds"): the mutex's batched extend and release
// for a lock on one resource, extend_all and release_all for one over
// several resources, permit_extend and the release of one key for a
// semaphore permit, read_extend and read_release for a reader. Pure: names and arguments only.
#pragma once

#include <cstdint>
#include <string_view>
#include <system_error>
#include <vector>

#include "redlock/outcome.hpp"
#include "scripts/scripts.hpp"

namespace redlock::detail {

enum class LockKind : std::uint8_t { single, multi, permit, shared, fair };

[[nodiscard]] LockKind kind_of(const Lock& lock) noexcept;

// Whether `lock` is a record some acquire could have handed out: a value, a
// resource, and for a lock over several resources distinct non-empty names
// with as many tokens as names (or none); for a permit a count from 1 to
// Semaphore::kMaxPermits and a permit below it.
[[nodiscard]] bool well_formed(const Lock& lock) noexcept;

// The most resources one lock may hold at once.
inline constexpr std::size_t kMaxResourcesPerLock = 64;

// Whether `resources` may make one lock: 1 to kMaxResourcesPerLock
// distinct, non-empty names.
[[nodiscard]] bool valid_resource_set(const std::vector<Resource>& resources) noexcept;

// Whether no lock key of `lock` under `keys` is one of the library's own
// keys (is_bookkeeping_key): a record that names such a key was never
// handed out, and a release or extend of it is refused. A permit's keys
// are a semaphore's own, always allowed.
[[nodiscard]] bool lock_keys_allowed(const Lock& lock, const LockConfig& keys);

// Extends `lock` to `ttl` on one node; `keys` says where its keys are
// (key_prefix, lock_key).
[[nodiscard]] ScriptCall extend_call(const Lock& lock, const LockConfig& keys, Milliseconds ttl);
// Deletes `lock`'s value on one node; `announce` publishes the release on
// the lock's channels (waking waiters), else nothing is published.
// `rejoin` (a mutex's announced release only): the releaser's place in
// line, rejoin_argument(), taken when the release names a waiter.
[[nodiscard]] ScriptCall release_call(const Lock& lock, const LockConfig& keys, bool announce,
                                      std::string_view rejoin = {});
// The members of the set `set` (a lock over several resources), each held
// now by its own lock with the value `member_values[i]` for
// set.resources[i], made one lock with the set's value and TTL on one node
// (adopt_all, under the node rules of `keys`; docs/algorithm.md, "A set's
// turn"). Answers as extend_all: 1 when the node holds every member for
// the set now, else 0.
[[nodiscard]] ScriptCall adopt_call(const Lock& set, const std::vector<LockValue>& member_values,
                                    const LockConfig& keys);
// Proposes `token` as the fencing token of every resource of `resources`
// on one node (fence_all, under the node rules of `keys`): stored for all
// of them when each one's counter is below it, else none is and the node
// answers its highest counter (docs/algorithm.md, "Fenced acquire").
[[nodiscard]] ScriptCall fence_all_call(const std::vector<Resource>& resources, std::uint64_t token,
                                        const LockConfig& keys);
// Makes `call`, a fair lock's release_call, also draw the releaser's next
// ticket for the lock's resource (fair_scripts.hpp, fair_release), under
// the node rules of `keys` (its amnesia defence), and with `pre_claim`
// (claim_argument) record the releaser's next place `next_place`
// ("<entry ttl ms>:<waiter id>") at the count drawn, with that claim.
void draw_next_ticket(ScriptCall& call, const Lock& lock, const LockConfig& keys,
                      std::string_view pre_claim = {}, std::string_view next_place = {});
// The release of a fair waiter's claimed `value` (fair_release, announced):
// deletes it where a release granted it (that node serves its next waiter)
// and takes back the claim of place `queue_id`; the place goes too only
// when `leave`.
[[nodiscard]] ScriptCall claim_release_call(const Resource& resource, const LockValue& value,
                                            Milliseconds ttl, std::string_view queue_id,
                                            const LockConfig& keys, bool leave);
// A claim's argument (fair_scripts.hpp): "<ttl ms>:<tag>:<defence>:<value>".
[[nodiscard]] std::string claim_argument(Milliseconds ttl, std::string_view tag,
                                         bool amnesia_defence, std::string_view value);

}  // namespace redlock::detail
