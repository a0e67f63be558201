// What the workers saw. Each worker fills its own WorkerStats without locks;
// main() merges them after every worker has joined.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "redlock/config.hpp"
#include "redlock/outcome.hpp"

namespace redlock::demo {

struct LatencySummary {
  Microseconds p50{0};
  Microseconds p99{0};
  Microseconds max{0};
};

// Nearest-rank percentiles; all zero for no samples.
[[nodiscard]] LatencySummary summarize(std::vector<Microseconds> samples);

[[nodiscard]] double to_ms(Microseconds duration) noexcept;

// One node's answers, over the per-node outcomes that acquire results carry.
struct NodeTally {
  std::int64_t granted = 0;
  std::int64_t busy = 0;
  // Not yet answered when a majority had already decided the attempt.
  std::int64_t pending = 0;
  std::int64_t timeout = 0;
  std::int64_t unreachable = 0;
  // Error replies, and grants without enough replica acknowledgements.
  std::int64_t error = 0;
  // Of requests the node answered in time; timeouts are not latencies.
  std::vector<Microseconds> reply_latencies;

  void add(const NodeOutcome& outcome);
  void merge(const NodeTally& other);
};

struct WorkerStats {
  explicit WorkerStats(std::size_t node_count) : nodes(node_count) {}

  std::int64_t acquire_calls = 0;
  std::int64_t acquisitions = 0;
  // Attempts over all acquire calls; attempts - acquire_calls are retries.
  std::int64_t attempts = 0;
  // Increments written (GET and SET both succeeded) under the lock.
  std::int64_t increments = 0;
  // Critical sections that ended after the lock's validity deadline: from
  // then on the lock no longer guaranteed exclusion.
  std::int64_t validity_overruns = 0;
  // Releases that did not hear back from every node.
  std::int64_t incomplete_releases = 0;
  // Failed acquire calls, by error message.
  std::map<std::string, std::int64_t> failures;
  // How long each acquire call blocked, retries included.
  std::vector<Microseconds> waits;
  std::vector<NodeTally> nodes;  // indexed like QuorumConfig::nodes
  // Why this worker stopped early, when the resource store failed.
  std::string store_error;

  void record_acquire(const AcquireResult& result, Microseconds waited);
  void merge(const WorkerStats& other);
};

// One row per node: name, answers by kind, reply latency p50/p99.
void print_node_table(const std::vector<NodeTally>& tallies, const std::vector<NodeConfig>& nodes);

}  // namespace redlock::demo
