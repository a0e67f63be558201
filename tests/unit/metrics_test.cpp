// Metrics: histogram buckets at their boundaries, node records, exact totals
// under concurrent recording, and the Prometheus text checked by parsing it
// back with a strict line parser rather than by comparing strings.
#include "redlock/metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <latch>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace redlock {
namespace {

using Buckets = std::array<std::uint64_t, kHistogramBoundsUs.size() + 1>;
constexpr std::size_t kInfBucket = kHistogramBoundsUs.size();

// The bucket a single observation of `value` lands in.
std::optional<std::size_t> bucket_of(Microseconds value) {
  Histogram histogram;
  histogram.observe(value);
  const Buckets counts = histogram.snapshot().counts;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 1) return i;
  }
  return std::nullopt;
}

TEST(Histogram, ValueEqualToABoundCountsInThatBucket) {
  for (std::size_t i = 0; i < kHistogramBoundsUs.size(); ++i) {
    EXPECT_EQ(bucket_of(Microseconds{kHistogramBoundsUs[i]}), i) << kHistogramBoundsUs[i];
  }
}

TEST(Histogram, ValueJustBelowABoundCountsInThatBucket) {
  for (std::size_t i = 0; i < kHistogramBoundsUs.size(); ++i) {
    EXPECT_EQ(bucket_of(Microseconds{kHistogramBoundsUs[i] - 1}), i) << kHistogramBoundsUs[i];
  }
}

TEST(Histogram, ValueJustAboveABoundCountsInTheNextBucket) {
  for (std::size_t i = 0; i < kHistogramBoundsUs.size(); ++i) {
    EXPECT_EQ(bucket_of(Microseconds{kHistogramBoundsUs[i] + 1}), i + 1) << kHistogramBoundsUs[i];
  }
}

TEST(Histogram, ExtremesLandInTheFirstAndInfBuckets) {
  EXPECT_EQ(bucket_of(Microseconds{0}), 0U);
  EXPECT_EQ(bucket_of(Microseconds{-5}), 0U);
  EXPECT_EQ(bucket_of(Microseconds{kHistogramBoundsUs.back() + 1}), kInfBucket);
  EXPECT_EQ(bucket_of(std::chrono::hours{24}), kInfBucket);
}

TEST(Histogram, SumsAndCountsObservations) {
  Histogram histogram;
  histogram.observe(Microseconds{100});
  histogram.observe(Microseconds{101});
  histogram.observe(Milliseconds{3});
  histogram.observe(Microseconds{-7});  // counts as zero
  const HistogramSnapshot snapshot = histogram.snapshot();
  EXPECT_EQ(snapshot.count, 4U);
  EXPECT_EQ(snapshot.sum, Microseconds{100 + 101 + 3000});
  Buckets expected{};
  expected[0] = 2;  // -7 (as 0) and 100
  expected[1] = 1;  // 101
  expected[5] = 1;  // 3000, in (2500, 5000]
  EXPECT_EQ(snapshot.counts, expected);
}

TEST(Histogram, StartsEmpty) {
  const HistogramSnapshot snapshot = Histogram().snapshot();
  EXPECT_EQ(snapshot.count, 0U);
  EXPECT_EQ(snapshot.sum, Microseconds{0});
  EXPECT_EQ(snapshot.counts, Buckets{});
}

TEST(MetricsNode, SameNameGivesTheSameRecord) {
  Metrics metrics;
  NodeMetrics& first = metrics.node("127.0.0.1:7101");
  const std::string same_name = "127.0.0.1:7101";
  EXPECT_EQ(&metrics.node(same_name), &first);
  EXPECT_EQ(first.node, "127.0.0.1:7101");
}

TEST(MetricsNode, DifferentNamesGiveDifferentRecords) {
  Metrics metrics;
  NodeMetrics& a = metrics.node("a");
  NodeMetrics& b = metrics.node("b");
  EXPECT_NE(&a, &b);
  EXPECT_EQ(a.node, "a");
  EXPECT_EQ(b.node, "b");
}

