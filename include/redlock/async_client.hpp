// The asynchronous client: Redlock on the caller's libuv loop.
//
// Threading: every member function must be called on the loop's thread, and
// every callback runs on that thread.
//
// Callback contract (as libuv's and hiredis's):
//   * A completion callback is called exactly once per started operation,
//     also when the operation is cancelled (errc::cancelled) or the client
//     closes (errc::shutting_down).
//   * It is never called from inside the call that started the operation;
//     at the earliest on the next loop iteration.
//   * The result is passed by value; it is the callback's to keep.
//   * A callback must not throw. An exception escaping it terminates the
//     program (it would otherwise unwind through libuv's C frames).
//   * A callback may start new operations and may call close().
//
// Lifetime:
//   * The client connects to every node when constructed, and reconnects with
//     capped backoff whenever a connection fails.
//   * close() (or the destructor) stops the client: pending operations
//     complete with errc::shutting_down before close() returns, queued
//     requests get one write attempt, and all handles begin closing. The
//     memory behind them is freed by libuv's close callbacks, so the loop must
//     run once more after close() before uv_loop_close() can succeed.
//     `on_closed`, if given, runs on the loop once every handle is closed.
//   * An operation started after close() completes at once, inside the
//     starting call, with errc::shutting_down: the loop will not turn for it.
//   * The loop must outlive the client.
//
// Signals: libuv writes with write(2), so a node that closes its end while a
// request is being written raises SIGPIPE on the loop's thread. Ignore or
// block SIGPIPE in a program that runs an AsyncClient on its own loop (as
// for any libuv network program); BlockingClient does it for its thread.
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <vector>

#include "redlock/client_options.hpp"
#include "redlock/clock.hpp"
#include "redlock/config.hpp"
#include "redlock/election.hpp"
#include "redlock/export.hpp"
#include "redlock/inspection.hpp"
#include "redlock/metrics.hpp"
#include "redlock/options.hpp"
#include "redlock/outcome.hpp"

namespace redlock {

namespace detail {
class ClientCore;
class ClientAccess;
class Operation;
}  // namespace detail

// Cancels an operation in flight. Cheap to copy; outliving the operation or
// the client is harmless (cancel() then does nothing).
class REDLOCK_API OperationHandle {
 public:
  OperationHandle() = default;
  explicit OperationHandle(std::weak_ptr<detail::Operation> op) : op_(std::move(op)) {}
  // Requests cancellation. The operation's callback still runs exactly once,
  // with errc::cancelled unless it had already been decided. A cancelled
  // acquire releases whatever it had been granted.
  void cancel() const;

 private:
  std::weak_ptr<detail::Operation> op_;
};

class REDLOCK_API AsyncClient {
 public:
  using AcquireCallback = std::function<void(AcquireResult)>;
  using ExtendCallback = std::function<void(ExtendResult)>;
  using ReleaseCallback = std::function<void(ReleaseResult)>;
  using InspectCallback = std::function<void(Inspection)>;
  // observe() calls it more than once: see there.
  using LeaderCallback = std::function<void(const LeaderResult&)>;

  // Validates the configuration (errors are reported by every operation as
  // errc::config_error) and starts connecting to every node.
  AsyncClient(uv_loop_t* loop, QuorumConfig config, ClientOptions options = {});
  ~AsyncClient();
  AsyncClient(const AsyncClient&) = delete;
  AsyncClient& operator=(const AsyncClient&) = delete;
  AsyncClient(AsyncClient&&) = delete;
  AsyncClient& operator=(AsyncClient&&) = delete;

  // Acquires `resource` on a majority (docs/algorithm.md, "Acquire"), retrying as configured.
  OperationHandle acquire(const Resource& resource, const AcquireOptions& options,
                          AcquireCallback callback);
  // Acquires every one of `resources` at once, or none (docs/algorithm.md,
  // "Several resources at once"): each node grants all of them or none in
  // one script call, and the lock holds when a majority granted all. It
  // excludes every other lock on any of the resources, plain locks
  // included. At most 64 distinct, non-empty names; else
  // errc::invalid_argument. The result's Lock lists them in `resources`
  // (and their tokens in `fences` when fenced); extend and release take it
  // like any lock. A set that has to wait (exclusive, not a try-lock,
  // `fair` not false) waits its turn: it takes the names one at a time in
  // byte order, each in its fair line, and makes them one lock, fenced
  // with one token for every name when fenced ("A set's turn";
  // AcquireResult::places). The callback runs once, as
  // for any acquire; cancelling releases whatever members it held.
  OperationHandle acquire(const std::vector<Resource>& resources, const AcquireOptions& options,
                          AcquireCallback callback);
  // Acquires one permit of `semaphore` (docs/algorithm.md, "Semaphores"):
  // at most semaphore.permits() holders at once. errc::invalid_argument when
  // the nodes record another count while a permit is held (the outcome of
  // such a node says permits_differ and the count it records), for a count
  // of 0 or above Semaphore::kMaxPermits, or an empty name. The Lock says
  // which permit it holds (Lock::permit).
  OperationHandle acquire(const Semaphore& semaphore, const AcquireOptions& options,
                          AcquireCallback callback);
  // Extends a lock we hold on a majority (docs/algorithm.md, "Extend"). Never re-creates a key
  // that has expired. Fails with errc::lost when a majority refused.
  OperationHandle extend(const Lock& lock, const ExtendOptions& options, ExtendCallback callback);
  // Releases a lock on every node (docs/algorithm.md, "Release"); deletes only our own value.
  OperationHandle release(const Lock& lock, ReleaseCallback callback);

  // Who holds `resource` and for how long (inspection.hpp): every node's
  // value, PTTL and fencing counter, and the majority view. Writes nothing;
  // completes once every node answered or timed out (the node timeout).
  OperationHandle inspect(const Resource& resource, InspectCallback callback);
  // The same for every permit of `semaphore` (up to the larger of its
  // count and the count the nodes record).
  OperationHandle inspect(const Semaphore& semaphore, InspectCallback callback);

  // The current leader of `election` by majority read (election.hpp); the
  // callback runs once.
  OperationHandle leader(const Election& election, LeaderCallback callback);
  // Follows `election`'s leader until cancelled: the callback runs on the
  // loop with the first view, then with each change (another term or
  // payload, a leader appearing or going, a read that found no majority
  // after one that did, or back), and last once with errc::cancelled (or
  // shutting_down when the client closes). Releases and elections are
  // pushed over the election's channels; `options.poll` bounds how late a
  // leader that vanished without a release is noticed.
  OperationHandle observe(const Election& election, const ObserveOptions& options,
                          LeaderCallback callback);

  // See the lifetime contract above. Idempotent.
  void close(std::function<void()> on_closed = {});

  [[nodiscard]] const QuorumConfig& config() const noexcept;
  // Majority size: nodes / 2 + 1.
  [[nodiscard]] std::size_t quorum() const noexcept;
  // Connection state and persistence of every node, in config order.
  [[nodiscard]] std::vector<NodeHealth> node_health() const;
  // This client's metrics (see metrics.hpp); safe to read from any thread.
  [[nodiscard]] std::shared_ptr<Metrics> metrics() const noexcept;

 private:
  friend class detail::ClientAccess;  // the guard's renewals run on the same core
  std::shared_ptr<detail::ClientCore> core_;
};

}  // namespace redlock
