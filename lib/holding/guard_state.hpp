// The loop side of a Guard: renewal rounds, deadline checks, loss signal.
//
// Registered with the client core as a long-running operation, so closing
// the client reaches it (abort → lost with errc::shutting_down). It runs its
// renewals itself, as the response sink of its own extend requests (the
// rules of extend_operation.hpp, one round at a time): a renewal costs no
// operation object, callback or request encoding of its own. Loop-thread
// members are touched only on the loop; what the owning thread reads is
// constant, or in atomics.
//
// A client may hold very many of these (100 000 in BM_Renew), so what only
// some locks need is kept apart, allocated only for them: loss callbacks
// and renewal caps (Extras), the fields of the rarer kinds of lock
// (PackedLock), the acquisition's per-node outcomes (AcquireRecord).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <vector>

#include "holding/held_record.hpp"
#include "operations/client_core.hpp"
#include "operations/operation.hpp"
#include "operations/quorum_round.hpp"
#include "operations/slot_parts.hpp"
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
  // `acquired`: what the acquisition reported beside the lock, for
  // acquired().
  GuardState(ClientCore& core, Lock lock, const GuardOptions& options, AcquireRecord acquired = {});

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
  [[nodiscard]] std::optional<std::uint64_t> fence() const noexcept { return lock_.fence(); }
  // The acquisition's result, holding the lock as acquired (Guard::acquired()).
  [[nodiscard]] AcquireResult acquired() const;
  // Empty while held; why the lock was lost once lost() is true.
  [[nodiscard]] std::error_code error() const;
  // Guard::loss_nodes(): empty while held, and for a guard without on_lost.
  [[nodiscard]] std::vector<NodeOutcome> loss_nodes() const;
  // Made on the first call (noexcept: should that allocation fail, the
  // program ends); requested already when the lock is lost by then.
  [[nodiscard]] std::stop_token stop_token() const noexcept;
  [[nodiscard]] int renewals() const noexcept { return renewals_.load(); }
  // Guard::at_risk() and Guard::at_risk_token().
  [[nodiscard]] bool at_risk() const noexcept { return at_risk_.load(); }
  [[nodiscard]] std::stop_token at_risk_token() const;

 private:
  // Plans the next renewal for `due`, on the client's clock.
  void schedule_renewal(TimePoint due);
  // The guard's one timer serves both the renewals and the deadline checks:
  // armed for the earlier of the pending renewal and the deadline check,
  // and, while a round is in flight, of the renewal that will follow it, so
  // that a successful round finds the timer already where it wants it.
  // `fired_for`: the instant the timer fired for, when called at the end
  // of on_timer.
  void rearm(TimePoint fired_for = TimePoint::min());
  void on_timer();
  // A timer for an instant on the client's clock. The timer queue runs on
  // the steady clock: when the client's clock is that clock (always, but for
  // tests with a clock of their own), the instant is handed over as it is,
  // without reading the clock again.
  TimerQueue::Id schedule_at(TimePoint when, std::function<void()> fn);
  // In a timer callback: now, on the client's clock. With the steady clock,
  // the reading the timer queue took when it found the callback due (one
  // reading for every renewal and deadline check due in that turn).
  [[nodiscard]] TimePoint timer_now() const noexcept;
  // `self`: this state, which the requests' slots share.
  void renew(const std::shared_ptr<Operation>& self);
  void decide_renewal();
  void on_renewed(TimePoint valid_until, TimePoint now);
  void on_renewal_failed(std::error_code error);
  void arm_deadline(TimePoint now);
  void on_deadline();
  void declare_lost(std::error_code why);
  // The instant an at-risk episode begins unless a renewal moves the
  // deadline on (max without the signal, or during an episode).
  [[nodiscard]] TimePoint at_risk_from() const noexcept;
  void begin_at_risk();
  void end_at_risk();
  void tell_at_risk(bool at_risk) noexcept;
  void stop_timers() noexcept;
  [[nodiscard]] bool may_renew_again(TimePoint next_renewal) const;
  // renewal_grid(renew_interval_), computed where needed rather than kept:
  // a few instructions, against 8 bytes in every held lock.
  [[nodiscard]] Microseconds grid() const noexcept { return renewal_grid(renew_interval_); }

  // Loop thread only, first, and in the order a renewal touches them: the
  // guards of a batch are visited one after the other, so every cache line
  // of a guard a renewal needs is a cache miss.
  // The renewal in flight (answers to older rounds carry other tags and
  // are ignored); no outcomes kept, so a renewal allocates nothing.
  QuorumRound round_{0, false};
  bool stopped_ = false;
  bool capped_ = false;
  bool clock_is_steady_;
  bool renewal_pending_ = false;      // renewal_due_ is a renewal still to send
  bool in_timer_ = false;             // inside on_timer, which re-arms at its end
  bool last_round_failed_ = false;    // the last renewal round sent did not renew
  std::atomic<bool> lost_{false};     // read by any thread
  std::atomic<bool> at_risk_{false};  // read by any thread
  // Orders the making of stop_source_ (stop_token(), any thread) against
  // the loss (declare_lost): held for a few instructions only.
  mutable std::atomic_flag stop_lock_;
  std::atomic<SteadyClock::rep> valid_until_;  // read by any thread
  Milliseconds renew_interval_;
  // The timer's callback captures `this` alone (no allocation per timer): it
  // is cancelled before the core lets go of this state. One timer, not one
  // for renewals and one for the deadline: a client may hold very many
  // guards, and each pending timer is a slot in the timer queue.
  TimerQueue::Id timer_ = TimerQueue::kNone;
  TimePoint timer_at_ = TimePoint::max();  // when timer_ fires
  TimePoint renewal_due_{};                // when the pending (or last) renewal is due
  // The extend request of every renewal: the lock's value and ttl never
  // change while it is held. The nodes' request slots point to it.
  const PreparedCalls renewal_request_;
  // When the deadline is checked next: never after the deadline; max when
  // no check is wanted. Renewals move the deadline later without moving the
  // check; when the check comes before the deadline it is set again
  // (arm_deadline).
  TimePoint deadline_armed_for_ = TimePoint::max();
  Milliseconds ttl_;                  // the lock's, unchanged by renewals
  std::atomic<int> renewals_{0};      // read by any thread
  std::uint32_t round_not_held_ = 0;  // beside renewals_, in what was padding
  std::error_code last_renewal_error_;
  // What only some guards have: renewal caps, loss callbacks, and why no
  // renewal may be sent at all (checked once: nothing it depends on changes
  // while the lock is held). Null for a guard with none; loop thread only
  // (but for the constructor, and loss_nodes, read once lost_ is set).
  struct Extras {
    std::error_code request_refusal;
    std::optional<Milliseconds> max_hold;
    std::optional<int> max_renewals;
    std::function<void(std::error_code)> on_lost;
    std::vector<std::function<void(std::error_code)>> more_on_lost;
    // A guard with on_lost keeps its renewal rounds' outcomes (round_
    // keeps them); these are the last round's when it failed or was still
    // open at the loss. Written before lost_ is set, never after.
    std::vector<NodeOutcome> loss_nodes;
    // The at-risk signal: its share of the TTL (none: off), its callback,
    // and the source of the current (or next) episode's token, made on the
    // first at_risk_token() call (under stop_lock_).
    std::optional<double> at_risk_share;
    std::function<void(bool)> on_at_risk;
    mutable std::stop_source at_risk_source{std::nostopstate};
  };
  std::unique_ptr<Extras> extras_;

  // The rest.
  // As acquired; it never changes (its deadline as renewed is valid_until_).
  const PackedLock lock_;
  const AcquireRecord acquired_;
  // Written once, on the loop, before lost_ is set: a thread that sees
  // lost_ (acquire) reads it without a lock.
  std::error_code error_;
  // Empty until stop_token() is first called (under stop_lock_): most
  // guards are never asked for one, and its state is an allocation.
  mutable std::stop_source stop_source_{std::nostopstate};
};

}  // namespace redlock::detail
