// The machinery behind BlockingClient: a private loop on its own thread,
// with an AsyncClient on it, fed jobs through a uv_async_t. Guards keep a
// weak reference to it, so a guard that outlives its client finds it gone.
#pragma once

#include <uv.h>

#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <vector>

#include "holding/hold_registry.hpp"
#include "redlock/async_client.hpp"
#include "redlock/error.hpp"
#include "redlock/guard.hpp"

namespace redlock::detail {

class ClientAccess {
 public:
  static ClientCore& core(AsyncClient& client) { return *client.core_; }
};

class BlockingClientImpl : public std::enable_shared_from_this<BlockingClientImpl> {
 public:
  BlockingClientImpl(QuorumConfig config, ClientOptions options);
  ~BlockingClientImpl();
  BlockingClientImpl(const BlockingClientImpl&) = delete;
  BlockingClientImpl& operator=(const BlockingClientImpl&) = delete;

  // Runs `start(client, done)` on the loop thread and waits for `done`.
  // Returns `refused` with errc::invalid_argument when called on the loop
  // thread itself (it would wait for itself), errc::shutting_down when the
  // client is stopping.
  // `start` returns the OperationHandle of what it started; when `stop` is
  // requested meanwhile, that operation is cancelled (errc::cancelled).
  template <typename Result, typename Start>
  Result call(Start start, std::stop_token stop = {});

  // Starts an acquire of some kind on the client (a resource, several, a
  // permit) with the given options and callback.
  using AcquireStart = std::function<OperationHandle(AsyncClient&, const AcquireOptions&,
                                                     AsyncClient::AcquireCallback)>;
  // `target` names what is locked (for reentrant holds, HoldRegistry).
  Guard lock(const AcquireStart& acquire, const std::string& target, const GuardOptions& options,
             std::stop_token stop);
  [[nodiscard]] HoldRegistry& holds() noexcept { return holds_; }
  // BlockingClient::lock_async: starts the acquire on the loop and returns
  // at once; `done` runs on the loop thread with the guard. `acquire` must
  // own what it locks (it outlives the call). An acquire_async whose
  // result becomes the guard.
  std::function<void()> lock_async(AcquireStart acquire, const GuardOptions& options,
                                   std::function<void(Guard)> done);
  // BlockingClient::acquire_async: the same with the acquire's result, no
  // guard.
  std::function<void()> acquire_async(AcquireStart acquire, const AcquireOptions& options,
                                      std::function<void(AcquireResult)> done);
  // BlockingClient::release_async.
  void release_async(Lock lock, std::function<void(ReleaseResult)> done);
  // BlockingClient::campaign (election.hpp).
  Guard campaign(const Election& election, const CampaignOptions& options, std::stop_token stop);
  // Stops the guard's renewals and releases its lock; waits at most `limit`
  // (nullopt: until done).
  ReleaseResult release_guard(const std::shared_ptr<GuardState>& state,
                              std::optional<Milliseconds> limit);
  // The same without waiting: `done` runs on the loop thread (on this one,
  // with errc::shutting_down, when the client is stopping).
  void release_guard_async(const std::shared_ptr<GuardState>& state,
                           std::function<void(ReleaseResult)> done);

  [[nodiscard]] const QuorumConfig& config() const noexcept { return config_; }
  [[nodiscard]] std::shared_ptr<Metrics> metrics() const noexcept { return metrics_; }
  // The longest request timeout of any node: how long a release can take.
  [[nodiscard]] Milliseconds longest_node_timeout() const noexcept;

 private:
  static void on_wake(uv_async_t* handle);
  bool submit(std::function<void()> job);

  QuorumConfig config_;
  std::shared_ptr<Metrics> metrics_;
  uv_loop_t loop_{};
  uv_async_t wake_{};
  std::optional<AsyncClient> client_;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::function<void()>> jobs_;
  bool stopping_ = false;
  HoldRegistry holds_;
};

template <typename Result, typename Start>
Result BlockingClientImpl::call(Start start, std::stop_token stop) {
  Result refused;
  if (std::this_thread::get_id() == thread_.get_id()) {
    refused.error = make_error_code(errc::invalid_argument);
    return refused;
  }
  // Shared with the callback: the waiting thread may wake and return while
  // the loop thread is still inside set_value.
  auto promise = std::make_shared<std::promise<Result>>();
  std::future<Result> future = promise->get_future();
  // Filled on the loop by the start job; read there by a later cancel job
  // (jobs run in order), so it needs no lock.
  auto handle = std::make_shared<OperationHandle>();
  const bool accepted = submit([this, promise, handle, &start] {
    *handle = start(*client_, [promise](Result result) { promise->set_value(std::move(result)); });
  });
  if (!accepted) {
    refused.error = make_error_code(errc::shutting_down);
    return refused;
  }
  std::stop_callback cancel_on_stop(
      stop, [this, handle] { (void)submit([handle] { handle->cancel(); }); });
  return future.get();
}

}  // namespace redlock::detail
