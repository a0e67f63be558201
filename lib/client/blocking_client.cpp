#include "redlock/blocking_client.hpp"

#include <algorithm>
#include <sstream>
#include <string_view>

#include "client/blocking_client_impl.hpp"
#include "holding/guard_state.hpp"
#include "operations/launch.hpp"
#include "operations/release_operation.hpp"
#include "scripts/script_calls.hpp"
#include "scripts/scripts.hpp"
#include "transport/sigpipe_guard.hpp"

namespace redlock {

namespace detail {

BlockingClientImpl::BlockingClientImpl(QuorumConfig config, ClientOptions options)
    : config_(config), metrics_(options.metrics ? options.metrics : std::make_shared<Metrics>()) {
  uv_loop_init(&loop_);
  uv_async_init(&loop_, &wake_, &BlockingClientImpl::on_wake);
  wake_.data = this;
  // Built before the thread starts: nothing else touches the loop yet.
  options.metrics = metrics_;
  client_.emplace(&loop_, std::move(config), options);
  thread_ = std::thread([this] {
    // A node that vanished mid-write must not kill the process.
    block_sigpipe_on_this_thread();
    uv_run(&loop_, UV_RUN_DEFAULT);
  });
}

BlockingClientImpl::~BlockingClientImpl() {
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

bool BlockingClientImpl::submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (stopping_) return false;
    jobs_.push_back(std::move(job));
  }
  uv_async_send(&wake_);
  return true;
}

void BlockingClientImpl::on_wake(uv_async_t* handle) {
  auto* self = static_cast<BlockingClientImpl*>(handle->data);
  std::vector<std::function<void()>> jobs;
  {
    std::lock_guard<std::mutex> guard(self->mutex_);
    jobs.swap(self->jobs_);
  }
  for (auto& job : jobs) job();
}

Milliseconds BlockingClientImpl::longest_node_timeout() const noexcept {
  Milliseconds longest{0};
  for (const NodeConfig& node : config_.nodes) {
    longest = std::max(longest, effective_node_timeout(config_.lock, node));
  }
  return longest;
}

namespace {
struct LockOutcome {
  std::error_code error;  // mirrors acquired.error, for call()'s refusals
  AcquireResult acquired;
  std::shared_ptr<GuardState> state;
};
}  // namespace

namespace {

// The owner of a reentrant hold: the caller's id, or the calling thread.
std::string owner_of(const GuardOptions& options) {
  if (options.owner) return "id:" + *options.owner;
  std::ostringstream thread;
  thread << std::this_thread::get_id();
  return "thread:" + thread.str();
}

}  // namespace

Guard BlockingClientImpl::lock(const AcquireStart& acquire, const std::string& target,
                               const GuardOptions& options, std::stop_token stop) {
  // A share of the TTL: strictly between 0 (never) and 1 (always).
  if (options.at_risk_share && !(*options.at_risk_share > 0.0 && *options.at_risk_share < 1.0)) {
    AcquireResult refused;
    refused.error = make_error_code(errc::invalid_argument);
    return Guard(std::move(refused));
  }
  std::string hold_key;
  if (options.reentrant) {
    hold_key = HoldRegistry::key(target, owner_of(options));
    if (std::shared_ptr<GuardState> held = holds_.join(hold_key)) {
      // Held already: a hold of the same lock, with no round trip.
      if (options.on_lost) {
        (void)submit([held, on_lost = options.on_lost] { held->also_on_lost(on_lost); });
      }
      auto joined = std::make_unique<AcquireResult>();
      joined->lock = held->snapshot();
      const auto left = joined->lock->valid_until - SteadyClock::now();
      joined->validity = std::max(Milliseconds(0), std::chrono::floor<Milliseconds>(left));
      return Guard(std::move(held), weak_from_this(), std::move(joined), std::move(hold_key));
    }
  }
  LockOutcome outcome = call<LockOutcome>(
      [&](AsyncClient& client, auto done) {
        ClientCore& core = ClientAccess::core(client);
        return acquire(client, options.acquire,
                       [&core, options, done = std::move(done)](AcquireResult result) mutable {
                         LockOutcome out;
                         out.error = result.error;
                         if (result.ok()) {
                           // Created on the loop in the acquire's own callback, so
                           // renewal starts with no gap. The state keeps the whole
                           // result, packed (Guard::acquired() unpacks it).
                           AcquireRecord record(result, core.node_names());
                           out.state = launch<GuardState>(core, std::move(*result.lock), options,
                                                          std::move(record));
                         } else {
                           out.acquired = std::move(result);
                         }
                         done(std::move(out));
                       });
      },
      std::move(stop));
  if (!outcome.state) {
    if (!outcome.acquired.error) outcome.acquired.error = outcome.error;
    return Guard(std::move(outcome.acquired));
  }
  if (!hold_key.empty()) holds_.add(hold_key, outcome.state);
  return Guard(std::move(outcome.state), weak_from_this(), nullptr, std::move(hold_key));
}

std::function<void()> BlockingClientImpl::lock_async(AcquireStart acquire,
                                                     const GuardOptions& options,
                                                     std::function<void(Guard)> done) {
  // The acquire's result becomes a guard on the loop, in the acquire's own
  // callback, so renewal starts with no gap.
  return acquire_async(
      std::move(acquire), options.acquire,
      [this, weak = weak_from_this(), options, done = std::move(done)](AcquireResult result) {
        if (!result.ok()) {
          done(Guard(std::move(result)));
          return;
        }
        ClientCore& core = ClientAccess::core(*client_);
        AcquireRecord record(result, core.node_names());
        auto state = launch<GuardState>(core, std::move(*result.lock), options, std::move(record));
        done(Guard(std::move(state), weak, nullptr));
      });
}

std::function<void()> BlockingClientImpl::acquire_async(AcquireStart acquire,
                                                        const AcquireOptions& options,
                                                        std::function<void(AcquireResult)> done) {
  // Filled on the loop by the start job, read there by a cancel job (jobs
  // run in order).
  auto handle = std::make_shared<OperationHandle>();
  const bool accepted = submit([this, handle, acquire = std::move(acquire), options, done] {
    *handle = acquire(*client_, options, done);
  });
  if (!accepted) {
    AcquireResult refused;
    refused.error = make_error_code(errc::shutting_down);
    done(std::move(refused));
    return [] {};
  }
  return [weak = weak_from_this(), handle] {
    if (const std::shared_ptr<BlockingClientImpl> impl = weak.lock()) {
      (void)impl->submit([handle] { handle->cancel(); });
    }
  };
}

void BlockingClientImpl::release_async(Lock lock, std::function<void(ReleaseResult)> done) {
  const bool accepted =
      submit([this, lock = std::move(lock), done] { (void)client_->release(lock, done); });
  if (!accepted) {
    ReleaseResult refused;
    refused.error = make_error_code(errc::shutting_down);
    done(std::move(refused));
  }
}

namespace {
// An unbounded campaign asks in rounds of this length, so that its retry
// budget stays bounded like any acquire's.
constexpr Milliseconds kCampaignRound{std::chrono::hours(1)};
}  // namespace

Guard BlockingClientImpl::campaign(const Election& election, const CampaignOptions& options,
                                   std::stop_token stop) {
  if (election.name().empty() || options.payload.size() > Election::kMaxPayloadBytes) {
    AcquireResult refused;
    refused.error = make_error_code(errc::invalid_argument);
    return Guard(std::move(refused));
  }
  const Resource resource = election.resource();
  GuardOptions guarded;
  guarded.acquire.fenced = true;  // the term
  guarded.acquire.payload = options.payload;
  guarded.acquire.ttl = options.ttl;
  guarded.acquire.wait = options.wait.value_or(kCampaignRound);
  guarded.on_lost = options.on_lost;
  const auto start = [&resource](AsyncClient& client, const AcquireOptions& acquire,
                                 AsyncClient::AcquireCallback done) {
    return client.acquire(resource, acquire, std::move(done));
  };
  for (;;) {
    Guard guard = lock(start, "election " + resource.str(), guarded, stop);
    if (guard) {
      // Observers hear of the new term at once (best effort: they also
      // read the leader periodically).
      const Lock held = guard.lock();
      (void)submit([this, held] {
        ClientCore& core = ClientAccess::core(*client_);
        const std::string channel =
            elected_channel(core.keys_for(held.resource.str()).key_prefix(), held.resource.str());
        const std::string term = "term:" + std::to_string(held.fence.value_or(0));
        const AnnounceCall call{.channel = channel, .message = term};
        for (auto& node : core.nodes()) send_cleanup_to(*node, call, held.valid_until);
      });
      return guard;
    }
    const std::error_code error = guard.error();
    const bool keep_asking = error == make_error_code(errc::not_acquired) ||
                             error == make_error_code(errc::no_quorum) ||
                             error == make_error_code(errc::validity_too_short) ||
                             error == make_error_code(errc::fencing_failed);
    if (options.wait || !keep_asking || stop.stop_requested()) return guard;
  }
}

ReleaseResult BlockingClientImpl::release_guard(const std::shared_ptr<GuardState>& state,
                                                std::optional<Milliseconds> limit) {
  ReleaseResult refused;
  if (std::this_thread::get_id() == thread_.get_id()) {
    refused.error = make_error_code(errc::invalid_argument);
    return refused;
  }
  auto promise = std::make_shared<std::promise<ReleaseResult>>();
  std::future<ReleaseResult> future = promise->get_future();
  const bool accepted = submit([this, state, promise] {
    const Lock lock = state->stop();
    client_->release(lock,
                     [promise](ReleaseResult result) { promise->set_value(std::move(result)); });
  });
  if (!accepted) {
    refused.error = make_error_code(errc::shutting_down);
    return refused;
  }
  if (limit && future.wait_for(*limit) != std::future_status::ready) {
    // The release goes on in the background; the caller is not held longer.
    refused.error = make_error_code(errc::timeout);
    return refused;
  }
  return future.get();
}

void BlockingClientImpl::release_guard_async(const std::shared_ptr<GuardState>& state,
                                             std::function<void(ReleaseResult)> done) {
  auto shared_done = std::make_shared<std::function<void(ReleaseResult)>>(std::move(done));
  const bool accepted = submit([this, state, shared_done] {
    const Lock lock = state->stop();
    client_->release(lock,
                     [shared_done](ReleaseResult result) { (*shared_done)(std::move(result)); });
  });
  if (!accepted) {
    ReleaseResult refused;
    refused.error = make_error_code(errc::shutting_down);
    (*shared_done)(std::move(refused));
  }
}

}  // namespace detail