TEST(MetricsNode, RecordsKeepTheirAddressWhileOthersAreAdded) {
  Metrics metrics;
  NodeMetrics& first = metrics.node("first");
  first.replies.fetch_add(3);
  for (int i = 0; i < 200; ++i) metrics.node("node-" + std::to_string(i));
  EXPECT_EQ(&metrics.node("first"), &first);
  EXPECT_EQ(first.replies.load(), 3U);
}

TEST(MetricsSnapshot, CopiesEveryCounterAndNodeInCreationOrder) {
  Metrics metrics;
  metrics.acquire_attempts = 1;
  metrics.acquire_retries = 2;
  metrics.acquire_wins = 3;
  metrics.acquire_losses = 4;
  metrics.releases = 5;
  metrics.renewals_ok = 6;
  metrics.renewals_failed = 7;
  metrics.locks_lost = 8;
  metrics.at_risk = 29;
  metrics.fenced_out = 9;
  metrics.acquire_wait.observe(Microseconds{10});
  metrics.hold_time.observe(Microseconds{20});
  NodeMetrics& b = metrics.node("b");
  metrics.node("a").timeouts = 1;
  b.replies = 2;
  b.error_replies = 3;
  b.unreachable = 4;
  b.latency.observe(Microseconds{300});

  const MetricsSnapshot snapshot = metrics.snapshot();
  EXPECT_EQ(snapshot.acquire_attempts, 1U);
  EXPECT_EQ(snapshot.acquire_retries, 2U);
  EXPECT_EQ(snapshot.acquire_wins, 3U);
  EXPECT_EQ(snapshot.acquire_losses, 4U);
  EXPECT_EQ(snapshot.releases, 5U);
  EXPECT_EQ(snapshot.renewals_ok, 6U);
  EXPECT_EQ(snapshot.renewals_failed, 7U);
  EXPECT_EQ(snapshot.locks_lost, 8U);
  EXPECT_EQ(snapshot.at_risk, 29U);
  EXPECT_EQ(snapshot.fenced_out, 9U);
  EXPECT_EQ(snapshot.acquire_wait.sum, Microseconds{10});
  EXPECT_EQ(snapshot.hold_time.sum, Microseconds{20});
  ASSERT_EQ(snapshot.nodes.size(), 2U);
  EXPECT_EQ(snapshot.nodes[0].node, "b");
  EXPECT_EQ(snapshot.nodes[0].replies, 2U);
  EXPECT_EQ(snapshot.nodes[0].error_replies, 3U);
  EXPECT_EQ(snapshot.nodes[0].unreachable, 4U);
  EXPECT_EQ(snapshot.nodes[0].timeouts, 0U);
  EXPECT_EQ(snapshot.nodes[0].latency.counts[2], 1U);
  EXPECT_EQ(snapshot.nodes[1].node, "a");
  EXPECT_EQ(snapshot.nodes[1].timeouts, 1U);
}

// Concurrency: run under TSan in CI.

constexpr int kThreads = 4;
constexpr int kPerThread = 20'000;

