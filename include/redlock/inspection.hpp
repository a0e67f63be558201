// What `inspect` reports: who holds a lock (or a semaphore's permits) and
// for how long, as every node sees it and as a majority does. Inspecting
// writes nothing on any node.
//
// The values it reports are the holders' lock values, which let whoever
// knows them extend or release those locks: print them only where the
// nodes' own data may be read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "redlock/outcome.hpp"
#include "redlock/types.hpp"

namespace redlock {

// One lock key on one node: a lock's key, or one permit's.
struct KeyView {
  // The key's value; none when the key does not exist on the node.
  std::optional<std::string> value;
  // Its PTTL: -2 when it does not exist, -1 when it has no expiry.
  std::int64_t pttl_ms = -2;
  // The node's fencing counter for the resource (or the permit).
  std::uint64_t fence = 0;
  // When readers hold the key (a read-write lock's read side; `value` is
  // then none and `pttl_ms` the latest reader's): each live reader's value
  // and what is left of it on the node (at most 1024, latest first).
  struct Reader {
    std::string value;
    std::int64_t pttl_ms = 0;
  };
  std::vector<Reader> readers{};
};

struct NodeInspection {
  std::size_t node = 0;  // index into QuorumConfig::nodes
  std::string name;      // NodeConfig::name
  // answered: the node replied; else why not (timeout, unreachable, an
  // error reply) in `detail`, escaped as NodeOutcome::detail.
  bool answered = false;
  std::string detail;
  Microseconds latency{0};
  // A resource: its key.
  KeyView key;
  // A semaphore: the count the node records (0: none) and every permit up
  // to the larger of that count and the one asked about, in permit order.
  std::uint32_t permits_recorded = 0;
  std::vector<KeyView> permits;
};

// A holder as a majority sees it.
struct HolderView {
  // The permit it holds, for a semaphore.
  std::optional<std::uint32_t> permit;
  std::string value;
  // What is left of it for sure: the smallest PTTL over the majority that
  // holds the value, less the time the inspection took and the clock drift
  // allowance; zero when nothing is left.
  Milliseconds validity{0};
  // The largest fencing counter a majority of nodes store for it: no
  // holder with a smaller token can still write to a fenced store.
  std::uint64_t fence = 0;
  // What the holder advertises with its lock (AcquireOptions::payload), if
  // anything.
  std::optional<std::string> payload{};
};

struct Inspection {
  // no_quorum when fewer than a majority of nodes answered (the majority
  // view is then unknown); empty otherwise.
  std::error_code error;
  // A resource: its holder, when a majority holds one value.
  std::optional<HolderView> holder;
  // The resource's (or, for a semaphore, the permits') fencing counter as
  // a majority stores it, also when no one holds it.
  std::uint64_t fence = 0;
  // A semaphore: one entry per permit a majority holds, in permit order.
  std::vector<HolderView> holders;
  // A resource held by readers: every reader a majority holds.
  std::vector<HolderView> readers;
  std::vector<NodeInspection> nodes;
  [[nodiscard]] bool ok() const noexcept { return !error; }
};

}  // namespace redlock