BlockingClient::BlockingClient(QuorumConfig config, std::shared_ptr<Metrics> metrics)
    : BlockingClient(std::move(config), ClientOptions{.metrics = std::move(metrics)}) {}

BlockingClient::BlockingClient(QuorumConfig config, ClientOptions options)
    : impl_(std::make_shared<detail::BlockingClientImpl>(std::move(config), std::move(options))) {}

BlockingClient::~BlockingClient() = default;

AcquireResult BlockingClient::acquire(const Resource& resource, const AcquireOptions& options,
                                      std::stop_token stop) {
  return impl_->call<AcquireResult>(
      [&](AsyncClient& client, auto done) {
        return client.acquire(resource, options, std::move(done));
      },
      std::move(stop));
}

ExtendResult BlockingClient::extend(const Lock& lock, const ExtendOptions& options) {
  return impl_->call<ExtendResult>([&](AsyncClient& client, auto done) {
    return client.extend(lock, options, std::move(done));
  });
}

ReleaseResult BlockingClient::release(const Lock& lock) {
  return impl_->call<ReleaseResult>(
      [&](AsyncClient& client, auto done) { return client.release(lock, std::move(done)); });
}

void BlockingClient::release_async(const Lock& lock, std::function<void(ReleaseResult)> done) {
  impl_->release_async(lock, std::move(done));
}

