// The fair lock's calls beyond KindRules (fair.cpp; fair_scripts.hpp): the
// ticket a release draws for its releaser, a claim's argument and release.
#pragma once

#include <string>
#include <string_view>

#include "kinds/kind.hpp"

namespace redlock::detail {

// A fair waiter's place in a queue lives this long on a node unless its
// waiter renews it (AcquireOperation, a record at least every 100 ms): a
// waiter that died holds the queue up for at most this long
// (docs/safety.md, "Fair locks"). A pre-claimed place lives as long.
inline constexpr Milliseconds kFairQueueEntryTtl{400};

// What a fair lock's release may do besides releasing (fair_release).
struct FairReleaseExtras {
  // Also draw the releaser's next ticket for the lock's resource, under
  // the node rules (the amnesia defence) of the release's `keys`.
  bool draw = false;
  // With `draw`: record the releaser's next place `next_place` ("<entry
  // ttl ms>:<waiter id>") at the count drawn, with the claim `pre_claim`
  // (claim_argument); both empty for none.
  std::string_view pre_claim{};
  std::string_view next_place{};
  // Whether the lock's place in the queue goes too (else only its claim).
  bool leave = true;
};
// A fair lock's release (fair_release) of `lock`, announced or not, doing
// what `extras` adds; KindRules::release_call is this with no extras.
[[nodiscard]] ScriptCall fair_release_call(const Lock& lock, const KeySpace& keys, bool announce,
                                           const FairReleaseExtras& extras);
// The release of a fair waiter's claimed `value` (fair_release, announced):
// deletes it where a release granted it (that node serves its next waiter)
// and takes back the claim of place `queue_id`; the place goes too only
// when `leave`.
[[nodiscard]] ScriptCall claim_release_call(const Resource& resource, const LockValue& value,
                                            Milliseconds ttl, std::string_view queue_id,
                                            const KeySpace& keys, bool leave);
// A claim's argument (fair_scripts.hpp): "<ttl ms>:<tag>:<defence>:<value>".
[[nodiscard]] std::string claim_argument(Milliseconds ttl, std::string_view tag,
                                         bool amnesia_defence, std::string_view value);

}  // namespace redlock::detail