TEST(MetricsConcurrency, FourRecordingThreadsGiveExactTotals) {
  Metrics metrics;
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&metrics, &start, t] {
      start.arrive_and_wait();
      // Looked up inside the threads, so that record creation races too.
      NodeMetrics& shared = metrics.node("shared");
      NodeMetrics& own = metrics.node("thread-" + std::to_string(t));
      for (int i = 0; i < kPerThread; ++i) {
        metrics.acquire_attempts.fetch_add(1, std::memory_order_relaxed);
        metrics.acquire_wins.fetch_add(1, std::memory_order_relaxed);
        const auto bucket = static_cast<std::size_t>(i) % kHistogramBoundsUs.size();
        metrics.acquire_wait.observe(Microseconds{kHistogramBoundsUs[bucket]});
        shared.replies.fetch_add(1, std::memory_order_relaxed);
        shared.latency.observe(Microseconds{1});
        own.timeouts.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (auto& thread : threads) thread.join();

  const MetricsSnapshot snapshot = metrics.snapshot();
  constexpr std::uint64_t kTotal = std::uint64_t{kThreads} * kPerThread;
  EXPECT_EQ(snapshot.acquire_attempts, kTotal);
  EXPECT_EQ(snapshot.acquire_wins, kTotal);
  EXPECT_EQ(snapshot.acquire_wait.count, kTotal);
  // kPerThread is a multiple of the bucket count, so every bucket but +Inf
  // received the same share.
  static_assert(kPerThread % kHistogramBoundsUs.size() == 0);
  std::int64_t bounds_sum = 0;
  for (const std::int64_t bound : kHistogramBoundsUs) bounds_sum += bound;
  const std::int64_t rounds = kThreads * (kPerThread / std::int64_t{kHistogramBoundsUs.size()});
  EXPECT_EQ(snapshot.acquire_wait.sum, Microseconds{bounds_sum * rounds});
  for (std::size_t i = 0; i < kInfBucket; ++i) {
    EXPECT_EQ(snapshot.acquire_wait.counts[i], kTotal / kHistogramBoundsUs.size()) << i;
  }
  EXPECT_EQ(snapshot.acquire_wait.counts[kInfBucket], 0U);

  ASSERT_EQ(snapshot.nodes.size(), std::size_t{kThreads} + 1);
  std::set<std::string> names;
  for (const auto& node : snapshot.nodes) {
    names.insert(node.node);
    if (node.node == "shared") {
      EXPECT_EQ(node.replies, kTotal);
      EXPECT_EQ(node.latency.count, kTotal);
      EXPECT_EQ(node.latency.sum, Microseconds{kTotal});
    } else {
      EXPECT_EQ(node.timeouts, std::uint64_t{kPerThread}) << node.node;
    }
  }
  EXPECT_EQ(names.size(), std::size_t{kThreads} + 1);
}

// ---------------------------------------------------------------------------
// A strict parser for the text exposition format 0.0.4, limited to what the
// library emits: HELP, TYPE and sample lines (no timestamps, no other
// comments, no blank lines).

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  std::string raw_value;
  double value = 0;
};

struct Exposition {
  std::map<std::string, std::string> help;
  std::map<std::string, std::string> type;
  std::vector<Sample> samples;
  std::vector<std::string> errors;
};

