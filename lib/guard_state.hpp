// The loop side of a Guard: renewal timer, deadline timer, loss signal.
//
// Registered with the client core as a long-running operation, so closing
// the client reaches it (abort → lost with errc::shutting_down). Loop-thread
// members are touched only on the loop; what the owning thread reads is in
// atomics or behind `mutex_`.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <stop_token>

#include "client_core.hpp"
#include "operation.hpp"
#include "redlock/guard.hpp"

namespace redlock::detail {

class GuardState final : public Operation {
 public:
  GuardState(ClientCore& core, Lock lock, const GuardOptions& options);

  // Loop thread.
  void start();
  // Stops renewing without a loss signal (the owner is releasing). Returns
  // the lock as last renewed.
  Lock stop();
  void on_response(std::size_t, std::uint32_t, const NodeResponse&) override {}
  void cancel() override { (void)stop(); }
  void abort(std::error_code why) override { declare_lost(why); }

  // Any thread.
  [[nodiscard]] TimePoint valid_until() const noexcept;
  [[nodiscard]] bool lost() const noexcept { return lost_.load(); }
  [[nodiscard]] Lock snapshot() const;
  [[nodiscard]] std::error_code error() const;
  [[nodiscard]] std::stop_token stop_token() const noexcept { return stop_source_.get_token(); }
  [[nodiscard]] int renewals() const noexcept { return renewals_.load(); }

 private:
  void schedule_renewal(Microseconds delay);
  void renew();
  void on_renewed(ExtendResult result);
  void arm_deadline();
  void on_deadline();
  void declare_lost(std::error_code why);
  [[nodiscard]] bool may_renew_again(TimePoint next_renewal) const;

  Milliseconds renew_interval_;
  std::optional<Milliseconds> max_hold_;
  std::optional<int> max_renewals_;
  std::function<void(std::error_code)> on_lost_;

  mutable std::mutex mutex_;
  Lock lock_;              // guarded by mutex_ (written on the loop)
  std::error_code error_;  // guarded by mutex_
  std::atomic<SteadyClock::rep> valid_until_;
  std::atomic<bool> lost_{false};
  std::atomic<int> renewals_{0};
  std::stop_source stop_source_;

  // Loop thread only.
  TimerQueue::Id renew_timer_ = TimerQueue::kNone;
  TimerQueue::Id deadline_timer_ = TimerQueue::kNone;
  std::error_code last_renewal_error_;
  bool capped_ = false;
  bool stopped_ = false;
};

}  // namespace redlock::detail
