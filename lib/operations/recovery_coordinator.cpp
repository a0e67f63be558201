#include "operations/recovery_coordinator.hpp"

#include <utility>

#include "operations/client_core.hpp"
#include "operations/launch.hpp"
#include "operations/recovery_operation.hpp"

namespace redlock::detail {

namespace {
// A round that could not act (too few nodes answered) is not repeated more
// often than this, however many acquires see an unmarked node.
constexpr Milliseconds kRecoveryPause{250};
}  // namespace

void RecoveryCoordinator::request(const KeySpace& keys, std::function<void(bool progressed)> done) {
  if (core_.closing()) {
    core_.turn().post([done = std::move(done)] { done(false); });
    return;
  }
  auto found = spaces_.find(keys.key_prefix());
  if (found == spaces_.end()) found = spaces_.emplace(keys.key_prefix(), Space{keys}).first;
  Space& space = found->second;
  space.waiters.push_back(std::move(done));
  if (space.running) return;
  if (space.ended != TimePoint{} && !space.progressed &&
      core_.clock().now() - space.ended < kRecoveryPause) {
    auto waiters = std::exchange(space.waiters, {});
    core_.turn().post([waiters = std::move(waiters)] {
      for (const auto& waiter : waiters) waiter(false);
    });
    defer_round(space);
    return;
  }
  launch_round(space);
}

RecoveryCoordinator::~RecoveryCoordinator() {
  for (auto& [prefix, space] : spaces_) {
    if (space.deferred != TimerQueue::kNone) core_.timers().cancel(space.deferred);
  }
}

void RecoveryCoordinator::launch_round(Space& space) {
  space.running = true;
  launch<RecoveryOperation>(core_, space.keys);
}

void RecoveryCoordinator::finished(const std::string& key_prefix, bool progressed,
                                   const std::string& report) {
  const auto found = spaces_.find(key_prefix);
  if (found == spaces_.end()) return;
  Space& space = found->second;
  space.running = false;
  space.ended = core_.clock().now();
  space.progressed = progressed;
  if (!report.empty()) report_ = report;
  auto waiters = std::exchange(space.waiters, {});
  // Someone asked, and the round could not act (a node did not answer, too
  // few sources): one more round after the pause, whoever asks meanwhile.
  if (!progressed && !waiters.empty()) defer_round(space);
  for (const auto& waiter : waiters) waiter(progressed);
}

void RecoveryCoordinator::defer_round(Space& space) {
  if (space.deferred != TimerQueue::kNone) return;
  // Spaces are never erased: the pointer stays valid (std::map).
  space.deferred = core_.timers().schedule_at(space.ended + kRecoveryPause, [this, &space] {
    space.deferred = TimerQueue::kNone;
    if (space.running || core_.closing()) return;
    launch_round(space);
  });
}

}  // namespace redlock::detail