bool is_metric_name(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Parses `{name="value",...}` from text[pos], unescaping \\, \" and \n.
// Returns false on anything else.
bool parse_labels(std::string_view text, std::size_t& pos,
                  std::map<std::string, std::string>& labels) {
  ++pos;  // '{'
  while (pos < text.size() && text[pos] != '}') {
    const std::size_t equals = text.find('=', pos);
    if (equals == std::string_view::npos) return false;
    const std::string name(text.substr(pos, equals - pos));
    if (!is_metric_name(name) || labels.contains(name)) return false;
    pos = equals + 1;
    if (pos >= text.size() || text[pos] != '"') return false;
    ++pos;
    std::string value;
    for (;; ++pos) {
      if (pos >= text.size()) return false;
      const char c = text[pos];
      if (c == '"') break;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (++pos >= text.size()) return false;
      switch (text[pos]) {
        case '\\':
          value += '\\';
          break;
        case '"':
          value += '"';
          break;
        case 'n':
          value += '\n';
          break;
        default:
          return false;
      }
    }
    ++pos;  // closing quote
    labels.emplace(name, std::move(value));
    if (pos < text.size() && text[pos] == ',') ++pos;
  }
  if (pos >= text.size()) return false;
  ++pos;  // '}'
  return true;
}

// The family a sample belongs to: the histogram it is a _bucket/_sum/_count
// series of, or else its own name.
std::string family_of(const Exposition& exposition, const std::string& sample_name) {
  for (const std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (!sample_name.ends_with(suffix)) continue;
    std::string base = sample_name.substr(0, sample_name.size() - suffix.size());
    const auto type = exposition.type.find(base);
    if (type != exposition.type.end() && type->second == "histogram") return base;
  }
  return sample_name;
}

// Records a `# HELP name text` or `# TYPE name counter|gauge|histogram` line.
// Returns what is wrong with it, or an empty string.
std::string parse_comment(Exposition& out, const std::string& line) {
  const std::string rest = line.substr(std::string_view("# HELP ").size());
  const std::size_t space = rest.find(' ');
  const std::string name = rest.substr(0, space);
  const std::string body = space == std::string::npos ? "" : rest.substr(space + 1);
  if (!is_metric_name(name) || body.empty()) return "malformed comment";
  if (line.starts_with("# HELP ")) {
    return out.help.emplace(name, body).second ? "" : "second HELP";
  }
  if (body != "counter" && body != "gauge" && body != "histogram") return "unexpected type";
  return out.type.emplace(name, body).second ? "" : "second TYPE";
}

// Parses `name{labels} value` into `sample`. Returns what is wrong with the
// line, or an empty string.
std::string parse_sample(const std::string& line, Sample& sample) {
  std::size_t pos = line.find_first_of("{ ");
  if (pos == std::string::npos) return "no value";
  sample.name = line.substr(0, pos);
  if (!is_metric_name(sample.name)) return "bad metric name";
  if (line[pos] == '{' && !parse_labels(line, pos, sample.labels)) return "bad labels";
  if (pos >= line.size() || line[pos] != ' ') return "no value";
  sample.raw_value = line.substr(pos + 1);
  char* end = nullptr;
  sample.value = std::strtod(sample.raw_value.c_str(), &end);
  if (sample.raw_value.empty() || end != sample.raw_value.c_str() + sample.raw_value.size()) {
    return "unparsable value";
  }
  return "";
}

Exposition parse(const std::string& text) {
  Exposition out;
  if (!text.ends_with('\n')) out.errors.emplace_back("text must end with a newline");
  std::set<std::string> finished_families;
  std::string current_family;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto fail = [&out, &line](std::string_view why) {
      out.errors.push_back(std::string(why).append(": ").append(line));
    };
    if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) {
      if (std::string why = parse_comment(out, line); !why.empty()) fail(why);
      continue;
    }
    Sample sample;
    if (std::string why = parse_sample(line, sample); !why.empty()) {
      fail(why);
      continue;
    }
    const std::string family = family_of(out, sample.name);
    if (!out.type.contains(family)) fail("sample before its TYPE line");
    if (family != current_family) {
      if (!current_family.empty()) finished_families.insert(current_family);
      if (finished_families.contains(family)) fail("family not contiguous");
      current_family = family;
    }
    out.samples.push_back(std::move(sample));
  }
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

// The value of the one sample with exactly these labels, if any.
std::optional<double> value_of(const Exposition& exposition, const std::string& name,
                               const std::map<std::string, std::string>& labels = {}) {
  std::optional<double> found;
  for (const auto& sample : exposition.samples) {
    if (sample.name != name || sample.labels != labels) continue;
    if (found) return std::nullopt;  // duplicated series
    found = sample.value;
  }
  return found;
}

// One histogram series: its buckets in order, with their le text.
struct Series {
  std::vector<std::pair<std::string, double>> buckets;
  std::optional<double> sum;
  std::optional<double> count;
};

// Histogram series of `family`, keyed by their labels other than le.
std::map<std::map<std::string, std::string>, Series> histogram_series(const Exposition& exposition,
                                                                      const std::string& family) {
  std::map<std::map<std::string, std::string>, Series> series;
  for (const auto& sample : exposition.samples) {
    std::map<std::string, std::string> labels = sample.labels;
    if (sample.name == family + "_bucket") {
      const std::string le = labels["le"];
      labels.erase("le");
      series[labels].buckets.emplace_back(le, sample.value);
    } else if (sample.name == family + "_sum") {
      series[labels].sum = sample.value;
    } else if (sample.name == family + "_count") {
      series[labels].count = sample.value;
    }
  }
  return series;
}

