// Recording, snapshots and the Prometheus text exposition (format 0.0.4) of
// redlock/metrics.hpp.
//
// The exposition holds these families, in this order. Counters end in _total;
// durations are histograms in seconds with the buckets of kHistogramBoundsUs.
//
//   redlock_acquire_attempts_total                  counter    acquire_attempts
//   redlock_acquire_retries_total                   counter    acquire_retries
//   redlock_acquires_total{result="won"}            counter    acquire_wins
//   redlock_acquires_total{result="lost"}           counter    acquire_losses
//   redlock_releases_total                          counter    releases
//   redlock_renewals_total{result="ok"}             counter    renewals_ok
//   redlock_renewals_total{result="failed"}         counter    renewals_failed
//   redlock_locks_lost_total                        counter    locks_lost
//   redlock_at_risk_total                           counter    at_risk
//   redlock_fenced_out_total                        counter    fenced_out
//   redlock_acquire_wait_seconds                    histogram  acquire_wait
//   redlock_hold_seconds                            histogram  hold_time
//   redlock_node_replies_total{node}                counter    replies
//   redlock_node_failures_total{node,kind="timeout"}     counter  timeouts
//   redlock_node_failures_total{node,kind="unreachable"} counter  unreachable
//   redlock_node_failures_total{node,kind="error_reply"} counter  error_replies
//   redlock_node_batched_requests_total{node}       counter    batched
//   redlock_node_latency_seconds{node}              histogram  latency
//   redlock_cluster_map_reads_total{node}           counter    map_reads
//   redlock_cluster_redirects_total{node,shard,kind="moved"|"ask"|"tryagain"}
//                                                   counter    shards()
//   redlock_cluster_slot_takeovers_total{node,shard} counter   shards()
//   redlock_cluster_votes_refused{node}             gauge      votes_refused
//
// The cluster families appear only for a member that is a Redis Cluster.
//
// The node families are left out while no node has a record, rather than
// exposing families with no samples.
#include "redlock/metrics.hpp"

#include <algorithm>
#include <cstddef>
#include <string>

namespace redlock {

void Histogram::observe(Microseconds value, std::uint64_t times) noexcept {
  const std::int64_t us = std::max<std::int64_t>(value.count(), 0);
  // lower_bound finds the first bound >= us, so a value equal to a bound
  // counts in that bound's bucket (Prometheus buckets are "le", inclusive).
  const auto* const bound =
      std::lower_bound(kHistogramBoundsUs.begin(), kHistogramBoundsUs.end(), us);
  const auto bucket = static_cast<std::size_t>(bound - kHistogramBoundsUs.begin());
  counts_[bucket].fetch_add(times, std::memory_order_relaxed);
  sum_us_.fetch_add(us * static_cast<std::int64_t>(times), std::memory_order_relaxed);
}

HistogramSnapshot Histogram::snapshot() const noexcept {
  HistogramSnapshot result;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    result.counts[i] = counts_[i].load(std::memory_order_relaxed);
    result.count += result.counts[i];
  }
  result.sum = Microseconds{sum_us_.load(std::memory_order_relaxed)};
  return result;
}

void NodeMetrics::count_shard_event(std::string_view shard, ShardEvent event) {
  const std::lock_guard lock(shards_mutex_);
  auto found =
      std::find_if(shards_.begin(), shards_.end(),
                   [shard](const ShardMetricsSnapshot& each) { return each.shard == shard; });
  if (found == shards_.end()) {
    shards_.push_back(ShardMetricsSnapshot{std::string(shard)});
    found = shards_.end() - 1;
  }
  switch (event) {
    case ShardEvent::moved:
      ++found->moved;
      break;
    case ShardEvent::asked:
      ++found->asked;
      break;
    case ShardEvent::try_again:
      ++found->try_again;
      break;
    case ShardEvent::took_over:
      ++found->took_over;
      break;
  }
}

