// The amnesia defence's coordination on one client: at most one recovery
// round at a time for one key space (one per quorum in the shared layout,
// one per slot in the per-slot layout: scripts/key_space.hpp), joined by
// every acquire that sees a node without that space's identity marker, and
// not repeated more often than every kRecoveryPause when a round found
// nothing it could safely do. Loop thread only.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "redlock/types.hpp"
#include "scripts/key_space.hpp"
#include "transport/timer_queue.hpp"

namespace redlock::detail {

class ClientCore;

class RecoveryCoordinator {
 public:
  explicit RecoveryCoordinator(ClientCore& core) : core_(core) {}
  ~RecoveryCoordinator();
  RecoveryCoordinator(const RecoveryCoordinator&) = delete;
  RecoveryCoordinator& operator=(const RecoveryCoordinator&) = delete;

  // Starts a recovery round of the node rules' keys of `keys` (or joins
  // the one running) and calls `done(progressed)` when it ends, never from
  // inside this call; progressed means every node that answered now
  // carries that space's marker. Within kRecoveryPause of a round of the
  // space that could not act, `done(false)` comes at once. A request that
  // met such a round (within its pause, or joined while it ran) gets one
  // more round when the pause is over: a node awaiting its second merge
  // may be met by one answer only, and no later request may come to merge
  // it.
  void request(const KeySpace& keys, std::function<void(bool progressed)> done);
  // The end of a round of the space whose keys are under `key_prefix`
  // (RecoveryOperation).
  void finished(const std::string& key_prefix, bool progressed, const std::string& report);
  // What the last round found (for node outcomes and diagnosis).
  [[nodiscard]] const std::string& report() const noexcept { return report_; }

 private:
  // One key space's rounds, by its key prefix: at most one per slot.
  struct Space {
    KeySpace keys;
    bool running = false;
    TimePoint ended{};
    bool progressed = false;
    std::vector<std::function<void(bool)>> waiters{};
    TimerQueue::Id deferred = TimerQueue::kNone;
  };
  void launch_round(Space& space);
  void defer_round(Space& space);

  ClientCore& core_;
  std::map<std::string, Space, std::less<>> spaces_;
  std::string report_;
};

}  // namespace redlock::detail
