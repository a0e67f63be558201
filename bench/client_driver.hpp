// The library's design: one lock cycle is redlock::AsyncClient::acquire,
// then release of the lock it returned, on the benchmark's own loop.
//
// By default worker w locks resource "bench:<w>" every cycle (sequential runs
// use one worker, hence one resource), with the default configuration except
// for the node timeout: 1 s, or $REDLOCK_BENCH_NODE_TIMEOUT_MS (0: the
// library's default). The second constructor takes a configuration and
// acquire options, and gives every cycle a resource of its own
// ("<prefix>:<n>", as bench/peers compares with node-redlock). A cycle counts
// as successful when the acquire succeeded and the release deleted our value
// on a majority.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_nodes.hpp"
#include "cycle_harness.hpp"
#include "redlock/async_client.hpp"
#include "redlock/config.hpp"
#include "redlock/options.hpp"

namespace redlock::bench {

class ClientDriver final : public CycleDriver {
 public:
  // With `release_at_majority`, the quorum's releases report at a majority
  // (LockConfig::release_at_majority), as the floor's do.
  ClientDriver(uv_loop_t* loop, const std::vector<BenchNode>& nodes, std::size_t workers,
               bool release_at_majority = false);
  // The members as config_from_addresses takes them ("host:port", or
  // "redis+cluster://host:port,..." for a cluster member).
  ClientDriver(uv_loop_t* loop, const std::vector<std::string>& addresses, std::size_t workers);
  ClientDriver(uv_loop_t* loop, ConfigResult config, AcquireOptions options,
               std::string per_cycle_prefix);
  ~ClientDriver() override;
  ClientDriver(const ClientDriver&) = delete;
  ClientDriver& operator=(const ClientDriver&) = delete;

  [[nodiscard]] std::string connect() override;
  void start_cycle(std::size_t worker) override;
  void shut_down() override;

 private:
  void on_acquired(std::size_t worker, AcquireResult result);
  void on_released(std::size_t worker, const ReleaseResult& result);

  uv_loop_t* loop_;
  ConfigResult config_;
  AcquireOptions options_;
  std::vector<Resource> resources_;  // per worker, when per_cycle_prefix_ is empty
  std::string per_cycle_prefix_;
  std::uint64_t next_key_ = 0;
  std::unique_ptr<AsyncClient> client_;
};

}  // namespace redlock::bench
