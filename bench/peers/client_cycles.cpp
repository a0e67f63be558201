#include "client_cycles.hpp"

#include <chrono>
#include <cstdio>
#include <utility>

namespace redlock::bench::peers {

namespace {
constexpr std::chrono::seconds kCloseLimit{5};
}  // namespace

ClientCycles::ClientCycles(uv_loop_t* loop, const PeerSettings& settings)
    : loop_(loop), settings_(settings) {}

ClientCycles::~ClientCycles() { shut_down(); }

std::string ClientCycles::connect() {
  ConfigResult config = client_config(settings_);
  if (!config.ok()) return config.error.to_string();
  // The client connects in the background; requests made meanwhile wait for
  // the connection, so the warm-up cycles are what waits for it.
  client_ = std::make_unique<AsyncClient>(loop_, std::move(*config.config));
  return {};
}

void ClientCycles::start_cycle(std::size_t worker) {
  const Resource resource(settings_.prefix + ":" + std::to_string(next_key_++));
  client_->acquire(resource, options_, [this, worker](AcquireResult result) {
    on_acquired(worker, std::move(result));
  });
}

void ClientCycles::on_acquired(std::size_t worker, AcquireResult result) {
  if (!result.ok()) {
    std::fprintf(stderr, "redlock: acquire failed: %s\n", result.error.message().c_str());
    if (listener_ != nullptr) listener_->cycle_done(worker, false);
    return;
  }
  if (listener_ != nullptr) listener_->acquired(worker);
  client_->release(*result.lock,
                   [this, worker](ReleaseResult released) { on_released(worker, released); });
}

void ClientCycles::on_released(std::size_t worker, const ReleaseResult& result) {
  const bool ok = result.released >= client_->quorum();
  if (!ok) {
    std::fprintf(stderr, "redlock: released on %zu nodes only (%s)\n", result.released,
                 result.error.message().c_str());
  }
  if (listener_ != nullptr) listener_->cycle_done(worker, ok);
}

void ClientCycles::shut_down() {
  if (!client_) return;
  bool closed = false;
  client_->close([&closed] { closed = true; });
  if (!run_loop_until(
          loop_, [&closed] { return closed; }, kCloseLimit)) {
    std::fputs("redlock: close did not finish\n", stderr);
  }
  client_.reset();
}

}  // namespace redlock::bench::peers