AcquireResult BlockingClient::acquire(const std::vector<Resource>& resources,
                                      const AcquireOptions& options, std::stop_token stop) {
  return impl_->call<AcquireResult>(
      [&](AsyncClient& client, auto done) {
        return client.acquire(resources, options, std::move(done));
      },
      std::move(stop));
}

AcquireResult BlockingClient::acquire(const Semaphore& semaphore, const AcquireOptions& options,
                                      std::stop_token stop) {
  return impl_->call<AcquireResult>(
      [&](AsyncClient& client, auto done) {
        return client.acquire(semaphore, options, std::move(done));
      },
      std::move(stop));
}

namespace {
// What to acquire, for BlockingClientImpl::lock.
template <typename Target>
detail::BlockingClientImpl::AcquireStart acquire_of(const Target& target) {
  return [&target](AsyncClient& client, const AcquireOptions& options,
                   AsyncClient::AcquireCallback done) {
    return client.acquire(target, options, std::move(done));
  };
}

// What a lock is, for its reentrant holds: kind and names, each name
// length-prefixed so that no two targets share a text.
std::string named(std::string_view name) {
  return std::to_string(name.size()) + ":" + std::string(name);
}
}  // namespace

Guard BlockingClient::lock(const Resource& resource, const GuardOptions& options,
                           std::stop_token stop) {
  // A reader and a writer of one resource are different holds: a reentrant
  // writer never joins a read hold, nor a reader a write hold.
  const std::string side = options.acquire.shared ? "reader of resource " : "resource ";
  return impl_->lock(acquire_of(resource), side + named(resource.str()), options, std::move(stop));
}

