// The library's side of the uncontended cases: one lock cycle is
// redlock::AsyncClient::acquire, then release of the lock it returned, each
// cycle on a resource of its own ("<prefix>:<n>"), like the floor's
// bench:raw:<n> keys and node_redlock_driver.js's keys.
//
// A cycle succeeds when the acquire succeeded on its first attempt (no
// retry: distinct keys never contend) and the release deleted our value on
// a majority. The release completes once every node has answered (DESIGN
// 2.3), as node-redlock's unlock does.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>

#include "cycle_harness.hpp"
#include "peer_settings.hpp"
#include "redlock/async_client.hpp"

namespace redlock::bench::peers {

class ClientCycles final : public CycleDriver {
 public:
  ClientCycles(uv_loop_t* loop, const PeerSettings& settings);
  ~ClientCycles() override;
  ClientCycles(const ClientCycles&) = delete;
  ClientCycles& operator=(const ClientCycles&) = delete;

  [[nodiscard]] std::string connect() override;
  void start_cycle(std::size_t worker) override;
  void shut_down() override;

 private:
  void on_acquired(std::size_t worker, AcquireResult result);
  void on_released(std::size_t worker, const ReleaseResult& result);

  uv_loop_t* loop_;
  const PeerSettings& settings_;
  AcquireOptions options_ = uncontended_acquire();
  std::unique_ptr<AsyncClient> client_;
  std::uint64_t next_key_ = 0;
};

}  // namespace redlock::bench::peers
