#include "redlock/blocking_client.hpp"

#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <uv.h>

#include "redlock/async_client.hpp"
#include "redlock/error.hpp"

namespace redlock {

class BlockingClient::Impl {
 public:
  explicit Impl(QuorumConfig config) : config_(config) {
    uv_loop_init(&loop_);
    uv_async_init(&loop_, &wake_, &Impl::on_wake);
    wake_.data = this;
    // Built before the thread starts: nothing else touches the loop yet.
    client_.emplace(&loop_, std::move(config));
    thread_ = std::thread([this] { uv_run(&loop_, UV_RUN_DEFAULT); });
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      stopping_ = true;
      jobs_.emplace_back([this] {
        client_->close([this] { uv_close(reinterpret_cast<uv_handle_t*>(&wake_), nullptr); });
      });
    }
    uv_async_send(&wake_);
    thread_.join();
    client_.reset();
    uv_loop_close(&loop_);
  }

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Runs `start(client, done)` on the loop thread and waits for `done`.
  template <typename Result, typename Start>
  Result call(Start start) {
    Result refused;
    if (std::this_thread::get_id() == thread_.get_id()) {
      // Blocking the loop thread on itself would never return.
      refused.error = make_error_code(errc::invalid_argument);
      return refused;
    }
    // Shared with the callback: the waiting thread may wake and return
    // while the loop thread is still inside set_value.
    auto promise = std::make_shared<std::promise<Result>>();
    std::future<Result> future = promise->get_future();
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (stopping_) {
        refused.error = make_error_code(errc::shutting_down);
        return refused;
      }
      jobs_.emplace_back([this, promise, &start] {
        start(*client_, [promise](Result result) { promise->set_value(std::move(result)); });
      });
    }
    uv_async_send(&wake_);
    return future.get();
  }

  const QuorumConfig& config() const noexcept { return config_; }

 private:
  static void on_wake(uv_async_t* handle) {
    auto* self = static_cast<Impl*>(handle->data);
    std::vector<std::function<void()>> jobs;
    {
      std::lock_guard<std::mutex> guard(self->mutex_);
      jobs.swap(self->jobs_);
    }
    for (auto& job : jobs) job();
  }

  QuorumConfig config_;
  uv_loop_t loop_{};
  uv_async_t wake_{};
  std::optional<AsyncClient> client_;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::function<void()>> jobs_;
  bool stopping_ = false;
};

BlockingClient::BlockingClient(QuorumConfig config)
    : impl_(std::make_unique<Impl>(std::move(config))) {}

BlockingClient::~BlockingClient() = default;

AcquireResult BlockingClient::acquire(const Resource& resource, const AcquireOptions& options) {
  return impl_->call<AcquireResult>([&](AsyncClient& client, auto done) {
    client.acquire(resource, options, std::move(done));
  });
}

ExtendResult BlockingClient::extend(const Lock& lock, const ExtendOptions& options) {
  return impl_->call<ExtendResult>(
      [&](AsyncClient& client, auto done) { client.extend(lock, options, std::move(done)); });
}

ReleaseResult BlockingClient::release(const Lock& lock) {
  return impl_->call<ReleaseResult>(
      [&](AsyncClient& client, auto done) { client.release(lock, std::move(done)); });
}

const QuorumConfig& BlockingClient::config() const noexcept { return impl_->config(); }

}  // namespace redlock