std::vector<ShardMetricsSnapshot> NodeMetrics::shards() const {
  const std::lock_guard lock(shards_mutex_);
  return shards_;
}

NodeMetrics& Metrics::node(std::string_view name) {
  const std::lock_guard lock(nodes_mutex_);
  // A deployment has a handful of nodes, so a linear search is the fastest
  // lookup. The records live behind unique_ptr so that growing the vector
  // never moves one that a caller holds a reference to.
  const auto found = std::find_if(nodes_.begin(), nodes_.end(),
                                  [name](const auto& record) { return record->node == name; });
  if (found != nodes_.end()) return **found;
  return *nodes_.emplace_back(std::make_unique<NodeMetrics>(std::string(name)));
}

MetricsSnapshot Metrics::snapshot() const {
  constexpr auto relaxed = std::memory_order_relaxed;
  MetricsSnapshot result;
  result.acquire_attempts = acquire_attempts.load(relaxed);
  result.acquire_retries = acquire_retries.load(relaxed);
  result.acquire_wins = acquire_wins.load(relaxed);
  result.acquire_losses = acquire_losses.load(relaxed);
  result.releases = releases.load(relaxed);
  result.renewals_ok = renewals_ok.load(relaxed);
  result.renewals_failed = renewals_failed.load(relaxed);
  result.locks_lost = locks_lost.load(relaxed);
  result.at_risk = at_risk.load(relaxed);
  result.fenced_out = fenced_out.load(relaxed);
  result.acquire_wait = acquire_wait.snapshot();
  result.hold_time = hold_time.snapshot();

  const std::lock_guard lock(nodes_mutex_);
  result.nodes.reserve(nodes_.size());
  for (const auto& record : nodes_) {
    NodeMetricsSnapshot& node_snapshot = result.nodes.emplace_back();
    node_snapshot.node = record->node;
    node_snapshot.replies = record->replies.load(relaxed);
    node_snapshot.error_replies = record->error_replies.load(relaxed);
    node_snapshot.timeouts = record->timeouts.load(relaxed);
    node_snapshot.unreachable = record->unreachable.load(relaxed);
    node_snapshot.batched = record->batched.load(relaxed);
    node_snapshot.latency = record->latency.snapshot();
    node_snapshot.map_reads = record->map_reads.load(relaxed);
    node_snapshot.shards = record->shards();
    node_snapshot.votes_refused = record->votes_refused.load(relaxed);
  }
  return result;
}

std::string Metrics::prometheus() const { return to_prometheus(snapshot()); }

