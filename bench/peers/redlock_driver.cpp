// The cases of bench/peers/compare, run with this library (--impl ours,
// ours-at-majority: with `[lock] release_at_majority`, ours-fair: with
// `[lock] fair`) or with the floor of
// docs/transport.md (--impl floor: hiredis's stock libuv adapter, SET NX PX
// on every node, a majority, compare-and-delete; latency and inflight
// only). node_redlock_driver.js runs the same cases with
// node-redlock; both print one JSON line per run with the same fields.
//
//   redlock_peer_driver --case latency|inflight|contended --nodes host:port,...
//       [--impl ours|ours-at-majority|ours-fair|floor] [--cycles N] [--warmup N]
//       [--seconds S] [--width W] [--workers W] [--prefix TEXT]
//       [--node-timeout-ms MS] [--clients N]
//
// Cases (TTL 10 s everywhere; see node_redlock_driver.js for the same text
// from the other side):
//   latency    one cycle at a time, each on a key of its own; --warmup
//              cycles, then --cycles timed ones: p50/p99 of the cycle.
//   inflight   --width (64) cycles in flight on distinct keys, timed for
//              --seconds after --warmup cycles: completed cycles per second.
//   contended  contended_run.hpp; --clients N (not a flag of the other
//              drivers, for profiling): the workers share N AsyncClients.
//
// The uncontended cases drive cycles with bench/cycle_harness.hpp's
// Pipeline, the transport benchmark's harness, for both implementations.
// peak_rss_kib is getrusage(RUSAGE_SELF).ru_maxrss: the whole process.
// Exit status: 0 on success, 1 when a run failed, 2 on usage.
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "client_driver.hpp"
#include "contended_run.hpp"
#include "cycle_harness.hpp"
#include "json_line.hpp"
#include "latency_histogram.hpp"
#include "peer_settings.hpp"
#include "raw_fanout.hpp"

