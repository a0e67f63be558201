#include "client_driver.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "redlock/config.hpp"

namespace redlock::bench {

namespace {
// The stock adapter has no request timeout. The client's default node
// timeout, min(50 ms, ttl / 100), is shorter than the scheduling stalls of a
// loaded 2-vCPU machine running 5 servers, which would then fail a run with
// release timeouts; REDLOCK_BENCH_NODE_TIMEOUT_MS=0 restores the default.
constexpr long kDefaultBenchNodeTimeoutMs = 1000;

Milliseconds bench_node_timeout() {
  const char* text = std::getenv("REDLOCK_BENCH_NODE_TIMEOUT_MS");
  if (text == nullptr || *text == '\0') return Milliseconds(kDefaultBenchNodeTimeoutMs);
  return Milliseconds(std::strtol(text, nullptr, 10));
}

std::vector<std::string> addresses_of(const std::vector<BenchNode>& nodes) {
  std::vector<std::string> addresses;
  for (const BenchNode& node : nodes) addresses.push_back(node.address());
  return addresses;
}
}  // namespace

ClientDriver::ClientDriver(uv_loop_t* loop, const std::vector<BenchNode>& nodes,
                           std::size_t workers, bool release_at_majority)
    : ClientDriver(loop, addresses_of(nodes), workers) {
  if (config_.ok()) config_.config->lock.release_at_majority = release_at_majority;
}

ClientDriver::ClientDriver(uv_loop_t* loop, const std::vector<std::string>& addresses,
                           std::size_t workers)
    : loop_(loop), config_(config_from_addresses(addresses)) {
  if (config_.ok()) config_.config->lock.node_timeout = bench_node_timeout();
  resources_.reserve(workers);
  for (std::size_t worker = 0; worker < workers; ++worker) {
    resources_.emplace_back("bench:" + std::to_string(worker));
  }
}

ClientDriver::ClientDriver(uv_loop_t* loop, ConfigResult config, AcquireOptions options,
                           std::string per_cycle_prefix)
    : loop_(loop),
      config_(std::move(config)),
      options_(options),
      per_cycle_prefix_(std::move(per_cycle_prefix)) {}

ClientDriver::~ClientDriver() { shut_down(); }

std::string ClientDriver::connect() {
  if (!config_.ok()) return config_.error.to_string();
  // The client connects in the background; requests made meanwhile wait for
  // the connection, so the warm-up cycles are what waits for it here.
  client_ = std::make_unique<AsyncClient>(loop_, *config_.config);
  return {};
}

void ClientDriver::start_cycle(std::size_t worker) {
  const Resource resource = per_cycle_prefix_.empty()
                                ? resources_[worker]
                                : Resource(per_cycle_prefix_ + ":" + std::to_string(next_key_++));
  client_->acquire(resource, options_, [this, worker](AcquireResult result) {
    on_acquired(worker, std::move(result));
  });
}

void ClientDriver::on_acquired(std::size_t worker, AcquireResult result) {
  if (!result.ok()) {
    std::fprintf(stderr, "redlock client: acquire failed: %s\n", result.error.message().c_str());
    if (listener_ != nullptr) listener_->cycle_done(worker, false);
    return;
  }
  if (listener_ != nullptr) listener_->acquired(worker);
  client_->release(*result.lock,
                   [this, worker](ReleaseResult released) { on_released(worker, released); });
}

void ClientDriver::on_released(std::size_t worker, const ReleaseResult& result) {
  const bool ok = result.released >= client_->quorum();
  if (!ok) {
    std::fprintf(stderr, "redlock client: released on %zu nodes only (%s)\n", result.released,
                 result.error.message().c_str());
  }
  if (listener_ != nullptr) listener_->cycle_done(worker, ok);
}

void ClientDriver::shut_down() {
  if (!client_) return;
  bool closed = false;
  client_->close([&closed] { closed = true; });
  if (!run_loop_until(
          loop_, [&closed] { return closed; }, std::chrono::seconds(5))) {
    std::fputs("redlock client: close did not finish\n", stderr);
  }
  client_.reset();
}

}  // namespace redlock::bench