namespace {

// Microseconds as decimal seconds, exactly: "0.00025", "1", "2.5". Integer
// arithmetic instead of printf("%g") keeps bounds such as 0.0001 free of
// binary rounding and of exponent notation.
std::string seconds_text(std::int64_t us) {
  constexpr std::uint64_t kPerSecond = 1'000'000;
  constexpr std::size_t kFractionDigits = 6;
  // The magnitude as unsigned, so that even INT64_MIN negates without overflow.
  const std::uint64_t magnitude =
      us < 0 ? 0 - static_cast<std::uint64_t>(us) : static_cast<std::uint64_t>(us);
  std::string text = us < 0 ? "-" : "";
  text += std::to_string(magnitude / kPerSecond);
  std::uint64_t fraction = magnitude % kPerSecond;
  if (fraction == 0) return text;
  std::string digits(kFractionDigits, '0');
  for (std::size_t i = kFractionDigits; i-- > 0; fraction /= 10) {
    digits[i] = static_cast<char>('0' + fraction % 10);
  }
  digits.erase(digits.find_last_not_of('0') + 1);
  return text + "." + digits;
}

// name="value", with the value escaped as the format requires: backslash,
// double quote and line feed are the only characters that need it.
std::string label(std::string_view name, std::string_view value) {
  std::string text(name);
  text += "=\"";
  for (const char c : value) {
    switch (c) {
      case '\\':
        text += "\\\\";
        break;
      case '"':
        text += "\\\"";
        break;
      case '\n':
        text += "\\n";
        break;
      default:
        text += c;
    }
  }
  text += '"';
  return text;
}

void append_family(std::string& out, std::string_view name, std::string_view type,
                   std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

// `labels` is a comma-separated list of label() texts, or empty for none.
void append_sample(std::string& out, std::string_view name, std::string_view labels,
                   std::string_view value) {
  out.append(name);
  if (!labels.empty()) out.append("{").append(labels).append("}");
  out.append(" ").append(value).append("\n");
}

void append_counter(std::string& out, std::string_view name, std::string_view labels,
                    std::uint64_t value) {
  append_sample(out, name, labels, std::to_string(value));
}

// The _bucket, _sum and _count samples of one histogram series. _count is the
// sum of the buckets rather than HistogramSnapshot::count, so that the +Inf
// bucket equals it even for a snapshot assembled by hand.
void append_histogram(std::string& out, std::string_view name, std::string_view labels,
                      const HistogramSnapshot& histogram) {
  const std::string bucket_name = std::string(name) + "_bucket";
  const std::string le_prefix = labels.empty() ? std::string() : std::string(labels) + ",";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < histogram.counts.size(); ++i) {
    cumulative += histogram.counts[i];
    const std::string le =
        i < kHistogramBoundsUs.size() ? seconds_text(kHistogramBoundsUs[i]) : "+Inf";
    append_counter(out, bucket_name, le_prefix + label("le", le), cumulative);
  }
  append_sample(out, std::string(name) + "_sum", labels, seconds_text(histogram.sum.count()));
  append_counter(out, std::string(name) + "_count", labels, cumulative);
}

void append_node_families(std::string& out, const std::vector<NodeMetricsSnapshot>& nodes) {
  if (nodes.empty()) return;
  append_family(out, "redlock_node_replies_total", "counter",
                "Node answers received within the request timeout.");
  for (const auto& node : nodes) {
    append_counter(out, "redlock_node_replies_total", label("node", node.node), node.replies);
  }
  append_family(out, "redlock_node_failures_total", "counter",
                "Node requests without a usable answer, by kind of failure.");
  for (const auto& node : nodes) {
    const std::string node_label = label("node", node.node);
    append_counter(out, "redlock_node_failures_total", node_label + "," + label("kind", "timeout"),
                   node.timeouts);
    append_counter(out, "redlock_node_failures_total",
                   node_label + "," + label("kind", "unreachable"), node.unreachable);
    append_counter(out, "redlock_node_failures_total",
                   node_label + "," + label("kind", "error_reply"), node.error_replies);
  }
  append_family(out, "redlock_node_batched_requests_total", "counter",
                "Node requests sent inside a batched script call.");
  for (const auto& node : nodes) {
    append_counter(out, "redlock_node_batched_requests_total", label("node", node.node),
                   node.batched);
  }
  const bool any_cluster = std::any_of(nodes.begin(), nodes.end(), [](const auto& node) {
    return node.map_reads > 0 || !node.shards.empty();
  });
  if (any_cluster) {
    append_family(out, "redlock_cluster_map_reads_total", "counter",
                  "Slot maps read from a cluster member's seeds.");
    for (const auto& node : nodes) {
      if (node.map_reads == 0 && node.shards.empty()) continue;
      append_counter(out, "redlock_cluster_map_reads_total", label("node", node.node),
                     node.map_reads);
    }
    append_family(out, "redlock_cluster_redirects_total", "counter",
                  "Redirects a cluster member's shard master answered with, by kind.");
    for (const auto& node : nodes) {
      for (const ShardMetricsSnapshot& shard : node.shards) {
        const std::string labels = label("node", node.node) + "," + label("shard", shard.shard);
        append_counter(out, "redlock_cluster_redirects_total",
                       labels + "," + label("kind", "moved"), shard.moved);
        append_counter(out, "redlock_cluster_redirects_total", labels + "," + label("kind", "ask"),
                       shard.asked);
        append_counter(out, "redlock_cluster_redirects_total",
                       labels + "," + label("kind", "tryagain"), shard.try_again);
      }
    }
    append_family(out, "redlock_cluster_slot_takeovers_total", "counter",
                  "Slot maps that named a shard master for slots another master had held "
                  "(a failover, or slots migrated to it).");
    for (const auto& node : nodes) {
      for (const ShardMetricsSnapshot& shard : node.shards) {
        append_counter(out, "redlock_cluster_slot_takeovers_total",
                       label("node", node.node) + "," + label("shard", shard.shard),
                       shard.took_over);
      }
    }
    append_family(out, "redlock_cluster_votes_refused", "gauge",
                  "1 while the client refuses a cluster member's votes: it is one cluster with "
                  "another member, or shares a server with one.");
    for (const auto& node : nodes) {
      if (node.map_reads == 0 && node.shards.empty()) continue;
      append_sample(out, "redlock_cluster_votes_refused", label("node", node.node),
                    node.votes_refused ? "1" : "0");
    }
  }
  append_family(out, "redlock_node_latency_seconds", "histogram",
                "Round-trip time of node answers received within the request timeout.");
  for (const auto& node : nodes) {
    append_histogram(out, "redlock_node_latency_seconds", label("node", node.node), node.latency);
  }
}

}  // namespace