// A Metrics with a distinct value in every counter and every histogram.
void fill(Metrics& metrics) {
  metrics.acquire_attempts = 11;
  metrics.acquire_retries = 12;
  metrics.acquire_wins = 13;
  metrics.acquire_losses = 14;
  metrics.releases = 15;
  metrics.renewals_ok = 16;
  metrics.renewals_failed = 17;
  metrics.locks_lost = 18;
  metrics.at_risk = 39;
  metrics.fenced_out = 19;
  for (const int us : {50, 100, 100, 2600, 12'000'000})
    metrics.acquire_wait.observe(Microseconds{us});
  metrics.hold_time.observe(Milliseconds{1500});
  NodeMetrics& first = metrics.node("127.0.0.1:7101");
  first.replies = 21;
  first.timeouts = 22;
  first.unreachable = 23;
  first.error_replies = 24;
  first.batched = 25;
  first.latency.observe(Microseconds{240});
  first.latency.observe(Microseconds{260});
  metrics.node("127.0.0.1:7102").replies = 31;
}

TEST(Prometheus, EveryLineParses) {
  Metrics metrics;
  fill(metrics);
  const Exposition exposition = parse(metrics.prometheus());
  EXPECT_TRUE(exposition.errors.empty()) << joined(exposition.errors);
  EXPECT_FALSE(exposition.samples.empty());
}

TEST(Prometheus, ExposesTheDocumentedFamiliesEachWithHelp) {
  Metrics metrics;
  fill(metrics);
  const Exposition exposition = parse(metrics.prometheus());
  ASSERT_TRUE(exposition.errors.empty()) << joined(exposition.errors);
  // The list documented at the top of lib/metrics.cpp.
  const std::map<std::string, std::string> expected = {
      {"redlock_acquire_attempts_total", "counter"},
      {"redlock_acquire_retries_total", "counter"},
      {"redlock_acquires_total", "counter"},
      {"redlock_releases_total", "counter"},
      {"redlock_renewals_total", "counter"},
      {"redlock_locks_lost_total", "counter"},
      {"redlock_at_risk_total", "counter"},
      {"redlock_fenced_out_total", "counter"},
      {"redlock_acquire_wait_seconds", "histogram"},
      {"redlock_hold_seconds", "histogram"},
      {"redlock_node_replies_total", "counter"},
      {"redlock_node_failures_total", "counter"},
      {"redlock_node_latency_seconds", "histogram"},
      {"redlock_node_batched_requests_total", "counter"}};
  EXPECT_EQ(exposition.type, expected);
  for (const auto& [name, type] : exposition.type) {
    EXPECT_EQ(exposition.help.count(name), 1U) << name;
  }
  EXPECT_EQ(exposition.help.size(), exposition.type.size());
}

