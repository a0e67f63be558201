#include "contended_run.hpp"

#include <chrono>
#include <memory>
#include <utility>

#include "cycle_harness.hpp"
#include "redlock/async_client.hpp"

namespace redlock::bench::peers {

namespace {

// Beyond the timed window: the warm-up, the last cycles, closing.
constexpr std::chrono::seconds kRunSlack{60};
constexpr std::chrono::seconds kCloseLimit{5};

double micros(BenchClock::duration elapsed) {
  return std::chrono::duration<double, std::micro>(elapsed).count();
}

class ContendedRun {
 public:
  ContendedRun(uv_loop_t* loop, const PeerSettings& settings)
      : loop_(loop),
        settings_(settings),
        window_(std::chrono::duration_cast<BenchClock::duration>(
            std::chrono::duration<double>(settings.seconds))),
        resource_(settings.prefix + ":contended"),
        warmup_left_(settings.warmup),
        workers_(settings.workers) {
    figures_.per_worker.assign(settings.workers, 0);
  }

  ContendedResult run() {
    ConfigResult config = client_config(settings_);
    if (!config.ok()) return {{}, config.error.to_string()};
    for (Worker& worker : workers_)
      worker.client = std::make_unique<AsyncClient>(loop_, *config.config);
    if (warmup_left_ == 0) open_window(BenchClock::now());
    for (std::size_t w = 0; w < workers_.size(); ++w) start_acquire(w);
    const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(window_) + kRunSlack;
    if (!run_loop_until(
            loop_, [this] { return finished_ == workers_.size(); }, limit)) {
      fail("the workers did not stop in time");
    }
    close_clients();
    figures_.seconds = std::chrono::duration<double>(window_).count();
    return {std::move(figures_), std::move(error_)};
  }

 private:
  struct Worker {
    std::unique_ptr<AsyncClient> client;
    BenchClock::time_point called{};
  };

  void open_window(BenchClock::time_point now) {
    window_open_ = true;
    window_end_ = now + window_;
  }

  void start_acquire(std::size_t w) {
    workers_[w].called = BenchClock::now();
    workers_[w].client->acquire(resource_, options_, [this, w](AcquireResult result) {
      on_acquired(w, std::move(result));
    });
  }

  void on_acquired(std::size_t w, AcquireResult result) {
    const auto held = BenchClock::now();
    if (!result.ok()) {
      fail("worker " + std::to_string(w) + ": acquire failed: " + result.error.message());
      ++finished_;
      return;
    }
    count(w, held, result.attempts);
    workers_[w].client->release(*result.lock,
                                [this, w](ReleaseResult released) { on_released(w, released); });
  }

  void count(std::size_t w, BenchClock::time_point held, int attempts) {
    if (!window_open_) {
      if (--warmup_left_ == 0) open_window(held);
      return;
    }
    if (held >= window_end_) {
      stopping_ = true;
      return;
    }
    figures_.waits_us.push_back(micros(held - workers_[w].called));
    ++figures_.per_worker[w];
    ++figures_.acquisitions;
    figures_.attempts += static_cast<std::uint64_t>(attempts);
  }

  void on_released(std::size_t w, const ReleaseResult& result) {
    if (result.released < workers_[w].client->quorum()) {
      fail("worker " + std::to_string(w) + ": released on " + std::to_string(result.released) +
           " nodes only");
    }
    if (stopping_ || !error_.empty()) {
      ++finished_;
      return;
    }
    start_acquire(w);
  }

  void fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    stopping_ = true;
  }

  void close_clients() {
    std::size_t closed = 0;
    for (Worker& worker : workers_) worker.client->close([&closed] { ++closed; });
    if (!run_loop_until(
            loop_, [&] { return closed == workers_.size(); }, kCloseLimit)) {
      fail("a client did not close");
    }
    workers_.clear();
  }

  uv_loop_t* loop_;
  const PeerSettings& settings_;
  const BenchClock::duration window_;
  const Resource resource_;
  const AcquireOptions options_ = contended_acquire();
  std::uint64_t warmup_left_;
  bool window_open_ = false;
  BenchClock::time_point window_end_{};
  bool stopping_ = false;
  std::size_t finished_ = 0;
  std::vector<Worker> workers_;
  ContendedFigures figures_;
  std::string error_;
};

}  // namespace

ContendedResult run_contended(uv_loop_t* loop, const PeerSettings& settings) {
  ContendedRun run(loop, settings);
  return run.run();
}

}  // namespace redlock::bench::peers
