// One lock cycle (acquire on a majority of 5 nodes, then release on a
// majority) through two transport designs, in the same process:
//
//   BM_RawFanoutFloor            the floor: hiredis's stock libuv adapter,
//                                SET NX PX + compare-and-delete
//   BM_RawFanoutLibraryScripts   the stock adapter sending the library's own
//                                scripts (same server work as the client)
//   BM_AcquireRelease            redlock::AsyncClient (its own transport)
//   BM_AcquireReleaseAtMajority  the same with release_at_majority: the
//                                release ends at a majority, as the floor's
//   ...InFlight/64               the same with 64 cycles in flight
//   BM_AcquireReleaseOver/T      the client over TCP (0), TLS (1) and a Unix
//                                socket (2), to the same five nodes
//   BM_ConnectOver/T             a new client's five connections until ready
//
// Each benchmark iteration is one completed cycle. Counters: p50_us and
// p99_us (latency of one cycle, from its start to the end of its release),
// acq_p50_us and rel_p50_us (the two phases), ops_per_s (completed cycles
// per second of wall time) and node_cpu_us (the CPU all nodes used per
// cycle, when their processes are on this machine). The floor's release ends at a majority of
// replies; the client's when every node answered (docs/algorithm.md, "Release": it reports
// how many nodes released), or with release_at_majority at a majority of
// deletions.
//
// Nodes: bench_nodes.hpp. docs/transport.md has the method and the results.
//
// Fixed-count mode, for syscall and instruction counting (strace, callgrind):
//   REDLOCK_BENCH_CYCLES=N REDLOCK_BENCH_DESIGN=raw|raw-scripts|client|client-majority
//   [REDLOCK_BENCH_WIDTH=1|64] redlock_transport_bench
// connects, runs kWarmupCycles, then exactly N cycles, then shuts down; the
// difference between a run with N and one with N=0 is the cost of N cycles.
#include <benchmark/benchmark.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench_nodes.hpp"
#include "client_driver.hpp"
#include "cycle_harness.hpp"
#include "raw_fanout.hpp"

namespace redlock::bench {
namespace {

enum class Design { raw, raw_scripts, client, client_majority };

constexpr std::uint64_t kWarmupCycles = 200;

std::unique_ptr<CycleDriver> make_driver(Design design, uv_loop_t* loop,
                                         const std::vector<BenchNode>& nodes, std::size_t width) {
  if (design == Design::raw) {
    return std::make_unique<RawFanoutDriver>(loop, nodes, RawCommands::minimal);
  }
  if (design == Design::raw_scripts) {
    return std::make_unique<RawFanoutDriver>(loop, nodes, RawCommands::library_scripts);
  }
  return std::make_unique<ClientDriver>(loop, nodes, width, design == Design::client_majority);
}

// Warms `driver` up and times its cycles, `width` in flight, counting the
// CPU of `nodes`; then shuts it down.
void time_driver(benchmark::State& state, BenchLoop& loop, CycleDriver& driver,
                 const std::vector<BenchNode>& nodes, std::size_t width) {
  warm_up_and_time(state, loop, driver, width, kWarmupCycles, [&](Pipeline& pipeline) {
    time_cycles(state, pipeline, [&nodes] { return node_cpu_seconds(nodes); });
  });
}

// The nodes `pick` returns, or the benchmark skipped with why not (null).
template <typename Pick>
const std::vector<BenchNode>* nodes_or_skip(benchmark::State& state, Pick pick) {
  try {
    return &pick();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return nullptr;
  }
}

void run_cycles(benchmark::State& state, Design design, std::size_t width) {
  const std::vector<BenchNode>* nodes = nodes_or_skip(state, bench_nodes);
  if (nodes == nullptr) return;
  BenchLoop loop;
  std::unique_ptr<CycleDriver> driver = make_driver(design, loop.get(), *nodes, width);
  time_driver(state, loop, *driver, *nodes, width);
}

void BM_RawFanoutFloor(benchmark::State& state) { run_cycles(state, Design::raw, 1); }
void BM_RawFanoutLibraryScripts(benchmark::State& state) {
  run_cycles(state, Design::raw_scripts, 1);
}
void BM_AcquireRelease(benchmark::State& state) { run_cycles(state, Design::client, 1); }
void BM_AcquireReleaseAtMajority(benchmark::State& state) {
  run_cycles(state, Design::client_majority, 1);
}
void BM_RawFanoutFloorInFlight(benchmark::State& state) {
  run_cycles(state, Design::raw, static_cast<std::size_t>(state.range(0)));
}
void BM_RawFanoutLibraryScriptsInFlight(benchmark::State& state) {
  run_cycles(state, Design::raw_scripts, static_cast<std::size_t>(state.range(0)));
}
void BM_AcquireReleaseInFlight(benchmark::State& state) {
  run_cycles(state, Design::client, static_cast<std::size_t>(state.range(0)));
}
void BM_AcquireReleaseAtMajorityInFlight(benchmark::State& state) {
  run_cycles(state, Design::client_majority, static_cast<std::size_t>(state.range(0)));
}

BENCHMARK(BM_RawFanoutFloor)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RawFanoutLibraryScripts)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AcquireRelease)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AcquireReleaseAtMajority)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RawFanoutFloorInFlight)->Arg(64)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RawFanoutLibraryScriptsInFlight)
    ->Arg(64)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AcquireReleaseInFlight)->Arg(64)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AcquireReleaseAtMajorityInFlight)
    ->Arg(64)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// The same five nodes reached three ways, side by side in one run:
