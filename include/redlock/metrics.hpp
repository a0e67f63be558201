// Counters and latency histograms of lock activity, readable as a snapshot
// and as Prometheus text exposition.
//
// A Metrics object may be shared by several clients (and fence gates) to
// aggregate them; by default each client makes its own. Recording is
// lock-free (relaxed atomics) and safe from any thread; a snapshot is a
// consistent-enough read for monitoring, not a transaction.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "redlock/export.hpp"
#include "redlock/types.hpp"

namespace redlock {

// Upper bounds of the histogram buckets, in microseconds (the last bucket,
// +Inf, is implicit): 100 µs to 10 s.
inline constexpr std::array<std::int64_t, 16> kHistogramBoundsUs = {
    100,   250,    500,    1000,   2500,    5000,    10000,   25000,
    50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000};

struct HistogramSnapshot {
  // counts[i]: observations <= kHistogramBoundsUs[i] and above the previous
  // bound (not cumulative); counts.back() is the +Inf bucket.
  std::array<std::uint64_t, kHistogramBoundsUs.size() + 1> counts{};
  std::uint64_t count = 0;  // the sum of counts
  Microseconds sum{0};
};

// One shard of a member that is a Redis Cluster, named by its master's
// "host:port": the redirects that master answered with, and how often the
// member's slot map named it master of slots another master had held (a
// failover, or slots migrated to it).
struct ShardMetricsSnapshot {
  std::string shard;
  std::uint64_t moved = 0;      // MOVED answers: the slot lives elsewhere now
  std::uint64_t asked = 0;      // ASK answers: the slot is being migrated
  std::uint64_t try_again = 0;  // TRYAGAIN answers: keys of a half-moved slot
  std::uint64_t took_over = 0;  // map reads that gave it slots of another master
};

struct NodeMetricsSnapshot {
  std::string node;           // NodeConfig::name
  std::uint64_t replies = 0;  // answers received in time
  std::uint64_t error_replies = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t unreachable = 0;
  // Requests sent inside a batched script call (one call answering several
  // requests of one loop turn); the rest went one call each.
  std::uint64_t batched = 0;
  HistogramSnapshot latency;  // of answers received in time
  // A cluster member: how many times its slot map was read, and its shards
  // (those that redirected or took over slots), in the order first seen.
  std::uint64_t map_reads = 0;
  std::vector<ShardMetricsSnapshot> shards;
  // A cluster member whose votes the client refuses: it is one cluster
  // with another member, or shares a server with one (docs/safety.md, "A
  // cluster as a member").
  bool votes_refused = false;
};

struct MetricsSnapshot {
  std::uint64_t acquire_attempts = 0;  // rounds sent to the nodes
  std::uint64_t acquire_retries = 0;   // attempts after the first of a call
  std::uint64_t acquire_wins = 0;      // calls that got the lock
  std::uint64_t acquire_losses = 0;    // calls that gave up
  std::uint64_t releases = 0;
  std::uint64_t renewals_ok = 0;
  std::uint64_t renewals_failed = 0;
  std::uint64_t locks_lost = 0;    // guards whose loss signal fired
  std::uint64_t at_risk = 0;       // at-risk episodes begun (GuardOptions::at_risk_share)
  std::uint64_t fenced_out = 0;    // operations the fence gate refused
  HistogramSnapshot acquire_wait;  // acquire call start to the lock in hand
  HistogramSnapshot hold_time;     // guard acquired to released or lost
  std::vector<NodeMetricsSnapshot> nodes;
};

class REDLOCK_API Histogram {
 public:
  // A negative value (impossible on the steady clock) counts as zero.
  void observe(Microseconds value) noexcept { observe(value, 1); }
  // `times` observations of one value, for the cost of one.
  void observe(Microseconds value, std::uint64_t times) noexcept;
  [[nodiscard]] HistogramSnapshot snapshot() const noexcept;

 private:
  // No separate total: the count is the sum of the buckets, so a snapshot
  // taken while others record still has its +Inf bucket equal to its count,
  // as the exposition format requires.
  std::array<std::atomic<std::uint64_t>, kHistogramBoundsUs.size() + 1> counts_{};
  std::atomic<std::int64_t> sum_us_{0};
};

struct REDLOCK_API NodeMetrics {
  explicit NodeMetrics(std::string name) : node(std::move(name)) {}
  const std::string node;
  std::atomic<std::uint64_t> replies{0};
  std::atomic<std::uint64_t> error_replies{0};
  std::atomic<std::uint64_t> batched{0};
  std::atomic<std::uint64_t> timeouts{0};
  std::atomic<std::uint64_t> unreachable{0};
  std::atomic<std::uint64_t> map_reads{0};
  std::atomic<bool> votes_refused{false};
  Histogram latency;

  // A cluster member's shard events (rare: under a mutex), by the shard
  // master's "host:port".
  enum class ShardEvent { moved, asked, try_again, took_over };
  void count_shard_event(std::string_view shard, ShardEvent event);
  [[nodiscard]] std::vector<ShardMetricsSnapshot> shards() const;

 private:
  mutable std::mutex shards_mutex_;
  std::vector<ShardMetricsSnapshot> shards_;
};

class REDLOCK_API Metrics {
 public:
  std::atomic<std::uint64_t> acquire_attempts{0};
  std::atomic<std::uint64_t> acquire_retries{0};
  std::atomic<std::uint64_t> acquire_wins{0};
  std::atomic<std::uint64_t> acquire_losses{0};
  std::atomic<std::uint64_t> releases{0};
  std::atomic<std::uint64_t> renewals_ok{0};
  std::atomic<std::uint64_t> renewals_failed{0};
  std::atomic<std::uint64_t> locks_lost{0};
  std::atomic<std::uint64_t> at_risk{0};
  std::atomic<std::uint64_t> fenced_out{0};
  Histogram acquire_wait;
  Histogram hold_time;

  // The per-node record for `name`, created on first use. The reference
  // stays valid for the Metrics object's lifetime.
  NodeMetrics& node(std::string_view name);

  [[nodiscard]] MetricsSnapshot snapshot() const;
  // Prometheus text exposition format 0.0.4 (metric names redlock_*).
  [[nodiscard]] std::string prometheus() const;

 private:
  mutable std::mutex nodes_mutex_;
  std::vector<std::unique_ptr<NodeMetrics>> nodes_;
};

// The text exposition of a snapshot (what Metrics::prometheus() returns).
[[nodiscard]] REDLOCK_API std::string to_prometheus(const MetricsSnapshot& snapshot);

}  // namespace redlock
