// A held lock that renews itself and says the moment it is lost.
//
// A Guard is what BlockingClient::lock() returns. While it holds the lock,
// the client's loop renews it by quorum (the extend of docs/algorithm.md) every
// `renew_interval` (default ttl / 3) — a timer on the loop, no thread per
// lock. The lock is lost, and the loss signal fires exactly once:
//   * at the local validity deadline, if no renewal succeeded before it —
//     also while a renewal is still pending or hanging;
//   * at once, when a majority refuses a renewal (the key expired or was
//     taken over on a majority);
//   * at the deadline after renewals stop for a configured cap
//     (max_hold, max_renewals), reported as errc::hold_limit;
//   * when the client closes (errc::shutting_down).
// The signal is delivered both ways: `GuardOptions::on_lost` runs on the
// client's loop thread (keep it short; it must not call the BlockingClient,
// which would wait for its own thread), and stop_token() is requested.
// After a loss the guard never reacquires by itself: take a new one.
//
// Lifetime: move-only; a moved-from guard is empty. The destructor releases
// the lock (every node, our value only), never throws, and waits at most
// the longest node timeout for the release; a slower release finishes in the
// background. A guard may outlive its client: it then holds nothing, and
// release() reports errc::shutting_down.
//
// Threads: one guard is used by one thread at a time (like
// std::unique_lock); its accessors are safe to call while the loop renews.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <vector>

#include "redlock/error.hpp"
#include "redlock/export.hpp"
#include "redlock/options.hpp"
#include "redlock/outcome.hpp"

namespace redlock {

namespace detail {
class GuardState;
class BlockingClientImpl;
}  // namespace detail

struct GuardOptions {
  // How to acquire (ttl, retries, wait, fenced).
  AcquireOptions acquire;
  // Time between renewals. Default: ttl / 3.
  std::optional<Milliseconds> renew_interval;
  // Stop renewing once the lock has been held this long (measured from the
  // acquisition's start); the lock then runs out at its deadline.
  std::optional<Milliseconds> max_hold;
  // Stop renewing after this many successful renewals.
  std::optional<int> max_renewals;
  // Called once, on the client's loop thread, when the lock is lost.
  std::function<void(std::error_code)> on_lost;
  // The warning before a loss (docs/api.md, "At risk"), off by default: an
  // at-risk episode begins when less than this share of the lock's TTL is
  // left before its validity deadline (renewals have not succeeded in
  // time; 0 < share < 1, e.g. 0.5), and ends when a renewal succeeds or
  // the lock is lost. Each beginning runs `on_at_risk(true)` once, on the
  // client's loop thread (it must not block), requests at_risk_token(),
  // and counts redlock_at_risk_total; an episode a renewal ends runs
  // `on_at_risk(false)` (one the loss ends runs on_lost instead). With
  // renewals every ttl / 3 (the default) a share below 2/3 never fires
  // while renewals succeed.
  std::optional<double> at_risk_share;
  std::function<void(bool at_risk)> on_at_risk;
  // Reentrant holds (docs/engine.md, "Reentrant holds"), off by default: a
  // lock() by an owner that already holds the same lock through this
  // client, taken reentrant too, returns at once — no round trip — with a
  // guard that shares the first one's lock, renewal and loss signal (its
  // own on_lost runs as well); the acquire options are then not used. The
  // lock is released when the last of its holds ends. "The same lock": the
  // same resource, the same set of resources, or the same semaphore and
  // count (a second permit is a second hold, not a second permit). The
  // owner is `owner` when given (an id to pass across threads), else the
  // calling thread. Off by default because a wrong owner breaks exclusion
  // silently — two tasks that run in turn on one thread (coroutines,
  // fibers, an event loop) would share one lock — while without
  // reentrancy the worst case is a wait that runs out.
  bool reentrant = false;
  std::optional<std::string> owner;
};

class REDLOCK_API Guard {
 public:
  Guard() noexcept;
  Guard(Guard&& other) noexcept;
  Guard& operator=(Guard&& other) noexcept;  // releases what this guard held
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
  ~Guard();

