// What both transport designs share in the benchmark: a loop, the notion of
// one lock cycle (acquire on a majority, then release on a majority), and a
// pipeline that keeps W cycles in flight and times each one.
//
// Cycles are only ever started by the pipeline between loop turns, never
// from inside a reply callback, so both designs see the same driving
// pattern: start, then uv_run(UV_RUN_ONCE) until the cycle has completed.
#pragma once

#include <benchmark/benchmark.h>
#include <uv.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace redlock::bench {

using BenchClock = std::chrono::steady_clock;

// A duration in microseconds, for the samples and counters.
inline double micros(BenchClock::duration elapsed) {
  return std::chrono::duration<double, std::micro>(elapsed).count();
}

// A loop owned by one benchmark run. Its destructor runs the close callbacks
// still due and reports (on stderr) a loop that still has handles: a leak.
class BenchLoop {
 public:
  BenchLoop();
  ~BenchLoop();
  BenchLoop(const BenchLoop&) = delete;
  BenchLoop& operator=(const BenchLoop&) = delete;
  [[nodiscard]] uv_loop_t* get() noexcept { return &loop_; }

 private:
  uv_loop_t loop_{};
};

class CycleListener {
 public:
  // The cycle of `worker` holds the lock on a majority; its release starts.
  virtual void acquired(std::size_t worker) = 0;
  // Called once per started cycle, on the loop.
  virtual void cycle_done(std::size_t worker, bool ok) = 0;

 protected:
  ~CycleListener() = default;
};

// One transport design.
class CycleDriver {
 public:
  virtual ~CycleDriver() = default;
  // Connects to every node and runs the loop until ready. Returns an error
  // text, empty on success.
  [[nodiscard]] virtual std::string connect() = 0;
  // Starts a cycle for `worker` (0 .. width-1; one cycle per worker at a
  // time). The listener hears of it exactly once.
  virtual void start_cycle(std::size_t worker) = 0;
  // Closes every connection and runs the loop until they are closed.
  virtual void shut_down() = 0;
  void set_listener(CycleListener* listener) noexcept { listener_ = listener; }

 protected:
  CycleListener* listener_ = nullptr;
};

// Runs the loop (UV_RUN_ONCE) until `done()` or until `limit` has passed;
// returns done(). For setup and shut-down waits, so that a node that never
// answers fails a benchmark instead of hanging it.
[[nodiscard]] bool run_loop_until(uv_loop_t* loop, const std::function<bool()>& done,
                                  std::chrono::milliseconds limit);

// This process's CPU time (user + system), in seconds: the client's side
// of a cycle, the nodes running in their own processes.
[[nodiscard]] double process_cpu_seconds() noexcept;

// Latency percentiles over samples in microseconds; q in (0, 1].
[[nodiscard]] double percentile(std::vector<double> samples, double q);

class Pipeline final : public CycleListener {
 public:
  static constexpr std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();

  Pipeline(uv_loop_t* loop, CycleDriver& driver, std::size_t width);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Keeps `width` cycles in flight (never starting more than the budget in
  // total) until at least `target` have completed. False on a failed cycle
  // or when nothing completed for several seconds (see error()).
  [[nodiscard]] bool run_until(std::uint64_t target);
  // Starts no more cycles; runs until none is in flight.
  [[nodiscard]] bool drain();
  void set_budget(std::uint64_t total_cycles) noexcept { budget_ = total_cycles; }

  [[nodiscard]] std::uint64_t completed() const noexcept { return completed_; }
  // Latency of every cycle completed since the last clear, in microseconds:
  // the whole cycle, and its two phases (start to acquired, acquired to end).
  [[nodiscard]] const std::vector<double>& samples() const noexcept { return samples_; }
  [[nodiscard]] const std::vector<double>& acquire_samples() const noexcept {
    return acquire_samples_;
  }
  [[nodiscard]] const std::vector<double>& release_samples() const noexcept {
    return release_samples_;
  }
  void clear_samples();
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

  void acquired(std::size_t worker) override;
  void cycle_done(std::size_t worker, bool ok) override;

 private:
  struct Watchdog;
  bool turn();

  uv_loop_t* loop_;
  CycleDriver& driver_;
  std::vector<BenchClock::time_point> started_at_;
  std::vector<BenchClock::time_point> acquired_at_;
  std::vector<std::size_t> idle_workers_;
  std::vector<double> samples_;
  std::vector<double> acquire_samples_;
  std::vector<double> release_samples_;
  std::uint64_t started_ = 0;
  std::uint64_t completed_ = 0;
  std::uint64_t budget_ = kUnlimited;
  Watchdog* watchdog_;
  std::string error_;
};

// Runs a Google Benchmark's iterations as completed cycles of `pipeline`
// (warmed up, samples cleared), sets the counters p50_us, p99_us,
// acq_p50_us, rel_p50_us and ops_per_s, then drains the cycles still in
// flight; a failure skips the benchmark with the pipeline's error. With
// `node_cpu` (the nodes' CPU seconds so far, nullopt when not known) also
// node_cpu_us: the nodes' CPU per timed cycle, all nodes together.
void time_cycles(benchmark::State& state, Pipeline& pipeline,
                 const std::function<std::optional<double>()>& node_cpu = {});

// Connects `driver` and runs `warmup` cycles of `pipeline`, then clears its
// samples; an error text, empty on success.
[[nodiscard]] std::string warm_up(CycleDriver& driver, Pipeline& pipeline, std::uint64_t warmup);

// Connects `driver`, runs `warmup` cycles `width` in flight on `loop`,
// clears the samples and hands the pipeline to `timed` (which times the
// iterations, with time_cycles); a failure to connect or warm up skips the
// benchmark with its error. Shuts the driver down.
void warm_up_and_time(benchmark::State& state, BenchLoop& loop, CycleDriver& driver,
                      std::size_t width, std::uint64_t warmup,
                      const std::function<void(Pipeline&)>& timed);

}  // namespace redlock::bench
