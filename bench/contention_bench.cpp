// Many clients on one key, and many locks held by one client.
//
//   BM_ContendedHandoff/8: 8 workers, each with its own BlockingClient, take
//     and release one key with an empty critical section until together
//     they have made kHandoffAcquisitions acquisitions (one iteration).
//     Counters: acquisitions_per_s; wait_p50_us / wait_p99_us (from calling
//     acquire to holding the lock); the spread across workers
//     (min_per_worker, max_per_worker, max_min_ratio) so a starved worker
//     shows; attempts_per_acquire (rounds sent per successful acquire).
//   BM_Renew/10000, BM_Renew/100000: that many Guards on distinct resources
//     held by ONE BlockingClient with TTL kRenewTtl (3 s), so the guards
//     renew every ttl / 3 = 1 s. The guards are taken before the timed part;
//     each iteration holds them for kHoldPeriod. Counters: cpu_percent_of_core
//     (getrusage(RUSAGE_SELF) user + sys over wall time, in % of one core:
//     the whole process, i.e. the client's loop thread), renewals_per_s
//     (Metrics::renewals_ok), cpu_us_per_renewal, locks_lost (must be 0),
//     and bytes_per_lock: the client's memory per held lock, as the heap
//     sees it — mallinfo2()'s bytes in use (uordblks, every arena) plus
//     mmapped blocks (hblkhd, where the large vectors go) after the holding
//     iterations, minus the same before the guards were taken, over the
//     count. It covers the Guard objects themselves (one vector of exactly
//     `count`), everything the library keeps per lock, and what renewing
//     them grew (timer slab, request queues, output buffers); not the
//     process's other memory (stacks, code, freed heap kept by malloc).
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_nodes.hpp"
#include "redlock/redlock.hpp"

namespace redlock::bench {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using Stopwatch = std::chrono::steady_clock;

// Acquisitions per BM_ContendedHandoff iteration, all workers together.
constexpr std::int64_t kHandoffAcquisitions = 2000;
// How long one contended acquire may wait (a generous bound, not a target).
constexpr milliseconds kHandoffWait{10000};
// BM_Renew: the TTL of every held lock (renewal every ttl / 3 = 1 s) and how
// long each iteration holds them.
constexpr milliseconds kRenewTtl{3000};
constexpr milliseconds kHoldPeriod{5000};
// Threads that take (and later release) the guards in parallel.
constexpr int kSetupThreads = 16;

QuorumConfig bench_config(milliseconds ttl) {
  std::vector<std::string> addresses;
  for (const BenchNode& node : bench_nodes()) addresses.push_back(node.address());
  ConfigResult config = config_from_addresses(addresses);
  config.config->lock.node_timeout = milliseconds(1000);
  config.config->lock.ttl = ttl;
  config.config->lock.max_ttl = ttl;
  return *config.config;
}

double percentile(const std::vector<double>& sorted, double q) {
  const auto index = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1));
  return sorted[index];
}