namespace {
// What to acquire, for BlockingClientImpl::lock_async: a copy of the
// target, which outlives the call.
template <typename Target>
detail::BlockingClientImpl::AcquireStart acquire_copy_of(Target target) {
  return [target = std::move(target)](AsyncClient& client, const AcquireOptions& options,
                                      AsyncClient::AcquireCallback done) {
    return client.acquire(target, options, std::move(done));
  };
}

GuardOptions without_reentrancy(const GuardOptions& options) {
  GuardOptions async_options = options;
  async_options.reentrant = false;  // an owner is a thread; a callback has none
  return async_options;
}
}  // namespace

BlockingClient::CancelLock BlockingClient::lock_async(const Resource& resource,
                                                      const GuardOptions& options,
                                                      std::function<void(Guard)> done) {
  return impl_->lock_async(acquire_copy_of(resource), without_reentrancy(options), std::move(done));
}

BlockingClient::CancelLock BlockingClient::acquire_async(const Resource& resource,
                                                         const AcquireOptions& options,
                                                         std::function<void(AcquireResult)> done) {
  return impl_->acquire_async(acquire_copy_of(resource), options, std::move(done));
}

BlockingClient::CancelLock BlockingClient::lock_async(const std::vector<Resource>& resources,
                                                      const GuardOptions& options,
                                                      std::function<void(Guard)> done) {
  return impl_->lock_async(acquire_copy_of(resources), without_reentrancy(options),
                           std::move(done));
}

BlockingClient::CancelLock BlockingClient::lock_async(const Semaphore& semaphore,
                                                      const GuardOptions& options,
                                                      std::function<void(Guard)> done) {
  return impl_->lock_async(acquire_copy_of(semaphore), without_reentrancy(options),
                           std::move(done));
}

Guard BlockingClient::lock(const std::vector<Resource>& resources, const GuardOptions& options,
                           std::stop_token stop) {
  std::string target = "resources";
  for (const Resource& resource : resources) target += " " + named(resource.str());
  return impl_->lock(acquire_of(resources), target, options, std::move(stop));
}

Guard BlockingClient::lock(const Semaphore& semaphore, const GuardOptions& options,
                           std::stop_token stop) {
  return impl_->lock(
      acquire_of(semaphore),
      "semaphore " + std::to_string(semaphore.permits()) + " " + named(semaphore.name()), options,
      std::move(stop));
}

Guard BlockingClient::campaign(const Election& election, const CampaignOptions& options,
                               std::stop_token stop) {
  return impl_->campaign(election, options, std::move(stop));
}

LeaderResult BlockingClient::leader(const Election& election) {
  return impl_->call<LeaderResult>(
      [&](AsyncClient& client, auto done) { return client.leader(election, std::move(done)); });
}

Inspection BlockingClient::inspect(const Resource& resource) {
  return impl_->call<Inspection>(
      [&](AsyncClient& client, auto done) { return client.inspect(resource, std::move(done)); });
}

Inspection BlockingClient::inspect(const Semaphore& semaphore) {
  return impl_->call<Inspection>(
      [&](AsyncClient& client, auto done) { return client.inspect(semaphore, std::move(done)); });
}

const QuorumConfig& BlockingClient::config() const noexcept { return impl_->config(); }

std::shared_ptr<Metrics> BlockingClient::metrics() const noexcept { return impl_->metrics(); }

std::vector<NodeHealth> BlockingClient::node_health() {
  struct Health {
    std::error_code error;
    std::vector<NodeHealth> nodes;
  };
  Health health = impl_->call<Health>([](AsyncClient& client, auto done) {
    done(Health{{}, client.node_health()});
    return OperationHandle{};
  });
  return std::move(health.nodes);
}

}  // namespace redlock
