// The amnesia defence's coordination on one client: at most one recovery
// round at a time, joined by every acquire that sees a node without its
// identity marker, and not repeated more often than every kRecoveryPause
// when a round found nothing it could safely do. Loop thread only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "redlock/types.hpp"
#include "transport/timer_queue.hpp"

namespace redlock::detail {

class ClientCore;

class RecoveryCoordinator {
 public:
  explicit RecoveryCoordinator(ClientCore& core) : core_(core) {}
  ~RecoveryCoordinator();
  RecoveryCoordinator(const RecoveryCoordinator&) = delete;
  RecoveryCoordinator& operator=(const RecoveryCoordinator&) = delete;

  // Starts a recovery round (or joins the one running) and calls
  // `done(progressed)` when it ends, never from inside this call;
  // progressed means every node that answered now carries its marker.
  // Within kRecoveryPause of a round that could not act, `done(false)`
  // comes at once. A request that met such a round (within its pause, or
  // joined while it ran) gets one more round when the pause is over: a
  // node awaiting its second merge may be met by one answer only, and no
  // later request may come to merge it.
  void request(std::function<void(bool progressed)> done);
  // The round's end (RecoveryOperation).
  void finished(bool progressed, const std::string& report);
  // What the last round found (for node outcomes and diagnosis).
  [[nodiscard]] const std::string& report() const noexcept { return report_; }

 private:
  ClientCore& core_;
  bool running_ = false;
  TimePoint ended_{};
  bool progressed_ = false;
  std::vector<std::function<void(bool)>> waiters_;
  void defer_round();

  std::string report_;
  TimerQueue::Id deferred_ = TimerQueue::kNone;
};

}  // namespace redlock::detail