void BM_ContendedHandoff(benchmark::State& state) {
  const auto workers = static_cast<std::size_t>(state.range(0));
  const QuorumConfig config = bench_config(milliseconds(10000));
  std::vector<std::unique_ptr<BlockingClient>> clients;
  for (std::size_t i = 0; i < workers; ++i)
    clients.push_back(std::make_unique<BlockingClient>(config));

  const Resource key("bench:contended");
  AcquireOptions options;
  options.wait = kHandoffWait;
  std::vector<double> waits_us;
  std::vector<std::int64_t> per_worker(workers, 0);
  std::atomic<std::int64_t> attempts{0};
  std::atomic<bool> failed{false};

  for (auto _ : state) {
    std::atomic<std::int64_t> remaining{kHandoffAcquisitions};
    std::vector<std::vector<double>> samples(workers);
    std::vector<std::int64_t> counts(workers, 0);
    std::barrier start(static_cast<std::ptrdiff_t>(workers));
    std::vector<std::thread> threads;
    for (std::size_t w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        start.arrive_and_wait();
        while (!failed.load() && remaining.fetch_sub(1) > 0) {
          const auto called = Stopwatch::now();
          AcquireResult held = clients[w]->acquire(key, options);
          const auto holding = Stopwatch::now();
          if (!held.ok()) {
            failed.store(true);
            break;
          }
          samples[w].push_back(static_cast<double>(
              std::chrono::duration_cast<microseconds>(holding - called).count()));
          ++counts[w];
          attempts.fetch_add(held.attempts);
          (void)clients[w]->release(*held.lock);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    if (failed.load()) {
      state.SkipWithError("an acquire did not get the lock within the wait bound");
      break;
    }
    for (std::size_t w = 0; w < workers; ++w) {
      waits_us.insert(waits_us.end(), samples[w].begin(), samples[w].end());
      per_worker[w] += counts[w];
    }
  }
  if (failed.load() || waits_us.empty()) return;

  std::sort(waits_us.begin(), waits_us.end());
  const auto [min_it, max_it] = std::minmax_element(per_worker.begin(), per_worker.end());
  const auto acquisitions = static_cast<double>(waits_us.size());
  state.counters["acquisitions_per_s"] =
      benchmark::Counter(acquisitions, benchmark::Counter::kIsRate);
  state.counters["wait_p50_us"] = percentile(waits_us, 0.50);
  state.counters["wait_p99_us"] = percentile(waits_us, 0.99);
  state.counters["attempts_per_acquire"] = static_cast<double>(attempts.load()) / acquisitions;
  state.counters["min_per_worker"] = static_cast<double>(*min_it);
  state.counters["max_per_worker"] = static_cast<double>(*max_it);
  state.counters["max_min_ratio"] =
      *min_it > 0 ? static_cast<double>(*max_it) / static_cast<double>(*min_it) : 0.0;
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Bytes the heap has handed out and not taken back, in every arena and in
// mmapped blocks.
double heap_in_use() {
  const struct mallinfo2 info = mallinfo2();
  return static_cast<double>(info.uordblks) + static_cast<double>(info.hblkhd);
}

// Takes guards on distinct resources into every slot of `guards`,
// kSetupThreads at a time. Returns false if any acquire failed (what was
// taken stays in `guards`, to be released).
bool take_guards(BlockingClient& client, std::vector<Guard>& guards) {
  const std::size_t count = guards.size();
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kSetupThreads; ++t) {
    threads.emplace_back([&] {
      GuardOptions options;
      options.acquire.wait = milliseconds(10000);
      for (std::size_t i = next.fetch_add(1); i < count && !failed.load(); i = next.fetch_add(1)) {
        guards[i] = client.lock(Resource("bench:renew:" + std::to_string(i)), options);
        if (!guards[i]) {
          failed.store(true);
          break;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return !failed.load();
}

// Releases every guard, kSetupThreads at a time (each release blocks).
void release_guards(std::vector<Guard>& guards) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kSetupThreads; ++t) {
    threads.emplace_back([&] {
      for (std::size_t i = next.fetch_add(1); i < guards.size(); i = next.fetch_add(1)) {
        (void)guards[i].release();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  guards.clear();
}

void BM_Renew(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  BlockingClient client(bench_config(kRenewTtl));
  const double heap_before = heap_in_use();
  std::vector<Guard> guards(count);
  if (!take_guards(client, guards)) {
    release_guards(guards);
    state.SkipWithError("could not take every guard");
    return;
  }
  const std::shared_ptr<Metrics> metrics = client.metrics();
  const std::uint64_t lost_before = metrics->snapshot().locks_lost;

  double cpu_total = 0;
  double wall_total = 0;
  std::uint64_t renewals_total = 0;
  for (auto _ : state) {
    const double cpu_start = cpu_seconds();
    const std::uint64_t renewed_start = metrics->snapshot().renewals_ok;
    const auto wall_start = Stopwatch::now();
    std::this_thread::sleep_for(kHoldPeriod);
    const auto wall_end = Stopwatch::now();
    renewals_total += metrics->snapshot().renewals_ok - renewed_start;
    cpu_total += cpu_seconds() - cpu_start;
    wall_total += std::chrono::duration<double>(wall_end - wall_start).count();
  }

  const double heap_held = heap_in_use();
  std::uint64_t invalid = 0;
  for (const Guard& guard : guards) invalid += guard.valid() ? 0U : 1U;
  const std::uint64_t lost = metrics->snapshot().locks_lost - lost_before;
  release_guards(guards);

  state.counters["cpu_percent_of_core"] = wall_total > 0 ? 100.0 * cpu_total / wall_total : 0.0;
  state.counters["renewals_per_s"] =
      wall_total > 0 ? static_cast<double>(renewals_total) / wall_total : 0.0;
  state.counters["cpu_us_per_renewal"] =
      renewals_total > 0 ? 1e6 * cpu_total / static_cast<double>(renewals_total) : 0.0;
  state.counters["bytes_per_lock"] = (heap_held - heap_before) / static_cast<double>(count);
  state.counters["locks_lost"] = static_cast<double>(std::max(lost, invalid));
  if (lost > 0 || invalid > 0) {
    // The run's figures still say how far it got; the benchmark library
    // drops the counters of a run marked as failed.
    std::fprintf(stderr,
                 "BM_Renew/%zu lost %llu locks: cpu_percent_of_core=%.2f renewals_per_s=%.0f "
                 "bytes_per_lock=%.0f\n",
                 count, static_cast<unsigned long long>(std::max(lost, invalid)),
                 state.counters["cpu_percent_of_core"].value,
                 state.counters["renewals_per_s"].value, state.counters["bytes_per_lock"].value);
    state.SkipWithError("a held lock was lost");
  }
}

BENCHMARK(BM_ContendedHandoff)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Renew)
    ->Arg(10000)
    ->Arg(100000)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

}  // namespace
}  // namespace redlock::bench

BENCHMARK_MAIN();