// A member that is a Redis Cluster: its map reads, and per shard master the
// redirects it answered with and the slots it took over; none of these
// families for a quorum of single servers (the test above's).
TEST(Prometheus, AClusterMembersShardsAreLabelledByTheirMaster) {
  Metrics metrics;
  fill(metrics);
  NodeMetrics& member = metrics.node("redis+cluster://127.0.0.1:7000");
  member.map_reads = 3;
  member.count_shard_event("127.0.0.1:7001", NodeMetrics::ShardEvent::moved);
  member.count_shard_event("127.0.0.1:7001", NodeMetrics::ShardEvent::moved);
  member.count_shard_event("127.0.0.1:7001", NodeMetrics::ShardEvent::asked);
  member.count_shard_event("127.0.0.1:7004", NodeMetrics::ShardEvent::took_over);
  member.count_shard_event("127.0.0.1:7002", NodeMetrics::ShardEvent::try_again);
  const Exposition exposition = parse(metrics.prometheus());
  ASSERT_TRUE(exposition.errors.empty()) << joined(exposition.errors);
  EXPECT_EQ(exposition.type.at("redlock_cluster_map_reads_total"), "counter");
  EXPECT_EQ(exposition.type.at("redlock_cluster_redirects_total"), "counter");
  EXPECT_EQ(exposition.type.at("redlock_cluster_slot_takeovers_total"), "counter");
  const std::string node = "redis+cluster://127.0.0.1:7000";
  EXPECT_EQ(value_of(exposition, "redlock_cluster_map_reads_total", {{"node", node}}), 3.0);
  const auto redirects = [&](const std::string& shard, const std::string& kind) {
    return value_of(exposition, "redlock_cluster_redirects_total",
                    {{"node", node}, {"shard", shard}, {"kind", kind}});
  };
  EXPECT_EQ(redirects("127.0.0.1:7001", "moved"), 2.0);
  EXPECT_EQ(redirects("127.0.0.1:7001", "ask"), 1.0);
  EXPECT_EQ(redirects("127.0.0.1:7002", "tryagain"), 1.0);
  EXPECT_EQ(value_of(exposition, "redlock_cluster_slot_takeovers_total",
                     {{"node", node}, {"shard", "127.0.0.1:7004"}}),
            1.0);
  const MetricsSnapshot snapshot = metrics.snapshot();
  ASSERT_EQ(snapshot.nodes.back().shards.size(), 3U);
  EXPECT_EQ(snapshot.nodes.back().shards[0].shard, "127.0.0.1:7001") << "in the order first seen";
  EXPECT_EQ(exposition.type.at("redlock_cluster_votes_refused"), "gauge");
  EXPECT_EQ(value_of(exposition, "redlock_cluster_votes_refused", {{"node", node}}), 0.0);
  member.votes_refused = true;
  EXPECT_EQ(
      value_of(parse(metrics.prometheus()), "redlock_cluster_votes_refused", {{"node", node}}),
      1.0);
  EXPECT_TRUE(metrics.snapshot().nodes.back().votes_refused);
}

TEST(Prometheus, EmptyMetricsParseAndHaveNoNodeFamilies) {
  const std::string text = Metrics().prometheus();
  const Exposition exposition = parse(text);
  EXPECT_TRUE(exposition.errors.empty()) << joined(exposition.errors);
  EXPECT_EQ(value_of(exposition, "redlock_acquire_attempts_total"), 0.0);
  EXPECT_EQ(value_of(exposition, "redlock_acquire_wait_seconds_count"), 0.0);
  EXPECT_EQ(text.find("redlock_node_"), std::string::npos);
}

TEST(Prometheus, HistogramBucketsAreCumulativeAndEndWithInfEqualToCount) {
  Metrics metrics;
  fill(metrics);
  const Exposition exposition = parse(metrics.prometheus());
  ASSERT_TRUE(exposition.errors.empty()) << joined(exposition.errors);
  std::size_t series_checked = 0;
  for (const auto& [family, type] : exposition.type) {
    if (type != "histogram") continue;
    for (const auto& [labels, series] : histogram_series(exposition, family)) {
      ++series_checked;
      ASSERT_EQ(series.buckets.size(), kHistogramBoundsUs.size() + 1) << family;
      for (std::size_t i = 1; i < series.buckets.size(); ++i) {
        EXPECT_LE(series.buckets[i - 1].second, series.buckets[i].second) << family << " " << i;
      }
      EXPECT_EQ(series.buckets.back().first, "+Inf") << family;
      ASSERT_TRUE(series.count.has_value()) << family;
      ASSERT_TRUE(series.sum.has_value()) << family;
      EXPECT_EQ(series.buckets.back().second, *series.count) << family;
    }
  }
  EXPECT_EQ(series_checked, 4U);  // acquire_wait, hold, and two nodes' latency
}

TEST(Prometheus, BucketBoundsAreDecimalSeconds) {
  Metrics metrics;
  const Exposition exposition = parse(metrics.prometheus());
  const auto series = histogram_series(exposition, "redlock_acquire_wait_seconds");
  ASSERT_EQ(series.size(), 1U);
  std::vector<std::string> le;
  for (const auto& bucket : series.begin()->second.buckets) le.push_back(bucket.first);
  const std::vector<std::string> expected = {
      "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05",
      "0.1",    "0.25",    "0.5",    "1",     "2.5",    "5",     "10",   "+Inf"};
  EXPECT_EQ(le, expected);
}

