// How the cost of a lock cycle grows with the number of nodes and with the
// number of cycles in flight, through redlock::AsyncClient:
//
//   BM_AcquireReleaseNodes/N  N = 1, 3, 5, 7: one cycle at a time (acquire,
//                             then release of the lock it returned) against
//                             the first N nodes.
//   BM_AcquireReleaseDepth/D  D = 1, 4, 16, 64, 256: D cycles in flight, each
//                             on a key of its own, against 5 nodes.
//
// Each benchmark iteration is one completed cycle. Counters, as in
// transport_bench.cpp: p50_us and p99_us (one cycle, from its start to the
// end of its release), acq_p50_us and rel_p50_us (the two phases),
// ops_per_s (completed cycles per second of wall time) and node_cpu_us (the
// nodes' CPU per cycle).
//
// Nodes: kMaxNodes redis-server processes started once per process by the
// test fixture, on free loopback ports; or REDLOCK_BENCH_NODES (see
// bench_nodes.hpp), which must then name at least as many nodes as a
// benchmark asks for. Before the first benchmark, one lock cycle runs on all
// of them: a node's first use marks it (docs/engine.md, Node amnesia), and a
// node first used after the others would be held back as recovering.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_nodes.hpp"
#include "client_driver.hpp"
#include "cycle_harness.hpp"

namespace redlock::bench {
namespace {

constexpr std::size_t kMaxNodes = 7;
constexpr std::size_t kDepthNodes = 5;
// At least this many cycles before timing, and at least two per worker, so
// every connection is up and every worker has run.
constexpr std::uint64_t kWarmupCycles = 200;

// One cycle on every node at once; an error text, empty on success.
std::string mark_every_node(const std::vector<BenchNode>& nodes) {
  BenchLoop loop;
  ClientDriver driver(loop.get(), nodes, 1);
  std::string error = driver.connect();
  if (error.empty()) {
    Pipeline pipeline(loop.get(), driver, 1);
    if (!pipeline.run_until(1)) error = pipeline.error();
  }
  driver.shut_down();
  return error;
}

// Throws what bench_nodes() and the fixture throw, or std::runtime_error when
// the nodes could not be marked.
const std::vector<BenchNode>& scaling_nodes() {
  static const std::vector<BenchNode> nodes = [] {
    const char* list = std::getenv("REDLOCK_BENCH_NODES");
    std::vector<BenchNode> found =
        list != nullptr && *list != '\0' ? bench_nodes() : started_nodes(kMaxNodes);
    const std::string error = mark_every_node(found);
    if (!error.empty()) throw std::runtime_error("first cycle on every node: " + error);
    return found;
  }();
  return nodes;
}

// Runs the benchmark's iterations as lock cycles, `depth` in flight, against
// the first `node_count` nodes.
void run_cycles(benchmark::State& state, std::size_t node_count, std::size_t depth) {
  std::vector<BenchNode> nodes;
  try {
    nodes = scaling_nodes();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  if (nodes.size() < node_count) {
    state.SkipWithError("REDLOCK_BENCH_NODES names too few nodes for this benchmark");
    return;
  }
  nodes.resize(node_count);
  BenchLoop loop;
  ClientDriver driver(loop.get(), nodes, depth);
  warm_up_and_time(state, loop, driver, depth, std::max<std::uint64_t>(kWarmupCycles, 2 * depth),
                   [&](Pipeline& pipeline) {
                     time_cycles(state, pipeline, [&nodes] { return node_cpu_seconds(nodes); });
                   });
}

void BM_AcquireReleaseNodes(benchmark::State& state) {
  run_cycles(state, static_cast<std::size_t>(state.range(0)), 1);
}

void BM_AcquireReleaseDepth(benchmark::State& state) {
  run_cycles(state, kDepthNodes, static_cast<std::size_t>(state.range(0)));
}

BENCHMARK(BM_AcquireReleaseNodes)
    ->Arg(1)
    ->Arg(3)
    ->Arg(5)
    ->Arg(7)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AcquireReleaseDepth)
    ->RangeMultiplier(4)
    ->Range(1, 256)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace redlock::bench

BENCHMARK_MAIN();