std::string to_prometheus(const MetricsSnapshot& snapshot) {
  std::string out;
  append_family(out, "redlock_acquire_attempts_total", "counter",
                "Acquire rounds sent to the nodes.");
  append_counter(out, "redlock_acquire_attempts_total", "", snapshot.acquire_attempts);
  append_family(out, "redlock_acquire_retries_total", "counter",
                "Acquire rounds after the first of an acquire call.");
  append_counter(out, "redlock_acquire_retries_total", "", snapshot.acquire_retries);
  append_family(out, "redlock_acquires_total", "counter",
                "Acquire calls finished, by result: won the lock or gave up.");
  append_counter(out, "redlock_acquires_total", label("result", "won"), snapshot.acquire_wins);
  append_counter(out, "redlock_acquires_total", label("result", "lost"), snapshot.acquire_losses);
  append_family(out, "redlock_releases_total", "counter", "Locks released by their holder.");
  append_counter(out, "redlock_releases_total", "", snapshot.releases);
  append_family(out, "redlock_renewals_total", "counter",
                "Lock extensions, by result: ok or failed.");
  append_counter(out, "redlock_renewals_total", label("result", "ok"), snapshot.renewals_ok);
  append_counter(out, "redlock_renewals_total", label("result", "failed"),
                 snapshot.renewals_failed);
  append_family(out, "redlock_locks_lost_total", "counter",
                "Held locks lost before their release.");
  append_counter(out, "redlock_locks_lost_total", "", snapshot.locks_lost);
  append_family(out, "redlock_at_risk_total", "counter",
                "At-risk episodes begun: a held lock's renewals late, little validity left.");
  append_counter(out, "redlock_at_risk_total", "", snapshot.at_risk);
  append_family(out, "redlock_fenced_out_total", "counter",
                "Operations the fence gate refused for an outdated fencing token.");
  append_counter(out, "redlock_fenced_out_total", "", snapshot.fenced_out);
  append_family(out, "redlock_acquire_wait_seconds", "histogram",
                "Time from the start of an acquire call to the lock in hand.");
  append_histogram(out, "redlock_acquire_wait_seconds", "", snapshot.acquire_wait);
  append_family(out, "redlock_hold_seconds", "histogram",
                "Time a lock was held, from acquire to release or loss.");
  append_histogram(out, "redlock_hold_seconds", "", snapshot.hold_time);
  append_node_families(out, snapshot.nodes);
  return out;
}

}  // namespace redlock
