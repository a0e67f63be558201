// What a cluster member's slot map says (docs/algorithm.md, "A cluster as
// a member"): which master serves each of the 16384 hash slots, as the
// cluster answered CLUSTER SLOTS, and what a redirect (MOVED, ASK) says.
// Pure logic: reading the reply off a connection is the transport's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/hash_slot.hpp"

namespace redlock::detail {

// A server of the cluster as its map announces it. `id` is the cluster's
// node id (40 hex characters), empty when the map did not say.
struct ShardEndpoint {
  std::string host;
  std::uint16_t port = 0;
  std::string id;

  [[nodiscard]] bool same_server(const ShardEndpoint& other) const noexcept {
    return host == other.host && port == other.port;
  }
};

// One entry of CLUSTER SLOTS: slots [first, last] served by `master`.
struct SlotRange {
  std::uint16_t first = 0;
  std::uint16_t last = 0;
  ShardEndpoint master;
  std::vector<ShardEndpoint> replicas;
};

class SlotMap {
 public:
  // The map of `ranges`; nullopt with `error` set when a range is out of
  // bounds (first > last, last >= 16384), has no master, or overlaps
  // another (a map no cluster answers: the member's answer is refused, not
  // guessed at). Slots no range covers have no master (the cluster is down
  // there, or the slot is not assigned yet).
  [[nodiscard]] static std::optional<SlotMap> from_ranges(const std::vector<SlotRange>& ranges,
                                                          std::string& error);

  // The master serving `slot`; nullptr when the map assigns it to none.
  [[nodiscard]] const ShardEndpoint* master_of(std::uint16_t slot) const noexcept;
  [[nodiscard]] const ShardEndpoint* master_of_key(std::string_view key) const noexcept {
    return master_of(hash_slot(key));
  }
  // The distinct masters, in the order the map first named them.
  [[nodiscard]] const std::vector<ShardEndpoint>& masters() const noexcept { return masters_; }
  // How many slots have a master.
  [[nodiscard]] std::size_t covered() const noexcept;
  // The first slot the map gives the master at host:port, if any.
  [[nodiscard]] std::optional<std::uint16_t> first_slot_of(std::string_view host,
                                                           std::uint16_t port) const noexcept;

  // A MOVED redirect: `slot` is served by `master` from now on (the map is
  // read again too; until then this one slot is right).
  void move_slot(std::uint16_t slot, const ShardEndpoint& master);

 private:
  static constexpr std::uint16_t kNone = 0xFFFF;
  std::size_t index_of(const ShardEndpoint& master);

  std::vector<ShardEndpoint> masters_;
  // owner_[slot]: an index into masters_, or kNone.
  std::vector<std::uint16_t> owner_ = std::vector<std::uint16_t>(kClusterSlots, kNone);
};

// A cluster's redirect, from its error reply: "MOVED <slot> <host>:<port>"
// (the slot lives on that master now: read the map again) or "ASK <slot>
// <host>:<port>" (this one request goes there, after ASKING). An empty
// host means the host of the server that answered (a cluster that does not
// know its endpoint's name announces ":<port>" or "?:<port>"; both read as
// empty).
struct Redirect {
  enum class Kind { moved, ask };
  Kind kind = Kind::moved;
  std::uint16_t slot = 0;
  std::string host;
  std::uint16_t port = 0;
};

// The redirect `error` carries; nullopt for any other error (CROSSSLOT,
// TRYAGAIN, CLUSTERDOWN and the rest are the caller's to read).
[[nodiscard]] std::optional<Redirect> parse_redirect(std::string_view error);

}  // namespace redlock::detail