TEST(Prometheus, NodeNameWithQuoteBackslashAndNewlineRoundTrips) {
  Metrics metrics;
  const std::string name = "we\"ird\\node\nname";
  metrics.node(name).replies = 7;
  const std::string text = metrics.prometheus();
  EXPECT_NE(text.find(R"(node="we\"ird\\node\nname")"), std::string::npos) << text;
  const Exposition exposition = parse(text);
  ASSERT_TRUE(exposition.errors.empty()) << joined(exposition.errors);
  EXPECT_EQ(value_of(exposition, "redlock_node_replies_total", {{"node", name}}), 7.0);
  EXPECT_EQ(value_of(exposition, "redlock_node_latency_seconds_count", {{"node", name}}), 0.0);
}

TEST(Prometheus, ValuesMatchTheSnapshot) {
  Metrics metrics;
  fill(metrics);
  const MetricsSnapshot snapshot = metrics.snapshot();
  const Exposition exposition = parse(to_prometheus(snapshot));
  ASSERT_TRUE(exposition.errors.empty()) << joined(exposition.errors);
  const auto as_double = [](std::uint64_t value) { return static_cast<double>(value); };

  EXPECT_EQ(value_of(exposition, "redlock_acquire_attempts_total"),
            as_double(snapshot.acquire_attempts));
  EXPECT_EQ(value_of(exposition, "redlock_acquire_retries_total"),
            as_double(snapshot.acquire_retries));
  EXPECT_EQ(value_of(exposition, "redlock_acquires_total", {{"result", "won"}}),
            as_double(snapshot.acquire_wins));
  EXPECT_EQ(value_of(exposition, "redlock_acquires_total", {{"result", "lost"}}),
            as_double(snapshot.acquire_losses));
  EXPECT_EQ(value_of(exposition, "redlock_releases_total"), as_double(snapshot.releases));
  EXPECT_EQ(value_of(exposition, "redlock_renewals_total", {{"result", "ok"}}),
            as_double(snapshot.renewals_ok));
  EXPECT_EQ(value_of(exposition, "redlock_renewals_total", {{"result", "failed"}}),
            as_double(snapshot.renewals_failed));
  EXPECT_EQ(value_of(exposition, "redlock_locks_lost_total"), as_double(snapshot.locks_lost));
  EXPECT_EQ(value_of(exposition, "redlock_at_risk_total"), as_double(snapshot.at_risk));
  EXPECT_EQ(value_of(exposition, "redlock_fenced_out_total"), as_double(snapshot.fenced_out));

  const auto check_histogram = [&](const std::string& family,
                                   const std::map<std::string, std::string>& labels,
                                   const HistogramSnapshot& expected) {
    const auto all = histogram_series(exposition, family);
    const auto series = all.find(labels);
    ASSERT_NE(series, all.end()) << family;
    std::uint64_t cumulative = 0;
    ASSERT_EQ(series->second.buckets.size(), expected.counts.size()) << family;
    for (std::size_t i = 0; i < expected.counts.size(); ++i) {
      cumulative += expected.counts[i];
      EXPECT_EQ(series->second.buckets[i].second, as_double(cumulative)) << family << " " << i;
    }
    EXPECT_EQ(series->second.count, as_double(expected.count)) << family;
    ASSERT_TRUE(series->second.sum.has_value()) << family;
    EXPECT_DOUBLE_EQ(*series->second.sum, static_cast<double>(expected.sum.count()) / 1e6)
        << family;
  };
  check_histogram("redlock_acquire_wait_seconds", {}, snapshot.acquire_wait);
  check_histogram("redlock_hold_seconds", {}, snapshot.hold_time);

  ASSERT_EQ(snapshot.nodes.size(), 2U);
  for (const auto& node : snapshot.nodes) {
    const auto with_kind = [&node](const std::string& kind) {
      return std::map<std::string, std::string>{{"node", node.node}, {"kind", kind}};
    };
    EXPECT_EQ(value_of(exposition, "redlock_node_replies_total", {{"node", node.node}}),
              as_double(node.replies));
    EXPECT_EQ(value_of(exposition, "redlock_node_failures_total", with_kind("timeout")),
              as_double(node.timeouts));
    EXPECT_EQ(value_of(exposition, "redlock_node_failures_total", with_kind("unreachable")),
              as_double(node.unreachable));
    EXPECT_EQ(value_of(exposition, "redlock_node_failures_total", with_kind("error_reply")),
              as_double(node.error_replies));
    EXPECT_EQ(value_of(exposition, "redlock_node_batched_requests_total", {{"node", node.node}}),
              as_double(node.batched));
    check_histogram("redlock_node_latency_seconds", {{"node", node.node}}, node.latency);
  }
}

TEST(Prometheus, SumIsExactDecimalSeconds) {
  Metrics metrics;
  metrics.hold_time.observe(Microseconds{1'234'567});
  metrics.hold_time.observe(Microseconds{3});
  const Exposition exposition = parse(metrics.prometheus());
  const auto sum =
      std::find_if(exposition.samples.begin(), exposition.samples.end(),
                   [](const Sample& s) { return s.name == "redlock_hold_seconds_sum"; });
  ASSERT_NE(sum, exposition.samples.end());
  EXPECT_EQ(sum->raw_value, "1.23457");
}

TEST(Prometheus, MatchesToPrometheusOfTheSnapshot) {
  Metrics metrics;
  fill(metrics);
  EXPECT_EQ(metrics.prometheus(), to_prometheus(metrics.snapshot()));
}

TEST(MetricsConcurrency, ReadingWhileRecordingSeesValidMonotonicSnapshots) {
  Metrics metrics;
  std::latch start(kThreads + 1);
  std::vector<std::thread> writers;
  writers.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&metrics, &start, t] {
      start.arrive_and_wait();
      NodeMetrics& own = metrics.node("thread-" + std::to_string(t));
      for (int i = 0; i < kPerThread / 4; ++i) {
        metrics.releases.fetch_add(1, std::memory_order_relaxed);
        metrics.hold_time.observe(Microseconds{i});
        own.latency.observe(Microseconds{i});
      }
    });
  }
  std::vector<std::string> problems;
  std::uint64_t previous_releases = 0;
  std::uint64_t previous_holds = 0;
  start.arrive_and_wait();
  for (int round = 0; round < 50; ++round) {
    const MetricsSnapshot snapshot = metrics.snapshot();
    if (snapshot.releases < previous_releases) problems.emplace_back("releases went back");
    if (snapshot.hold_time.count < previous_holds) problems.emplace_back("hold count went back");
    previous_releases = snapshot.releases;
    previous_holds = snapshot.hold_time.count;
    const Exposition exposition = parse(to_prometheus(snapshot));
    problems.insert(problems.end(), exposition.errors.begin(), exposition.errors.end());
  }
  for (auto& writer : writers) writer.join();
  EXPECT_TRUE(problems.empty()) << joined(problems);
  EXPECT_EQ(metrics.snapshot().releases, std::uint64_t{kThreads} * (kPerThread / 4));
}

TEST(Histogram, RepeatedObservationsCountAsMany) {
  Histogram once_each;
  Histogram together;
  for (int i = 0; i < 7; ++i) once_each.observe(Microseconds(250));
  once_each.observe(Microseconds(-3));
  together.observe(Microseconds(250), 7);
  together.observe(Microseconds(-3), 1);
  together.observe(Microseconds(999), 0);
  const HistogramSnapshot a = once_each.snapshot();
  const HistogramSnapshot b = together.snapshot();
  EXPECT_EQ(a.count, 8U);
  EXPECT_EQ(b.count, a.count);
  EXPECT_EQ(b.sum, a.sum);
  EXPECT_EQ(b.counts, a.counts);
}

}  // namespace
}  // namespace redlock
