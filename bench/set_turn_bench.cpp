// A set waiter among single-resource clients.
//
//   BM_SetAmongSingles: five clients on the bench nodes, each with its own
//     AsyncClient on its own libuv loop and thread, as five processes would
//     be. One locks the set {a, c} (acquire of a vector of resources), two
//     lock {a} alone and two lock {c} alone. Each loops acquire -> release
//     at once (no think time, the next acquire once the release has
//     reported), every acquire with a wait of 1 s (--wait_ms) and the
//     default retry settings. The window opens once every client has made
//     one uncontended cycle on a key of its own (its connections up and
//     scripts loaded) and lasts --seconds (3 s by default); an acquire
//     counts when it was called inside the window, and no acquire starts
//     after it, so the run ends by itself within seconds + wait.
//
//     Counters, per client (set, a1, a2, c1, c2): `_acquisitions`,
//     `_timeouts` (the wait ran out: not_acquired), `_wait_p50_us` and
//     `_wait_p99_us`, the wait being from calling acquire to its result,
//     whatever the result (a timeout counts at the length of its wait).
//     `single_wait_p99_us`: the p99 of the four single-resource clients'
//     waits pooled; `set_over_single_p99`: the set's p99 over it.
//     `timeouts` and `errors` (any other failed acquire or release) over
//     every client. Each run also prints a per-client table on stderr.
//
// Flags of its own, taken before Google Benchmark's: --seconds=S (the
// window, > 0) and --wait_ms=N (every acquire's wait, > 0).
#include <benchmark/benchmark.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_nodes.hpp"
#include "cycle_harness.hpp"
#include "redlock/redlock.hpp"

namespace redlock::bench {
namespace {

using std::chrono::milliseconds;

// The flags' values (main sets them before the benchmarks run).
double g_window_seconds = 3.0;
milliseconds g_wait{1000};

// Set-up (connections, the private cycle) and shut-down bounds: a node that
// stops answering fails the run instead of hanging it.
constexpr milliseconds kSetupLimit{10000};
constexpr milliseconds kCloseLimit{5000};
// The window's own bound beyond seconds + wait: the last cycle's release.
constexpr milliseconds kRunSlack{30000};

// The nodes that did not release, for an error's text.
std::string outcomes(const ReleaseResult& result) {
  std::string text;
  for (const NodeOutcome& node : result.nodes) {
    if (node.status == NodeStatus::released) continue;
    text += "; " + node.name + ": " + std::string(to_string(node.status));
    if (!node.detail.empty()) text += " (" + node.detail + ")";
  }
  return text;
}

// One client: what it locks, and what its window gave.
struct ClientRun {
  std::string name;
  std::vector<Resource> resources;  // one for a single, two for the set
  std::uint64_t acquisitions = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t errors = 0;
  std::vector<double> waits_us;  // every counted acquire, success or not
  std::string first_error;
};

// The window every client runs in, fixed when the last one is ready.
struct Window {
  BenchClock::time_point start{};
  BenchClock::time_point end{};
};

// One client's loop of cycles on its own loop, until the window has closed.
class Cycler {
 public:
  Cycler(uv_loop_t* loop, AsyncClient& client, ClientRun& run, const Window& window)
      : loop_(loop), client_(client), run_(run), window_(window) {
    options_.wait = g_wait;
  }

  // Runs cycles until the window has closed and the last cycle is done.
  void run() {
    start();
    const auto limit = std::chrono::duration_cast<milliseconds>(window_.end - BenchClock::now()) +
                       g_wait + kRunSlack;
    if (!run_loop_until(
            loop_, [this] { return done_; }, limit)) {
      note_error("the client's last cycle did not finish in time");
    }
  }

  // What still completes afterwards (close() ends an operation in flight
  // with shutting_down) is neither counted nor followed by a cycle.
  void stop() noexcept { stopped_ = true; }

 private:
  void start() {
    const auto now = BenchClock::now();
    if (stopped_ || now >= window_.end) {
      done_ = true;
      return;
    }
    called_ = now;
    auto on_result = [this](AcquireResult result) { acquired(std::move(result)); };
    if (run_.resources.size() == 1) {
      client_.acquire(run_.resources.front(), options_, std::move(on_result));
    } else {
      client_.acquire(run_.resources, options_, std::move(on_result));
    }
  }

