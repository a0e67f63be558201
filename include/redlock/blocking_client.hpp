// The blocking client: for code without an event loop.
//
// It owns a thread that runs a private libuv loop with an AsyncClient on it.
// Every member function may be called from any number of threads at once;
// each call blocks its caller until the operation's outcome is known (every
// operation is bounded by node timeouts and the retry budget, so none blocks
// forever). Calls must not be made from inside the client's own loop thread.
//
// The destructor stops the loop thread after pending operations complete
// with errc::shutting_down; it never throws.
#pragma once

#include <functional>
#include <memory>
#include <stop_token>

#include "redlock/client_options.hpp"
#include "redlock/config.hpp"
#include "redlock/election.hpp"
#include "redlock/export.hpp"
#include "redlock/guard.hpp"
#include "redlock/inspection.hpp"
#include "redlock/metrics.hpp"
#include "redlock/options.hpp"
#include "redlock/outcome.hpp"

namespace redlock {

class REDLOCK_API BlockingClient {
 public:
  // `metrics`: where to record (shared to aggregate clients); null makes one.
  explicit BlockingClient(QuorumConfig config, std::shared_ptr<Metrics> metrics = nullptr);
  // With the options of an AsyncClient (clock, metrics, persistence
  // re-reads); the clock must outlive the client.
  BlockingClient(QuorumConfig config, ClientOptions options);
  ~BlockingClient();
  BlockingClient(const BlockingClient&) = delete;
  BlockingClient& operator=(const BlockingClient&) = delete;
  BlockingClient(BlockingClient&&) = delete;
  BlockingClient& operator=(BlockingClient&&) = delete;

  // `stop`: requesting it cancels a wait in progress (errc::cancelled), e.g.
  // from a thread that watches for signals or a shutdown path.
  [[nodiscard]] AcquireResult acquire(const Resource& resource, const AcquireOptions& options = {},
                                      std::stop_token stop = {});
  // Every one of `resources` at once, or none (AsyncClient::acquire).
  [[nodiscard]] AcquireResult acquire(const std::vector<Resource>& resources,
                                      const AcquireOptions& options = {},
                                      std::stop_token stop = {});
  // One permit of `semaphore` (AsyncClient::acquire).
  [[nodiscard]] AcquireResult acquire(const Semaphore& semaphore,
                                      const AcquireOptions& options = {},
                                      std::stop_token stop = {});
  // The same without waiting, as lock_async below: `done` runs once, on the
  // client's loop thread, with the result (errc::cancelled when the
  // returned function cancelled the wait in time; a grant that raced the
  // cancel is still reported, and the caller releases it). The same
  // contract for `done` and the cancel function as lock_async's.
  using CancelAcquire = std::function<void()>;
  CancelAcquire acquire_async(const Resource& resource, const AcquireOptions& options,
                              std::function<void(AcquireResult)> done);
  [[nodiscard]] ExtendResult extend(const Lock& lock, const ExtendOptions& options = {});
  ReleaseResult release(const Lock& lock);
  // The same without waiting: `done` runs once, on the client's loop
  // thread, with the result (errc::shutting_down, at once on the calling
  // thread, when the client is closing). The same contract for `done` as
  // lock_async's.
  void release_async(const Lock& lock, std::function<void(ReleaseResult)> done);

  // Acquires and returns a Guard that renews the lock on this client's loop
  // until it is released or lost (see guard.hpp). When the acquire fails,
  // the guard is empty and error() says why.
  [[nodiscard]] Guard lock(const Resource& resource, const GuardOptions& options = {},
                           std::stop_token stop = {});
  // The same without waiting: returns at once, and `done` runs once, on the
  // client's loop thread, with the guard (empty, error() saying why, when
  // the acquire failed or was cancelled). `done` must not block nor call
  // this client's blocking functions (they refuse the loop thread), and a
  // guard it drops there cannot release (the lock then lives out its TTL):
  // hand the guard to another thread. The returned function cancels the
  // acquire (errc::cancelled) if it is still waiting; it is thread-safe,
  // may be called any number of times, and does nothing once decided or
  // once the client is gone. Not reentrant (GuardOptions::reentrant is
  // ignored: a hold's owner is a thread). For event loops of other
  // languages (the Python binding's asyncio).
  using CancelLock = std::function<void()>;
  CancelLock lock_async(const Resource& resource, const GuardOptions& options,
                        std::function<void(Guard)> done);
  CancelLock lock_async(const std::vector<Resource>& resources, const GuardOptions& options,
                        std::function<void(Guard)> done);
  CancelLock lock_async(const Semaphore& semaphore, const GuardOptions& options,
                        std::function<void(Guard)> done);
  // The same for several resources at once and for a semaphore permit: the
  // guard renews, signals and releases them as it does a lock on one.
  [[nodiscard]] Guard lock(const std::vector<Resource>& resources, const GuardOptions& options = {},
                           std::stop_token stop = {});
  [[nodiscard]] Guard lock(const Semaphore& semaphore, const GuardOptions& options = {},
                           std::stop_token stop = {});

  // Campaigns in `election` (election.hpp): waits until this client leads
  // (or `options.wait` runs out, or `stop` is requested) and returns a guard
  // of the leader's lock — renewed, its loss signalled at once; its fence()
  // is the term. Resign with release(). An empty name or a payload over
  // Election::kMaxPayloadBytes: errc::invalid_argument.
  [[nodiscard]] Guard campaign(const Election& election, const CampaignOptions& options = {},
                               std::stop_token stop = {});
  // The current leader by majority read (AsyncClient::leader).
  [[nodiscard]] LeaderResult leader(const Election& election);

  // Who holds `resource` / `semaphore`'s permits (AsyncClient::inspect).
  [[nodiscard]] Inspection inspect(const Resource& resource);
  [[nodiscard]] Inspection inspect(const Semaphore& semaphore);

  [[nodiscard]] const QuorumConfig& config() const noexcept;
  [[nodiscard]] std::shared_ptr<Metrics> metrics() const noexcept;
  // Connection state and persistence of every node (asked on the loop).
  [[nodiscard]] std::vector<NodeHealth> node_health();

 private:
  std::shared_ptr<detail::BlockingClientImpl> impl_;
};

}  // namespace redlock
