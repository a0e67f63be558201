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

void RecoveryCoordinator::request(std::function<void(bool progressed)> done) {
  if (core_.closing()) {
    core_.turn().post([done = std::move(done)] { done(false); });
    return;
  }
  waiters_.push_back(std::move(done));
  if (running_) return;
  if (ended_ != TimePoint{} && !progressed_ && core_.clock().now() - ended_ < kRecoveryPause) {
    auto waiters = std::exchange(waiters_, {});
    core_.turn().post([waiters = std::move(waiters)] {
      for (const auto& waiter : waiters) waiter(false);
    });
    defer_round();
    return;
  }
  running_ = true;
  launch<RecoveryOperation>(core_);
}

RecoveryCoordinator::~RecoveryCoordinator() {
  if (deferred_ != TimerQueue::kNone) core_.timers().cancel(deferred_);
}

void RecoveryCoordinator::finished(bool progressed, const std::string& report) {
  running_ = false;
  ended_ = core_.clock().now();
  progressed_ = progressed;
  if (!report.empty()) report_ = report;
  auto waiters = std::exchange(waiters_, {});
  // Someone asked, and the round could not act (a node did not answer, too
  // few sources): one more round after the pause, whoever asks meanwhile.
  if (!progressed && !waiters.empty()) defer_round();
  for (const auto& waiter : waiters) waiter(progressed);
}

void RecoveryCoordinator::defer_round() {
  if (deferred_ != TimerQueue::kNone) return;
  deferred_ = core_.timers().schedule_at(ended_ + kRecoveryPause, [this] {
    deferred_ = TimerQueue::kNone;
    if (running_ || core_.closing()) return;
    running_ = true;
    launch<RecoveryOperation>(core_);
  });
}

}  // namespace redlock::detail
