// The loop side of a Guard: renewal rounds, deadline timer, loss signal.
//
// Registered with the client core as a long-running operation, so closing
// the client reaches it (abort → lost with errc::shutting_down). It runs its
// renewals itself, as the response sink of its own extend requests (the
// rules of extend_operation.hpp, one round at a time): a renewal costs no
// operation object, callback or request encoding of its own. Loop-thread
// members are touched only on the loop; what the owning thread reads is
// constant, in atomics or behind `mutex_`.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <vector>

#include "operations/client_core.hpp"
#include "operations/operation.hpp"
#include "operations/quorum_round.hpp"
#include "protocol/quorum.hpp"
#include "redlock/guard.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

// Renewals fall due on a grid: instants that are whole multiples of
// renewal_grid(interval) on the clock, a power of two of microseconds no
// larger than interval / 16. A renewal then comes at most 1/16 of its
// interval early, and the renewals of many guards with similar intervals
// fall due in the same loop turn, where they share one write per node.
[[nodiscard]] Microseconds renewal_grid(Milliseconds interval) noexcept;
// The last grid instant at or before `planned` (`planned` itself for a zero
// grid).
[[nodiscard]] TimePoint renewal_due(TimePoint planned, Microseconds grid) noexcept;

class GuardState final : public Operation {
 public:
  GuardState(ClientCore& core, Lock lock, const GuardOptions& options);

  // Loop thread.
  void start();
  // Stops renewing without a loss signal (the owner is releasing). Returns
  // the lock as last renewed.
  Lock stop();
  // The answers to the renewal rounds' extend requests.
  void on_response(std::size_t node, std::uint32_t tag, const NodeResponse& response) override;
  void cancel() override { (void)stop(); }
  void abort(std::error_code why) override { declare_lost(why); }
  // A further hold of the same lock (a reentrant one) wants the loss
  // signal too: `on_lost` runs when the lock is lost, at once if it is
  // already.
  void also_on_lost(std::function<void(std::error_code)> on_lost);

  // Any thread.
  [[nodiscard]] TimePoint valid_until() const noexcept;
  [[nodiscard]] bool lost() const noexcept { return lost_.load(); }
  [[nodiscard]] Lock snapshot() const;
  [[nodiscard]] std::error_code error() const;
  [[nodiscard]] std::stop_token stop_token() const noexcept { return stop_source_.get_token(); }
  [[nodiscard]] int renewals() const noexcept { return renewals_.load(); }

 private:
  // Arms the renewal timer for `due`, on the client's clock.
  void schedule_renewal(TimePoint due);
  // A timer for an instant on the client's clock. The timer queue runs on
  // the steady clock: when the client's clock is that clock (always, but for
  // tests with a clock of their own), the instant is handed over as it is,
  // without reading the clock again.
  TimerQueue::Id schedule_at(TimePoint when, std::function<void()> fn);
  // In a timer callback: now, on the client's clock. With the steady clock,
  // the reading the timer queue took when it found the callback due (one
  // reading for every renewal and deadline check due in that turn).
  [[nodiscard]] TimePoint timer_now() const noexcept;
  void renew();
  void decide_renewal();
  void on_renewed(TimePoint valid_until, TimePoint now);
  void on_renewal_failed(std::error_code error);
  void arm_deadline(TimePoint now);
  void on_deadline();
  void declare_lost(std::error_code why);
  void stop_timers() noexcept;
  [[nodiscard]] bool may_renew_again(TimePoint next_renewal) const;

  // Loop thread only, first, and in the order a renewal touches them: the
  // guards of a batch are visited one after the other, so every cache line
  // of a guard a renewal needs is a cache miss.
  // The renewal in flight (answers to older rounds carry other tags and
  // are ignored); no outcomes kept, so a renewal allocates nothing.
  QuorumRound round_{0, false};
  bool stopped_ = false;
  bool capped_ = false;
  bool clock_is_steady_;
  // No renewal may be sent at all (request_refusal_ says why). Checked once:
  // nothing it depends on changes while the lock is held.
  const bool request_refused_;
  std::atomic<SteadyClock::rep> valid_until_;  // read by any thread
  Milliseconds renew_interval_;
  std::size_t round_not_held_ = 0;
  // Timer callbacks capture `this` alone (no allocation per timer): both
  // timers are cancelled before the core lets go of this state.
  TimerQueue::Id renew_timer_ = TimerQueue::kNone;
  TimePoint renewal_due_{};  // when the pending (or last) renewal is due
  // The extend request of every renewal: the lock's value and ttl never
  // change while it is held. The nodes' request slots point to it.
  const PreparedRequest renewal_request_;
  TimerQueue::Id deadline_timer_ = TimerQueue::kNone;
  // When the deadline timer fires: never after the deadline. Renewals move
  // the deadline later without touching the timer; when it fires before the
  // deadline it is armed again (arm_deadline).
  TimePoint deadline_armed_for_ = TimePoint::max();
  Microseconds renewal_grid_;
  Milliseconds ttl_;  // the lock's, unchanged by renewals
  std::optional<Milliseconds> max_hold_;
  std::optional<int> max_renewals_;
  std::atomic<int> renewals_{0};  // read by any thread
  const std::error_code request_refusal_;
  std::error_code last_renewal_error_;

  // The rest.
  std::function<void(std::error_code)> on_lost_;
  std::vector<std::function<void(std::error_code)>> more_on_lost_;
  // As acquired; it never changes (its deadline as renewed is valid_until_).
  const Lock lock_;
  mutable std::mutex mutex_;
  std::error_code error_;  // guarded by mutex_
  std::atomic<bool> lost_{false};
  std::stop_source stop_source_;
};

}  // namespace redlock::detail
