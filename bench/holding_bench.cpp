// What holding costs: a fenced acquire against an unfenced one, and how fast
// a waiter takes over once the holder releases (release wake-ups).
//
//   BM_UnfencedAcquireRelease, BM_FencedAcquireRelease: one BlockingClient,
//     sequential acquire + release on 5 nodes; p50_us / p99_us per cycle.
//   BM_SemaphorePermitAcquireRelease, BM_FourResourceAcquireRelease: the
//     same cycle for one permit of a 10-permit semaphore with every permit
//     free, and for a lock over 4 resources at once; read them as ratios
//     to BM_UnfencedAcquireRelease of the same run.
//   BM_GuardLockRelease: the same cycle through a self-renewing Guard
//     (BlockingClient::lock, then Guard::release): what a `with` block of
//     the Python binding does, in C++.
//   BM_GuardLockAsyncRelease: the same through BlockingClient::lock_async
//     and Guard::release_async, each result handed from the library's loop
//     to the waiting thread: what an `async with` block does, in C++.
//   BM_ReleaseWakeup: a holder and a waiter (two clients); the waiter's
//     retry delay is 10 s, so only the wake-up can hand the lock over
//     quickly. Time: from the holder's release call to the waiter's acquire
//     returning; p50_us / p99_us.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "bench_nodes.hpp"
#include "redis_probe.hpp"
#include "redlock/redlock.hpp"

namespace redlock::bench {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using Stopwatch = std::chrono::steady_clock;

QuorumConfig bench_config() {
  std::vector<std::string> addresses;
  for (const BenchNode& node : bench_nodes()) addresses.push_back(node.address());
  ConfigResult config = config_from_addresses(addresses);
  config.config->lock.node_timeout = milliseconds(1000);
  return *config.config;
}

void report_percentiles(benchmark::State& state, std::vector<double>& samples_us) {
  if (samples_us.empty()) return;
  std::sort(samples_us.begin(), samples_us.end());
  auto at = [&](double q) {
    const auto index = static_cast<std::size_t>(q * static_cast<double>(samples_us.size() - 1));
    return samples_us[index];
  };
  state.counters["p50_us"] = at(0.50);
  state.counters["p99_us"] = at(0.99);
}

// Sequential acquire + release of `target` (a Resource, a set of them, a
// Semaphore) on one client.
template <typename Target>
void acquire_release(benchmark::State& state, const Target& target, bool fenced) {
  BlockingClient client(bench_config());
  AcquireOptions options;
  options.fenced = fenced;
  std::vector<double> samples;
  for (auto _ : state) {
    const auto start = Stopwatch::now();
    AcquireResult held = client.acquire(target, options);
    if (!held.ok()) {
      state.SkipWithError("acquire failed");
      break;
    }
    (void)client.release(*held.lock);
    samples.push_back(static_cast<double>(
        std::chrono::duration_cast<microseconds>(Stopwatch::now() - start).count()));
  }
  report_percentiles(state, samples);
  state.counters["ops_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_UnfencedAcquireRelease(benchmark::State& state) {
  acquire_release(state, Resource("bench:holding"), false);
}
void BM_FencedAcquireRelease(benchmark::State& state) {
  acquire_release(state, Resource("bench:holding"), true);
}
void BM_SemaphorePermitAcquireRelease(benchmark::State& state) {
  acquire_release(state, Semaphore("bench:permits", 10), false);
}
void BM_FourResourceAcquireRelease(benchmark::State& state) {
  const std::vector<Resource> four{Resource("bench:set:a"), Resource("bench:set:b"),
                                   Resource("bench:set:c"), Resource("bench:set:d")};
  acquire_release(state, four, false);
}

void BM_GuardLockRelease(benchmark::State& state) {
  BlockingClient client(bench_config());
  std::vector<double> samples;
  for (auto _ : state) {
    const auto start = Stopwatch::now();
    Guard guard = client.lock(Resource("bench:guard"));
    if (!guard.owns_lock()) {
      state.SkipWithError("lock failed");
      break;
    }
    (void)guard.release();
    samples.push_back(static_cast<double>(
        std::chrono::duration_cast<microseconds>(Stopwatch::now() - start).count()));
  }
  report_percentiles(state, samples);
}

void BM_GuardLockAsyncRelease(benchmark::State& state) {
  BlockingClient client(bench_config());
  std::vector<double> samples;
  for (auto _ : state) {
    const auto start = Stopwatch::now();
    std::promise<Guard> granted;
    (void)client.lock_async(Resource("bench:guard-async"), GuardOptions{},
                            [&granted](Guard guard) { granted.set_value(std::move(guard)); });
    Guard guard = granted.get_future().get();
    if (!guard.owns_lock()) {
      state.SkipWithError("lock_async failed");
      break;
    }
    std::promise<void> released;
    guard.release_async([&released](ReleaseResult) { released.set_value(); });
    released.get_future().wait();
    samples.push_back(static_cast<double>(
        std::chrono::duration_cast<microseconds>(Stopwatch::now() - start).count()));
  }
  report_percentiles(state, samples);
}

void BM_ReleaseWakeup(benchmark::State& state) {
  const QuorumConfig config = bench_config();
  BlockingClient holder(config);
  BlockingClient waiter(config);
  const BenchNode& first = bench_nodes().front();
  test::RedisProbe probe(first.host, first.port);
  const std::string channel = "redlock:released:bench:handoff";
  std::vector<double> samples;
  for (auto _ : state) {
    AcquireResult held = holder.acquire(Resource("bench:handoff"));
    if (!held.ok()) {
      state.SkipWithError("holder could not acquire");
      break;
    }
    auto waited = std::async(std::launch::async, [&] {
      AcquireOptions options;
      options.retry_delay = milliseconds(10000);
      options.wait = milliseconds(20000);
      AcquireResult result = waiter.acquire(Resource("bench:handoff"), options);
      return std::make_pair(std::move(result), Stopwatch::now());
    });
    // Release only once the waiter listens (it subscribes after failing).
    for (;;) {
      const test::Reply reply = probe.command({"PUBSUB", "NUMSUB", channel});
      if (reply.kind == test::Reply::Kind::array && reply.elements.size() == 2 &&
          reply.elements[1].integer > 0) {
        break;
      }
      std::this_thread::sleep_for(microseconds(200));
    }
    const auto released_at = Stopwatch::now();
    (void)holder.release(*held.lock);
    auto [result, acquired_at] = waited.get();
    if (!result.ok()) {
      state.SkipWithError("waiter did not get the lock");
      break;
    }
    const double handoff_us = static_cast<double>(
        std::chrono::duration_cast<microseconds>(acquired_at - released_at).count());
    state.SetIterationTime(handoff_us / 1e6);
    samples.push_back(handoff_us);
    (void)waiter.release(*result.lock);
  }
  report_percentiles(state, samples);
}

BENCHMARK(BM_UnfencedAcquireRelease)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FencedAcquireRelease)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SemaphorePermitAcquireRelease)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FourResourceAcquireRelease)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GuardLockRelease)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GuardLockAsyncRelease)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReleaseWakeup)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(200);

}  // namespace
}  // namespace redlock::bench

BENCHMARK_MAIN();
