// Leader election on the fenced lock (docs/algorithm.md, "Leader election").
//
// The leader of election N is the holder of the fenced lock on the
// resource "election:N"; its term is that lock's fencing token, so terms
// strictly increase from one leader to the next and a store that checks
// tokens refuses a deposed leader. A candidate campaigns by taking the lock
// (BlockingClient::campaign: a guard that renews it and signals its loss at
// once), advertises a payload with it (its address, say), and resigns by
// releasing the guard. Anyone can read the current leader by a majority
// read (leader()) or follow it (AsyncClient::observe): releases and
// elections are pushed to observers over the election's channels, and a
// leader that vanished without a release is noticed by a periodic read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "redlock/export.hpp"
#include "redlock/guard.hpp"
#include "redlock/inspection.hpp"
#include "redlock/types.hpp"

namespace redlock {

class REDLOCK_API Election {
 public:
  // The most bytes a payload may have.
  static constexpr std::size_t kMaxPayloadBytes = 4096;

  explicit Election(std::string name) : name_(std::move(name)) {}
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  // The lock every candidate takes: "election:" + name.
  [[nodiscard]] Resource resource() const { return Resource("election:" + name_); }

 private:
  std::string name_;
};

struct CampaignOptions {
  // Advertised while leader (at most Election::kMaxPayloadBytes bytes):
  // leader() and observers read it.
  std::string payload;
  // Bound on the campaign; unset: until elected, or until the stop token
  // passed with it is requested.
  std::optional<Milliseconds> wait;
  // The leader's lock TTL (renewed every ttl / 3). Default: LockConfig::ttl.
  std::optional<Milliseconds> ttl;
  // Runs on the client's loop the moment leadership is lost (the guard's
  // on_lost); the guard's stop_token is requested as well.
  std::function<void(std::error_code)> on_lost;
};

// The leader as a majority of nodes sees it.
struct LeaderView {
  // The leader's fencing token. (While a new leader's token round is still
  // running — for a round trip after it won the lock, before its campaign
  // returns — the counter a majority stores is still the previous term.)
  std::uint64_t term = 0;
  std::string payload;
  // What is left of its lock for sure (as HolderView::validity).
  Milliseconds validity{0};
};

struct LeaderResult {
  // no_quorum when fewer than a majority of nodes answered (the leader is
  // then unknown); cancelled / shutting_down as an observer's last call.
  std::error_code error;
  // None when no one leads (a majority answered and holds no leader).
  std::optional<LeaderView> leader;
  // What each node answered.
  std::vector<NodeInspection> nodes;
  [[nodiscard]] bool ok() const noexcept { return !error; }
};

struct ObserveOptions {
  // How often the leader is read besides the pushed changes, so that a
  // leader that vanished without a release (a crash, a partition) is
  // noticed. Default: a third of LockConfig::ttl, at least 50 ms.
  std::optional<Milliseconds> poll;
};

// The leader an inspection of the election's resource shows: the majority
// holder, its payload, the majority's counter as the term.
[[nodiscard]] REDLOCK_API LeaderResult leader_of(Inspection inspection);

// The payload a lock value carries (AcquireOptions::payload), if any: what
// follows the 32 hex digits of the random part and a ':'.
[[nodiscard]] REDLOCK_API std::optional<std::string_view> payload_of(std::string_view value);

}  // namespace redlock