  void acquired(AcquireResult result) {
    const auto now = BenchClock::now();
    if (stopped_) return;
    run_.waits_us.push_back(micros(now - called_));
    if (!result.ok()) {
      if (result.error == errc::not_acquired) {
        ++run_.timeouts;
      } else {
        note_error("acquire: " + result.error.message());
      }
      start();
      return;
    }
    ++run_.acquisitions;
    client_.release(*result.lock, [this](const ReleaseResult& released) {
      if (stopped_) return;
      if (released.error) note_error("release: " + released.error.message() + outcomes(released));
      start();
    });
  }

  void note_error(std::string what) {
    ++run_.errors;
    if (run_.first_error.empty()) run_.first_error = std::move(what);
  }

  uv_loop_t* loop_;
  AsyncClient& client_;
  ClientRun& run_;
  const Window& window_;
  AcquireOptions options_;
  BenchClock::time_point called_{};
  bool done_ = false;
  bool stopped_ = false;
};

// One uncontended acquire + release of `resource`: the client's connections
// up and its scripts loaded before the window. Returns an error text, empty
// on success.
std::string private_cycle(uv_loop_t* loop, AsyncClient& client, const Resource& resource) {
  // Shared with the callbacks: one may still come when the client closes
  // after this has given up waiting.
  struct Outcome {
    bool finished = false;
    std::string error;
  };
  auto outcome = std::make_shared<Outcome>();
  AcquireOptions options;
  options.wait = kSetupLimit;
  client.acquire(resource, options, [&client, outcome](AcquireResult result) {
    if (!result.ok()) {
      outcome->error = "private cycle: acquire: " + result.error.message();
      outcome->finished = true;
      return;
    }
    client.release(*result.lock, [outcome](const ReleaseResult& released) {
      if (released.error) outcome->error = "private cycle: release: " + released.error.message();
      outcome->finished = true;
    });
  });
  if (!run_loop_until(
          loop, [&outcome] { return outcome->finished; }, 2 * kSetupLimit)) {
    return "private cycle: no result";
  }
  return outcome->error;
}

// The client's thread: its loop, its client, the private cycle, the window.
void client_thread(const QuorumConfig& config, ClientRun& run, const Resource& private_key,
                   std::barrier<std::function<void()>>& ready, const Window& window) {
  BenchLoop loop;
  auto client = std::make_unique<AsyncClient>(loop.get(), config);
  const std::string setup = private_cycle(loop.get(), *client, private_key);
  if (!setup.empty()) {
    ++run.errors;
    run.first_error = setup;
  }
  ready.arrive_and_wait();
  Cycler cycler(loop.get(), *client, run, window);
  if (setup.empty()) cycler.run();
  cycler.stop();
  // Shared with on_closed, which may run only after this has given up.
  auto closed = std::make_shared<bool>(false);
  client->close([closed] { *closed = true; });
  if (!run_loop_until(
          loop.get(), [&closed] { return *closed; }, kCloseLimit)) {
    ++run.errors;
    if (run.first_error.empty()) run.first_error = "the client did not close";
  }
  client.reset();
}

QuorumConfig bench_config() {
  std::vector<std::string> addresses;
  for (const BenchNode& node : bench_nodes()) addresses.push_back(node.address());
  ConfigResult config = config_from_addresses(addresses);
  if (!config.ok()) throw std::runtime_error("bench nodes: " + config.error.to_string());
  return *config.config;
}

void print_table(const std::vector<ClientRun>& runs, double single_p99, double ratio) {
  std::fprintf(stderr, "%-6s %-6s %12s %9s %7s %14s %14s\n", "client", "locks", "acquisitions",
               "timeouts", "errors", "wait_p50_us", "wait_p99_us");
  for (const ClientRun& run : runs) {
    std::string locks = "{";
    for (std::size_t i = 0; i < run.resources.size(); ++i) {
      const std::string& name = run.resources[i].str();
      if (i > 0) locks += ',';
      locks.append(name, name.rfind(':') + 1);
    }
    locks += "}";
    std::fprintf(stderr, "%-6s %-6s %12llu %9llu %7llu %14.0f %14.0f\n", run.name.c_str(),
                 locks.c_str(), static_cast<unsigned long long>(run.acquisitions),
                 static_cast<unsigned long long>(run.timeouts),
                 static_cast<unsigned long long>(run.errors), percentile(run.waits_us, 0.50),
                 percentile(run.waits_us, 0.99));
    if (!run.first_error.empty()) {
      std::fprintf(stderr, "       first error: %s\n", run.first_error.c_str());
    }
  }
  std::fprintf(stderr, "single clients' wait p99 (pooled): %.0f us; set p99 / single p99: %.2f\n",
               single_p99, ratio);
}

void BM_SetAmongSingles(benchmark::State& state) {
  const QuorumConfig config = bench_config();
  // Keys of their own per run, so a run finds no line or record of another.
  static int run_number = 0;
  const std::string prefix =
      "bench:set-turn:" + std::to_string(getpid()) + ":" + std::to_string(++run_number) + ":";
  const Resource a(prefix + "a");
  const Resource c(prefix + "c");

  for (auto _ : state) {
    std::vector<ClientRun> runs(5);
    runs[0].name = "set";
    runs[0].resources = {a, c};
    const char* const singles[] = {"a1", "a2", "c1", "c2"};
    for (std::size_t i = 0; i < 4; ++i) {
      runs[i + 1].name = singles[i];
      runs[i + 1].resources = {i < 2 ? a : c};
    }

    Window window;
    const auto window_length = std::chrono::duration_cast<BenchClock::duration>(
        std::chrono::duration<double>(g_window_seconds));
    std::barrier<std::function<void()>> ready(static_cast<std::ptrdiff_t>(runs.size()), [&] {
      window.start = BenchClock::now();
      window.end = window.start + window_length;
    });
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      threads.emplace_back([&, i] {
        client_thread(config, runs[i], Resource(prefix + "private:" + std::to_string(i)), ready,
                      window);
      });
    }
    for (std::thread& thread : threads) thread.join();

    std::vector<double> single_waits;
    std::uint64_t timeouts = 0;
    std::uint64_t errors = 0;
    for (const ClientRun& run : runs) {
      state.counters[run.name + "_acquisitions"] = static_cast<double>(run.acquisitions);
      state.counters[run.name + "_timeouts"] = static_cast<double>(run.timeouts);
      state.counters[run.name + "_wait_p50_us"] = percentile(run.waits_us, 0.50);
      state.counters[run.name + "_wait_p99_us"] = percentile(run.waits_us, 0.99);
      if (run.resources.size() == 1) {
        single_waits.insert(single_waits.end(), run.waits_us.begin(), run.waits_us.end());
      }
      timeouts += run.timeouts;
      errors += run.errors;
    }
    const double single_p99 = percentile(single_waits, 0.99);
    const double set_p99 = percentile(runs.front().waits_us, 0.99);
    const double ratio = single_p99 > 0 ? set_p99 / single_p99 : 0.0;
    state.counters["single_wait_p99_us"] = single_p99;
    state.counters["set_over_single_p99"] = ratio;
    state.counters["timeouts"] = static_cast<double>(timeouts);
    state.counters["errors"] = static_cast<double>(errors);
    print_table(runs, single_p99, ratio);
    if (errors > 0) {
      state.SkipWithError("a client's acquire or release failed (not a timeout): see stderr");
      break;
    }
  }
}

BENCHMARK(BM_SetAmongSingles)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(1);

// Takes --seconds= and --wait_ms= out of argv; false on a bad value.
bool take_flags(int& argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (std::strncmp(arg, "--seconds=", 10) == 0) {
      char* end = nullptr;
      g_window_seconds = std::strtod(arg + 10, &end);
      if (*end != '\0' || !(g_window_seconds > 0)) return false;
    } else if (std::strncmp(arg, "--wait_ms=", 10) == 0) {
      char* end = nullptr;
      const long value = std::strtol(arg + 10, &end, 10);
      if (*end != '\0' || value <= 0) return false;
      g_wait = milliseconds(value);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return true;
}

}  // namespace
}  // namespace redlock::bench

int main(int argc, char** argv) {
  if (!redlock::bench::take_flags(argc, argv)) {
    std::fputs("usage: redlock_set_turn_bench [--seconds=S] [--wait_ms=N] [benchmark flags]\n",
               stderr);
    return 2;
  }
  // The clients run on loops of their own (async_client.hpp, "Signals").
  std::signal(SIGPIPE, SIG_IGN);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