  // Whether this guard took the lock (it may have been lost since).
  [[nodiscard]] bool owns_lock() const noexcept { return state_ != nullptr; }
  explicit operator bool() const noexcept { return owns_lock(); }
  // Held, not lost, and the local validity deadline not yet passed.
  [[nodiscard]] bool valid() const noexcept;
  // The current local validity deadline (moves with every renewal).
  [[nodiscard]] TimePoint valid_until() const noexcept;
  // The lock as last renewed: resource, value, fencing token, deadline.
  [[nodiscard]] Lock lock() const;
  [[nodiscard]] std::optional<std::uint64_t> fence() const;
  // Requested when the lock is lost. Empty for an empty guard.
  [[nodiscard]] std::stop_token stop_token() const noexcept;
  // Whether an at-risk episode is going on (GuardOptions::at_risk_share):
  // false once a renewal succeeded again, and once the lock is lost
  // (stop_token() says that). Any thread.
  [[nodiscard]] bool at_risk() const noexcept;
  // Requested when an at-risk episode begins, or when the lock is lost
  // (whichever comes first). A token taken during an episode stays
  // requested; one taken after the episode ended (a renewal succeeded)
  // waits for the next. Empty for an empty guard, or one without
  // GuardOptions::at_risk_share. Any thread.
  [[nodiscard]] std::stop_token at_risk_token() const;
  // Why the lock was lost (empty while held), or why it was not acquired.
  [[nodiscard]] std::error_code error() const;
  // What each node answered to the renewal that lost the lock, in the form
  // of a failed acquire's nodes (NodeOutcome: index, name, status, detail):
  // the round a majority refused (not_held), or the last one that failed
  // (timeout, unreachable, error) or was still unanswered when the deadline
  // passed. One per node of the quorum; `pending` for a node whose answer
  // had not come when the loss was decided. Empty while the lock
  // is held, after a loss by shutting_down or hold_limit, when no renewal
  // round had failed, and for a guard without GuardOptions::on_lost: only a
  // guard that asks to be told of its loss keeps its renewals' per-node
  // answers (a client may hold very many guards). Safe from any thread once
  // error() is set.
  [[nodiscard]] std::vector<NodeOutcome> loss_nodes() const;
  // How many renewals succeeded so far.
  [[nodiscard]] int renewals() const noexcept;
  // The acquisition's result (per-node outcomes, attempts, validity). A
  // held lock keeps it packed; the first call builds this view of it (and
  // ends the program, being noexcept, should that allocation fail).
  [[nodiscard]] const AcquireResult& acquired() const noexcept;

  // Releases now (blocking, bounded by the node timeouts) and empties the
  // guard. Calling it on an empty guard returns a default result.
  ReleaseResult release();
  // The same without waiting: the guard is empty at once and `done` runs
  // once, on the client's loop thread, with the result (at once, on the
  // calling thread, for an empty guard, a hold that is not the last of a
  // reentrant lock, or a client that is gone). `done` must not block. For
  // other languages' event loops (the Python binding's asyncio).
  void release_async(std::function<void(ReleaseResult)> done);

 private:
  friend class detail::BlockingClientImpl;
  // `acquired` null: built from the state on request.
  Guard(std::shared_ptr<detail::GuardState> state, std::weak_ptr<detail::BlockingClientImpl> client,
        std::unique_ptr<AcquireResult> acquired, std::string hold_key = {});
  explicit Guard(AcquireResult failed);
  struct Record;
  Record& record() const;

  std::shared_ptr<detail::GuardState> state_;
  std::weak_ptr<detail::BlockingClientImpl> client_;
  // What only some guards need (guard.cpp): the acquisition's result as
  // acquired() returns it, a reentrant hold's key, a released lock's state.
  // Null for a guard that holds a lock taken in one piece until acquired()
  // is called: a client may hold very many guards.
  mutable std::unique_ptr<Record> record_;
};

}  // namespace redlock
