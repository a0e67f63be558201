// The calls of a lock over several resources beyond KindRules (multi.cpp;
// kind_scripts.hpp): which sets make a lock, a set's adoption of its
// members' locks and its one fencing token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kinds/kind.hpp"

namespace redlock::detail {

// The most resources one lock may hold at once.
inline constexpr std::size_t kMaxResourcesPerLock = 64;

// Whether `resources` may make one lock: 1 to kMaxResourcesPerLock
// distinct, non-empty names.
[[nodiscard]] bool valid_resource_set(const std::vector<Resource>& resources) noexcept;

// The members of the set `set` (a lock over several resources), each held
// now by its own lock with the value `member_values[i]` for
// set.resources[i], made one lock with the set's value and TTL on one node
// (adopt_all, under the node rules of `keys`; docs/algorithm.md, "A set's
// turn"). Answers as extend_all: 1 when the node holds every member for
// the set now, else 0.
[[nodiscard]] ScriptCall adopt_call(const Lock& set, const std::vector<LockValue>& member_values,
                                    const KeySpace& keys);
// Proposes `token` as the fencing token of every resource of `resources`
// on one node (fence_all, under the node rules of `keys`): stored for all
// of them when each one's counter is below it, else none is and the node
// answers its highest counter (docs/algorithm.md, "Fenced acquire").
[[nodiscard]] ScriptCall fence_all_call(const std::vector<Resource>& resources, std::uint64_t token,
                                        const KeySpace& keys);

}  // namespace redlock::detail
