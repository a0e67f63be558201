#include "demo_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace redlock::demo {

LatencySummary summarize(std::vector<Microseconds> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  const auto rank = [&](double fraction) {
    const auto position =
        static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(samples.size())));
    return samples[std::clamp<std::size_t>(position, 1, samples.size()) - 1];
  };
  return {rank(0.50), rank(0.99), samples.back()};
}

double to_ms(Microseconds duration) noexcept {
  return static_cast<double>(duration.count()) / 1000.0;
}

void NodeTally::add(const NodeOutcome& outcome) {
  bool answered = false;
  switch (outcome.status) {
    case NodeStatus::granted:
      ++granted;
      answered = true;
      break;
    case NodeStatus::busy:
      ++busy;
      answered = true;
      break;
    case NodeStatus::error:
    case NodeStatus::replicas_short:
    case NodeStatus::recovering:
    case NodeStatus::permits_differ:
      ++error;
      answered = true;
      break;
    case NodeStatus::pending:
      ++pending;
      break;
    case NodeStatus::timeout:
      ++timeout;
      break;
    case NodeStatus::unreachable:
      ++unreachable;
      break;
    // Not answers to an acquire.
    case NodeStatus::extended:
    case NodeStatus::released:
    case NodeStatus::not_held:
    case NodeStatus::not_asked:
      break;
  }
  if (answered) reply_latencies.push_back(outcome.latency);
}

void NodeTally::merge(const NodeTally& other) {
  granted += other.granted;
  busy += other.busy;
  pending += other.pending;
  timeout += other.timeout;
  unreachable += other.unreachable;
  error += other.error;
  reply_latencies.insert(reply_latencies.end(), other.reply_latencies.begin(),
                         other.reply_latencies.end());
}

void WorkerStats::record_acquire(const AcquireResult& result, Microseconds waited) {
  ++acquire_calls;
  attempts += result.attempts;
  waits.push_back(waited);
  if (result.ok()) {
    ++acquisitions;
  } else {
    ++failures[result.error.message()];
  }
  for (const NodeOutcome& outcome : result.nodes) {
    if (outcome.node < nodes.size()) nodes[outcome.node].add(outcome);
  }
}

void WorkerStats::merge(const WorkerStats& other) {
  acquire_calls += other.acquire_calls;
  acquisitions += other.acquisitions;
  attempts += other.attempts;
  increments += other.increments;
  validity_overruns += other.validity_overruns;
  incomplete_releases += other.incomplete_releases;
  for (const auto& [message, count] : other.failures) failures[message] += count;
  waits.insert(waits.end(), other.waits.begin(), other.waits.end());
  for (std::size_t i = 0; i < nodes.size() && i < other.nodes.size(); ++i) {
    nodes[i].merge(other.nodes[i]);
  }
  if (store_error.empty()) store_error = other.store_error;
}

void print_node_table(const std::vector<NodeTally>& tallies, const std::vector<NodeConfig>& nodes) {
  int name_width = 4;
  for (const NodeConfig& node : nodes) {
    name_width = std::max(name_width, static_cast<int>(node.name.size()));
  }
  std::printf("%-*s %8s %6s %8s %8s %8s %6s %9s %9s\n", name_width, "node", "granted", "busy",
              "pending", "timeout", "unreach", "error", "p50 ms", "p99 ms");
  for (std::size_t i = 0; i < tallies.size() && i < nodes.size(); ++i) {
    const NodeTally& tally = tallies[i];
    std::printf("%-*s %8lld %6lld %8lld %8lld %8lld %6lld", name_width, nodes[i].name.c_str(),
                static_cast<long long>(tally.granted), static_cast<long long>(tally.busy),
                static_cast<long long>(tally.pending), static_cast<long long>(tally.timeout),
                static_cast<long long>(tally.unreachable), static_cast<long long>(tally.error));
    if (tally.reply_latencies.empty()) {
      std::printf(" %9s %9s\n", "-", "-");  // the node never answered
    } else {
      const LatencySummary latency = summarize(tally.reply_latencies);
      std::printf(" %9.3f %9.3f\n", to_ms(latency.p50), to_ms(latency.p99));
    }
  }
}

}  // namespace redlock::demo
