// redlock-demo: many threads, two clients, one lock, one counter.
//
// Every worker repeats: acquire the lock (waiting for it), GET the counter
// from the resource store, SET it to the value plus one, release. The GET
// and SET are two separate commands, so two workers inside the critical
// section at once would lose an increment; a final counter equal to the
// number of increments shows that the lock excluded them, across both
// clients. See kUsage for the command line.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "counter_store.hpp"
#include "demo_options.hpp"
#include "demo_stats.hpp"
#include "redlock/blocking_client.hpp"
#include "redlock/config.hpp"

namespace redlock::demo {
namespace {

// Exit codes, as the redlock CLI's (sysexits.h).
constexpr int kExitLostUpdates = 1;
constexpr int kExitUsage = 64;
constexpr int kExitStoreUnavailable = 69;
constexpr int kExitNotAcquired = 75;
constexpr int kExitConfig = 78;

// The lock's resource and the store's key share one name.
constexpr const char* kCounterName = "redlock-demo:counter";

Microseconds elapsed_since(TimePoint start) {
  return std::chrono::duration_cast<Microseconds>(SteadyClock::now() - start);
}

void run_worker(BlockingClient& client, const DemoOptions& options,
                const AcquireOptions& acquire_options, WorkerStats& stats) {
  CounterStore store(options.store, kCounterName);
  const Resource resource(kCounterName);
  for (int i = 0; i < options.increments && store.ok(); ++i) {
    const TimePoint asked = SteadyClock::now();
    const AcquireResult acquired = client.acquire(resource, acquire_options);
    stats.record_acquire(acquired, elapsed_since(asked));
    if (!acquired.ok()) continue;
    const Lock& lock = *acquired.lock;
    const std::optional<std::int64_t> value = store.read();
    if (value && store.write(*value + 1)) {
      ++stats.increments;
      if (!lock.valid_at(SteadyClock::now())) ++stats.validity_overruns;
    }
    if (client.release(lock).error) ++stats.incomplete_releases;
  }
  stats.store_error = store.error();
}

void print_failures(const WorkerStats& total) {
  if (total.failures.empty()) return;
  std::printf("failed acquires: ");
  const char* separator = "";
  for (const auto& [message, count] : total.failures) {
    std::printf("%s%lld x %s", separator, static_cast<long long>(count), message.c_str());
    separator = ", ";
  }
  std::printf("\n");
}

int run(const DemoOptions& options) {
  const ConfigResult loaded = load_default_config(options.config_path);
  if (!loaded.ok()) {
    std::fprintf(stderr, "redlock-demo: %s\n", loaded.error.to_string().c_str());
    return kExitConfig;
  }
  const QuorumConfig& config = *loaded.config;
  {
    CounterStore store(options.store, kCounterName);
    if (!store.write(0)) {
      std::fprintf(stderr, "redlock-demo: resource store %s\n", store.error().c_str());
      return kExitStoreUnavailable;
    }
  }

  AcquireOptions acquire_options;
  acquire_options.ttl = options.ttl.value_or(config.lock.ttl);
  acquire_options.wait = options.wait;
  const auto planned = static_cast<std::int64_t>(options.workers) * options.increments;
  std::printf(
      "redlock-demo: %d workers x %d increments on 2 clients; %zu nodes (majority %zu), "
      "ttl %lld ms, retry delay %lld ms, wait up to %lld ms\n",
      options.workers, options.increments, config.nodes.size(), config.nodes.size() / 2 + 1,
      static_cast<long long>(acquire_options.ttl->count()),
      static_cast<long long>(config.lock.retry_delay.count()),
      static_cast<long long>(options.wait.count()));
  std::fflush(stdout);

  // Workers alternate between two clients, so exclusion is shown between
  // independent clients (separate connections and loops), not only between
  // threads sharing one.
  BlockingClient first_client(config);
  BlockingClient second_client(config);
  std::vector<WorkerStats> stats(static_cast<std::size_t>(options.workers),
                                 WorkerStats(config.nodes.size()));
  const TimePoint started = SteadyClock::now();
  {
    std::vector<std::jthread> workers;
    for (std::size_t w = 0; w < stats.size(); ++w) {
      BlockingClient& client = w % 2 == 0 ? first_client : second_client;
      workers.emplace_back([&, w] { run_worker(client, options, acquire_options, stats[w]); });
    }
  }  // jthreads join here.
  const Microseconds wall = elapsed_since(started);

  WorkerStats total(config.nodes.size());
  for (const WorkerStats& worker : stats) total.merge(worker);
  CounterStore store(options.store, kCounterName);
  const std::optional<std::int64_t> final_count = store.read();
  if (!final_count) {
    std::fprintf(stderr, "redlock-demo: resource store %s\n", store.error().c_str());
    return kExitStoreUnavailable;
  }

  std::printf("\ncounter:           expected %lld, final %lld",
              static_cast<long long>(total.increments), static_cast<long long>(*final_count));
  if (total.increments != planned)
    std::printf(" (of %lld planned)", static_cast<long long>(planned));
  const bool lost = *final_count != total.increments;
  std::printf("\n%s\n", lost ? "LOST UPDATES" : "OK: no increment lost");
  std::printf("acquisitions:      %lld (acquire calls %lld, attempts %lld, retries %lld)\n",
              static_cast<long long>(total.acquisitions),
              static_cast<long long>(total.acquire_calls), static_cast<long long>(total.attempts),
              static_cast<long long>(total.attempts - total.acquire_calls));
  const double seconds = to_ms(wall) / 1000.0;
  std::printf("wall time:         %.3f s, %.1f acquisitions/s\n", seconds,
              seconds > 0 ? static_cast<double>(total.acquisitions) / seconds : 0.0);
  const LatencySummary waits = summarize(total.waits);
  std::printf("wait for the lock: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", to_ms(waits.p50),
              to_ms(waits.p99), to_ms(waits.max));
  std::printf("validity overruns: %lld, incomplete releases: %lld\n",
              static_cast<long long>(total.validity_overruns),
              static_cast<long long>(total.incomplete_releases));
  print_failures(total);
  if (!total.store_error.empty()) {
    std::printf("resource store failed: %s\n", total.store_error.c_str());
  }
  std::printf("\nper node (the deciding attempt of each acquire call):\n");
  print_node_table(total.nodes, config.nodes);

  if (lost) return kExitLostUpdates;
  if (!total.store_error.empty()) return kExitStoreUnavailable;
  if (!total.failures.empty()) return kExitNotAcquired;
  return 0;
}

}  // namespace
}  // namespace redlock::demo

int main(int argc, char** argv) {
  using namespace redlock::demo;
  const ParsedOptions parsed =
      parse_options(std::span<char* const>(argv, static_cast<std::size_t>(argc)));
  if (!parsed.options) {
    std::fprintf(stderr, "redlock-demo: %s (see --help)\n", parsed.error.c_str());
    return kExitUsage;
  }
  if (parsed.options->help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  return run(*parsed.options);
}
