// What redlock_driver.cpp's cases share: the command line (the same flags as
// node_redlock_driver.js, plus --impl and --node-timeout-ms), the client
// configuration, and the lock and retry settings both drivers use.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench_nodes.hpp"
#include "redlock/config.hpp"
#include "redlock/options.hpp"

namespace redlock::bench::peers {

// The TTL of every lock in every case (node-redlock's side uses the same).
inline constexpr std::chrono::milliseconds kTtl{10000};
// Contended retries, matched to node-redlock's retryDelay 10 ms with
// retryJitter 10 ms (a pause uniform over [0, 19] ms): the library draws its
// pause uniformly from [0, 2 * retry_delay).
inline constexpr std::chrono::milliseconds kContendedRetryDelay{10};
// The bound on one contended acquire, twice the TTL; reaching it fails the
// run (the other drivers fail a run whose wait exceeded the same).
inline constexpr std::chrono::milliseconds kContendedWaitBound{20000};
// A contended wait this long (µs) counts as a stall, in every driver.
inline constexpr double kStallUs = 1e6;

// ours_at_majority: this library with `[lock] release_at_majority` (a
// release reports once a majority deleted the lock, as the floor's does).
enum class Impl { ours, ours_at_majority, ours_fair, floor };
enum class Case { latency, inflight, contended };

struct PeerSettings {
  Impl impl = Impl::ours;
  Case run_case = Case::latency;
  std::vector<BenchNode> nodes;
  std::uint64_t cycles = 2000;
  std::uint64_t warmup = 200;
  double seconds = 5.0;
  std::size_t width = 64;
  std::size_t workers = 8;
  // Contended: how many AsyncClients the workers share, round-robin; 0: one
  // each, as node_redlock_driver.js gives each worker its own Redlock. Not
  // a flag of the other drivers (for profiling only).
  std::size_t clients = 0;
  std::string prefix;
  // The library's per-request node deadline. The transport benchmarks use
  // 1 s for the reason given in bench/client_driver.cpp (stalls on a loaded
  // 2-vCPU machine); node-redlock has no such deadline at all. 0: the
  // library's default, min(50 ms, ttl / 100).
  std::chrono::milliseconds node_timeout{1000};
};

struct SettingsResult {
  std::optional<PeerSettings> settings;
  std::string error;  // what was wrong with the command line, when !settings
};

[[nodiscard]] SettingsResult parse_settings(int argc, char** argv);

[[nodiscard]] const char* impl_name(Impl impl) noexcept;
[[nodiscard]] const char* case_name(Case run_case) noexcept;

// The client configuration for `settings.nodes`: defaults, TTL kTtl and the
// node timeout above.
[[nodiscard]] ConfigResult client_config(const PeerSettings& settings);

// Acquire options of the uncontended cases: distinct keys never contend, so
// no retry; a refusal fails the run.
[[nodiscard]] AcquireOptions uncontended_acquire();
// Acquire options of the contended case: retried until acquired (bounded by
// kContendedWaitBound), mean pause kContendedRetryDelay.
[[nodiscard]] AcquireOptions contended_acquire();

}  // namespace redlock::bench::peers
