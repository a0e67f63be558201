#include "cycle_harness.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace redlock::bench {

namespace {
// A benchmark must fail, not hang, when a node stops answering: the stock
// hiredis adapter has no request timeout of its own.
constexpr std::uint64_t kWatchdogTickMs = 1000;
constexpr int kStalledTicks = 5;
}  // namespace

BenchLoop::BenchLoop() { uv_loop_init(&loop_); }

BenchLoop::~BenchLoop() {
  // One turn runs the close callbacks of handles closed before; a handle
  // still open is reported rather than waited for.
  uv_run(&loop_, UV_RUN_NOWAIT);
  if (uv_loop_close(&loop_) != 0) {
    std::fputs("transport_bench: a libuv handle is still open after shut-down\n", stderr);
  }
}

bool run_loop_until(uv_loop_t* loop, const std::function<bool()>& done,
                    std::chrono::milliseconds limit) {
  struct Deadline {
    uv_timer_t timer{};
    bool expired = false;
  };
  auto* deadline = new Deadline{};
  uv_timer_init(loop, &deadline->timer);
  deadline->timer.data = deadline;
  uv_timer_start(
      &deadline->timer,
      [](uv_timer_t* timer) { static_cast<Deadline*>(timer->data)->expired = true; },
      static_cast<std::uint64_t>(limit.count()), 0);
  while (!done() && !deadline->expired) uv_run(loop, UV_RUN_ONCE);
  uv_close(reinterpret_cast<uv_handle_t*>(&deadline->timer),
           [](uv_handle_t* handle) { delete static_cast<Deadline*>(handle->data); });
  return done();
}

double percentile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0.0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(samples.size())));
  const std::size_t index = std::min(samples.size() - 1, rank == 0 ? 0 : rank - 1);
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(index),
                   samples.end());
  return samples[index];
}

struct Pipeline::Watchdog {
  uv_timer_t timer{};
  Pipeline* owner = nullptr;
  std::uint64_t last_completed = 0;
  int stalled_ticks = 0;
};

Pipeline::Pipeline(uv_loop_t* loop, CycleDriver& driver, std::size_t width)
    : loop_(loop),
      driver_(driver),
      started_at_(width),
      acquired_at_(width),
      watchdog_(new Watchdog{}) {
  idle_workers_.reserve(width);
  for (std::size_t worker = width; worker-- > 0;) idle_workers_.push_back(worker);
  driver_.set_listener(this);
  watchdog_->owner = this;
  uv_timer_init(loop_, &watchdog_->timer);
  watchdog_->timer.data = watchdog_;
  uv_timer_start(
      &watchdog_->timer,
      [](uv_timer_t* timer) {
        auto* dog = static_cast<Watchdog*>(timer->data);
        Pipeline& self = *dog->owner;
        const bool in_flight = self.started_ != self.completed_;
        if (!in_flight || self.completed_ != dog->last_completed) {
          dog->stalled_ticks = 0;
        } else if (++dog->stalled_ticks >= kStalledTicks) {
          self.error_ = "no lock cycle completed for 5 s (a node stopped answering?)";
          uv_stop(self.loop_);
        }
        dog->last_completed = self.completed_;
      },
      kWatchdogTickMs, kWatchdogTickMs);
  // The watchdog alone must not keep the loop alive.
  uv_unref(reinterpret_cast<uv_handle_t*>(&watchdog_->timer));
}

Pipeline::~Pipeline() {
  driver_.set_listener(nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&watchdog_->timer),
           [](uv_handle_t* handle) { delete static_cast<Watchdog*>(handle->data); });
}

bool Pipeline::turn() {
  while (!idle_workers_.empty() && started_ < budget_) {
    const std::size_t worker = idle_workers_.back();
    idle_workers_.pop_back();
    ++started_;
    started_at_[worker] = BenchClock::now();
    driver_.start_cycle(worker);
  }
  uv_run(loop_, UV_RUN_ONCE);
  return error_.empty();
}

bool Pipeline::run_until(std::uint64_t target) {
  while (completed_ < target) {
    if (started_ == completed_ && started_ >= budget_) {
      error_ = "cycle budget exhausted before the target";
      return false;
    }
    if (!turn()) return false;
  }
  return true;
}

bool Pipeline::drain() {
  budget_ = started_;
  while (completed_ < started_) {
    if (!turn()) return false;
  }
  return true;
}

void Pipeline::clear_samples() {
  samples_.clear();
  acquire_samples_.clear();
  release_samples_.clear();
}

void Pipeline::acquired(std::size_t worker) { acquired_at_[worker] = BenchClock::now(); }

void Pipeline::cycle_done(std::size_t worker, bool ok) {
  const auto now = BenchClock::now();
  samples_.push_back(micros(now - started_at_[worker]));
  if (acquired_at_[worker] > started_at_[worker]) {
    acquire_samples_.push_back(micros(acquired_at_[worker] - started_at_[worker]));
    release_samples_.push_back(micros(now - acquired_at_[worker]));
  }
  ++completed_;
  idle_workers_.push_back(worker);
  if (!ok && error_.empty()) error_ = "a lock cycle failed (see the driver's message on stderr)";
}

double process_cpu_seconds() noexcept {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

void time_cycles(benchmark::State& state, Pipeline& pipeline,
                 const std::function<std::optional<double>()>& node_cpu) {
  const std::uint64_t first = pipeline.completed();
  std::uint64_t target = first;
  const std::optional<double> cpu_before = node_cpu ? node_cpu() : std::nullopt;
  const double client_cpu_before = process_cpu_seconds();
  const auto started = BenchClock::now();
  for (auto _ : state) {
    if (!pipeline.run_until(++target)) {
      state.SkipWithError(pipeline.error().c_str());
      break;
    }
  }
  const std::chrono::duration<double> elapsed = BenchClock::now() - started;
  const auto cycles = static_cast<double>(pipeline.completed() - first);
  const std::optional<double> cpu_after = cpu_before ? node_cpu() : std::nullopt;
  if (cycles > 0) {
    state.counters["client_cpu_us"] = (process_cpu_seconds() - client_cpu_before) * 1e6 / cycles;
  }
  if (cpu_after && cycles > 0) {
    state.counters["node_cpu_us"] = (*cpu_after - *cpu_before) * 1e6 / cycles;
  }
  state.counters["p50_us"] = percentile(pipeline.samples(), 0.50);
  state.counters["p99_us"] = percentile(pipeline.samples(), 0.99);
  state.counters["acq_p50_us"] = percentile(pipeline.acquire_samples(), 0.50);
  state.counters["rel_p50_us"] = percentile(pipeline.release_samples(), 0.50);
  state.counters["ops_per_s"] = elapsed.count() > 0 ? cycles / elapsed.count() : 0.0;
  if (!state.error_occurred() && !pipeline.drain()) state.SkipWithError(pipeline.error().c_str());
}

std::string warm_up(CycleDriver& driver, Pipeline& pipeline, std::uint64_t warmup) {
  std::string error = driver.connect();
  if (!error.empty()) return error;
  if (!pipeline.run_until(pipeline.completed() + warmup)) return pipeline.error();
  pipeline.clear_samples();
  return {};
}

void warm_up_and_time(benchmark::State& state, BenchLoop& loop, CycleDriver& driver,
                      std::size_t width, std::uint64_t warmup,
                      const std::function<void(Pipeline&)>& timed) {
  {
    Pipeline pipeline(loop.get(), driver, width);
    const std::string error = warm_up(driver, pipeline, warmup);
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
    } else {
      timed(pipeline);
    }
  }
  driver.shut_down();
}

}  // namespace redlock::bench