// Arg(0) plain TCP, Arg(1) TLS (verified, TLS 1.3), Arg(2) a Unix socket;
// the library's default configuration (release at a majority) but the
// bench node timeout. client_cpu_us is this process's CPU per cycle: what
// encryption costs the client.
ConfigResult transport_config(Transport transport) {
  ConfigResult config = config_from_addresses(transport_addresses(transport));
  if (!config.ok()) return config;
  for (NodeConfig& node : config.config->nodes) {
    if (node.tls.enabled) node.tls.ca_file = transport_ca_file();
  }
  config.config->lock.node_timeout = Milliseconds(1000);
  return config;
}

void run_transport_cycles(benchmark::State& state, std::size_t width) {
  const auto transport = static_cast<Transport>(state.range(0));
  state.SetLabel(transport_name(transport));
  const std::vector<BenchNode>* nodes = nodes_or_skip(state, transport_nodes);
  if (nodes == nullptr) return;
  BenchLoop loop;
  // A resource of its own for every cycle ("over:<n>").
  ClientDriver driver(loop.get(), transport_config(transport), AcquireOptions{},
                      std::string("over"));
  time_driver(state, loop, driver, *nodes, width);
}

void BM_AcquireReleaseOver(benchmark::State& state) { run_transport_cycles(state, 1); }
void BM_AcquireReleaseOverInFlight(benchmark::State& state) {
  run_transport_cycles(state, static_cast<std::size_t>(state.range(1)));
}
BENCHMARK(BM_AcquireReleaseOver)->DenseRange(0, 2)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AcquireReleaseOverInFlight)
    ->ArgsProduct({{0, 1, 2}, {64}})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// What a (re)connect costs: a new client connecting to all five nodes,
// from construction until every session is ready (TCP or socket connect,
// the TLS handshake, AUTH-less set-up: CONFIG GET, INFO, SCRIPT LOAD).
// One iteration is one client's five connections; client_cpu_us is the
// CPU this process spent on them.
void BM_ConnectOver(benchmark::State& state) {
  const auto transport = static_cast<Transport>(state.range(0));
  state.SetLabel(transport_name(transport));
  if (nodes_or_skip(state, transport_nodes) == nullptr) return;
  const ConfigResult config = transport_config(transport);
  if (!config.ok()) {
    state.SkipWithError(config.error.to_string().c_str());
    return;
  }
  BenchLoop loop;
  struct Watch {
    uv_check_t check{};
    AsyncClient* client = nullptr;
    bool ready = false;
  } watch;
  uv_check_init(loop.get(), &watch.check);
  watch.check.data = &watch;
  // A timer keeps the loop turning while the connections come up.
  uv_timer_t tick{};
  uv_timer_init(loop.get(), &tick);
  std::vector<double> samples;
  const double cpu_before = process_cpu_seconds();
  for (auto _ : state) {
    const auto started = BenchClock::now();
    {
      AsyncClient client(loop.get(), *config.config);
      watch.client = &client;
      watch.ready = false;
      uv_check_start(&watch.check, [](uv_check_t* handle) {
        auto* self = static_cast<Watch*>(handle->data);
        bool all = true;
        for (const NodeHealth& node : self->client->node_health()) all = all && node.connected;
        if (all) {
          self->ready = true;
          uv_stop(handle->loop);
        }
      });
      uv_timer_start(
          &tick, [](uv_timer_t*) {}, 1, 1);
      const auto give_up = BenchClock::now() + std::chrono::seconds(5);
      while (!watch.ready && BenchClock::now() < give_up) uv_run(loop.get(), UV_RUN_ONCE);
      uv_timer_stop(&tick);
      uv_check_stop(&watch.check);
      if (!watch.ready) {
        state.SkipWithError("the client did not connect to every node within 5 s");
        break;
      }
      samples.push_back(
          std::chrono::duration<double, std::micro>(BenchClock::now() - started).count());
      client.close();
    }
    uv_run(loop.get(), UV_RUN_NOWAIT);
  }
  if (!samples.empty()) {
    state.counters["p50_us"] = percentile(samples, 0.50);
    state.counters["p99_us"] = percentile(samples, 0.99);
    state.counters["client_cpu_us"] =
        (process_cpu_seconds() - cpu_before) * 1e6 / static_cast<double>(samples.size());
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&watch.check), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&tick), nullptr);
  uv_run(loop.get(), UV_RUN_DEFAULT);
}
BENCHMARK(BM_ConnectOver)->DenseRange(0, 2)->UseRealTime()->Unit(benchmark::kMicrosecond);

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  std::uint64_t value = 0;
  const std::string_view view(text);
  const auto [end, ec] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (ec != std::errc{} || end != view.data() + view.size()) {
    std::fprintf(stderr, "%s: not a number: %s\n", name, text);
    std::exit(2);
  }
  return value;
}

