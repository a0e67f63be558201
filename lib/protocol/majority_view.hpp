// The majority view of an inspection (docs/engine.md, "Inspection"): from
// what each node answered about one key, the holder a majority agrees on,
// what is left of its validity, and the fencing counter a majority stores.
// Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "redlock/inspection.hpp"

namespace redlock::detail {

// `answers`: one per node that answered. `quorum`: the majority of all
// configured nodes. `elapsed`: from sending the inspection to its last
// answer; `drift`: the clock drift allowance for the PTTL read.
// The holder is the value at least `quorum` nodes hold; its validity the
// smallest PTTL among them (a key without expiry counts as none left)
// less elapsed and drift, at least zero.
[[nodiscard]] std::optional<HolderView> majority_holder(const std::vector<KeyView>& answers,
                                                        std::size_t quorum, Microseconds elapsed,
                                                        Milliseconds drift);

// The readers a majority holds (KeyView::readers): each reader value at
// least `quorum` answers list, with its validity as majority_holder
// reckons it (from the readers' own ms left) and the resource's counter as
// those nodes store it; in value order.
[[nodiscard]] std::vector<HolderView> majority_readers(const std::vector<KeyView>& answers,
                                                       std::size_t quorum, Microseconds elapsed,
                                                       Milliseconds drift);

// The largest counter at least `quorum` of `answers` store (0 when fewer
// than `quorum` answered).
[[nodiscard]] std::uint64_t majority_fence(const std::vector<KeyView>& answers, std::size_t quorum);

}  // namespace redlock::detail