namespace redlock::bench::peers {

namespace {

struct RunResult {
  JsonLine line;
  std::string error;  // empty on success
};

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

std::unique_ptr<CycleDriver> make_driver(uv_loop_t* loop, const PeerSettings& settings) {
  if (settings.impl == Impl::floor) {
    return std::make_unique<RawFanoutDriver>(loop, settings.nodes, RawCommands::minimal);
  }
  return std::make_unique<ClientDriver>(loop, client_config(settings), uncontended_acquire(),
                                        settings.prefix);
}

// Fixed count: `warmup` cycles, then exactly `cycles` timed ones.
std::string time_latency(Pipeline& pipeline, const PeerSettings& settings, JsonLine& line) {
  const std::uint64_t first = pipeline.completed();
  pipeline.set_budget(first + settings.cycles);
  const auto started = BenchClock::now();
  if (!pipeline.run_until(first + settings.cycles)) return pipeline.error();
  const std::chrono::duration<double> elapsed = BenchClock::now() - started;
  line.add("cycles", pipeline.samples().size());
  line.add("p50_us", percentile(pipeline.samples(), 0.50));
  line.add("p99_us", percentile(pipeline.samples(), 0.99));
  line.add("ops_per_s", static_cast<double>(pipeline.samples().size()) / elapsed.count());
  return {};
}

// Fixed time: cycles completed within `seconds`, `width` kept in flight.
// The pipeline's samples are folded into a histogram as they come, so that
// the harness's memory stays constant however many cycles complete.
std::string time_inflight(Pipeline& pipeline, const PeerSettings& settings, JsonLine& line) {
  constexpr std::size_t kFoldEvery = 4096;
  LatencyHistogram latency;
  const std::uint64_t first = pipeline.completed();
  const auto started = BenchClock::now();
  const auto deadline = started + std::chrono::duration_cast<BenchClock::duration>(
                                      std::chrono::duration<double>(settings.seconds));
  while (BenchClock::now() < deadline) {
    if (!pipeline.run_until(pipeline.completed() + 1)) return pipeline.error();
    if (pipeline.samples().size() >= kFoldEvery) {
      latency.add_all(pipeline.samples());
      pipeline.clear_samples();
    }
  }
  const std::chrono::duration<double> elapsed = BenchClock::now() - started;
  latency.add_all(pipeline.samples());
  pipeline.clear_samples();
  const std::uint64_t cycles = pipeline.completed() - first;
  line.add("width", settings.width);
  line.add("cycles", cycles);
  line.add("seconds", elapsed.count());
  line.add("ops_per_s", static_cast<double>(cycles) / elapsed.count());
  line.add("p50_us", latency.percentile(0.50));
  line.add("p99_us", latency.percentile(0.99));
  return {};
}

std::string run_cycles(uv_loop_t* loop, const PeerSettings& settings, JsonLine& line) {
  const std::size_t width = settings.run_case == Case::latency ? 1 : settings.width;
  std::unique_ptr<CycleDriver> driver = make_driver(loop, settings);
  std::string error;
  {
    Pipeline pipeline(loop, *driver, width);
    error = driver->connect();
    if (error.empty() && !pipeline.run_until(settings.warmup)) error = pipeline.error();
    pipeline.clear_samples();
    if (error.empty()) {
      error = settings.run_case == Case::latency ? time_latency(pipeline, settings, line)
                                                 : time_inflight(pipeline, settings, line);
    }
    if (error.empty() && !pipeline.drain()) error = pipeline.error();
  }
  driver->shut_down();
  return error;
}

std::string contended(uv_loop_t* loop, const PeerSettings& settings, JsonLine& line) {
  ContendedResult result = run_contended(loop, settings);
  if (!result.error.empty()) return result.error;
  const ContendedFigures& figures = result.figures;
  const auto [least, most] =
      std::minmax_element(figures.per_worker.begin(), figures.per_worker.end());
  const auto acquisitions = static_cast<double>(figures.acquisitions);
  line.add("workers", settings.workers);
  if (settings.clients != 0) line.add("clients", settings.clients);
  line.add("seconds", figures.seconds);
  line.add("acquisitions", figures.acquisitions);
  line.add("acquisitions_per_s", acquisitions / figures.seconds);
  line.add("wait_p50_us", percentile(figures.waits_us, 0.50));
  line.add("wait_p99_us", percentile(figures.waits_us, 0.99));
  line.add("wait_max_us", figures.waits_us.empty() ? 0.0
                                                   : *std::max_element(figures.waits_us.begin(),
                                                                       figures.waits_us.end()));
  line.add("stalls", static_cast<std::uint64_t>(
                         std::count_if(figures.waits_us.begin(), figures.waits_us.end(),
                                       [](double wait) { return wait >= kStallUs; })));
  line.add("min_per_worker", *least);
  line.add("max_per_worker", *most);
  line.add("attempts_per_acquire",
           figures.acquisitions > 0 ? static_cast<double>(figures.attempts) / acquisitions : 0.0);
  line.add("retry",
           "retry_count -1 (wait bound 20 s), retry_delay 10 ms (pause uniform in [0, 20) ms), "
           "release wake-ups on");
  for (const auto& [name, value] : figures.profile) line.add(name, value);
  return {};
}

int run(const PeerSettings& settings) {
  JsonLine line;
  line.add("impl", impl_name(settings.impl));
  line.add("case", case_name(settings.run_case));
  line.add("nodes", settings.nodes.size());
  line.add("ttl_ms", kTtl.count());
  std::string error;
  {
    BenchLoop loop;
    error = settings.run_case == Case::contended ? contended(loop.get(), settings, line)
                                                 : run_cycles(loop.get(), settings, line);
  }
  if (!error.empty()) {
    std::fprintf(stderr, "redlock_peer_driver: %s\n", error.c_str());
    return 1;
  }
  line.add("peak_rss_kib", peak_rss_kib());
  std::printf("%s\n", line.str().c_str());
  return 0;
}

}  // namespace

}  // namespace redlock::bench::peers

int main(int argc, char** argv) {
  using namespace redlock::bench::peers;
  // A node closing its end while a request is written must not kill the
  // process (async_client.hpp, "Signals").
  std::signal(SIGPIPE, SIG_IGN);
  const SettingsResult parsed = parse_settings(argc, argv);
  if (!parsed.settings) {
    std::fprintf(stderr, "redlock_peer_driver: %s\n", parsed.error.c_str());
    return 2;
  }
  try {
    return run(*parsed.settings);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "redlock_peer_driver: %s\n", e.what());
    return 1;
  }
}