int run_fixed_count() {
  const std::uint64_t cycles = env_number("REDLOCK_BENCH_CYCLES", 0);
  const auto width = static_cast<std::size_t>(env_number("REDLOCK_BENCH_WIDTH", 1));
  const char* design_text = std::getenv("REDLOCK_BENCH_DESIGN");
  const std::string_view design_name = design_text != nullptr ? design_text : "";
  if ((design_name != "raw" && design_name != "raw-scripts" && design_name != "client" &&
       design_name != "client-majority") ||
      width == 0) {
    std::fputs(
        "REDLOCK_BENCH_DESIGN must be raw, raw-scripts, client or client-majority; "
        "REDLOCK_BENCH_WIDTH > 0\n",
        stderr);
    return 2;
  }
  if (std::getenv("REDLOCK_BENCH_NODES") == nullptr) {
    std::fputs(
        "note: no REDLOCK_BENCH_NODES; starting redis-server children "
        "(strace -f would count their syscalls too)\n",
        stderr);
  }
  const Design design = design_name == "raw"           ? Design::raw
                        : design_name == "raw-scripts" ? Design::raw_scripts
                        : design_name == "client"      ? Design::client
                                                       : Design::client_majority;
  int status = 0;
  try {
    BenchLoop loop;
    std::unique_ptr<CycleDriver> driver = make_driver(design, loop.get(), bench_nodes(), width);
    {
      Pipeline pipeline(loop.get(), *driver, width);
      std::string error = warm_up(*driver, pipeline, kWarmupCycles);
      if (error.empty()) {
        if (!pipeline.drain()) error = pipeline.error();
        pipeline.clear_samples();
      }
      const std::uint64_t first = pipeline.completed();
      const auto started = BenchClock::now();
      if (error.empty()) {
        pipeline.set_budget(first + cycles);
        if (!pipeline.run_until(first + cycles)) error = pipeline.error();
      }
      const std::chrono::duration<double> elapsed = BenchClock::now() - started;
      if (!error.empty()) {
        std::fprintf(stderr, "%s\n", error.c_str());
        status = 1;
      } else if (cycles > 0) {
        std::printf(
            "design=%s width=%zu cycles=%llu p50_us=%.1f p99_us=%.1f acq_p50_us=%.1f "
            "rel_p50_us=%.1f ops_per_s=%.0f\n",
            design_name.data(), width, static_cast<unsigned long long>(cycles),
            percentile(pipeline.samples(), 0.50), percentile(pipeline.samples(), 0.99),
            percentile(pipeline.acquire_samples(), 0.50),
            percentile(pipeline.release_samples(), 0.50),
            static_cast<double>(cycles) / elapsed.count());
      }
    }
    driver->shut_down();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    status = 1;
  }
  return status;
}

}  // namespace
}  // namespace redlock::bench

int main(int argc, char** argv) {
  if (std::getenv("REDLOCK_BENCH_CYCLES") != nullptr) {
    return redlock::bench::run_fixed_count();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
