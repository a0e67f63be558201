#include "contended_run.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include "cycle_harness.hpp"
#include "handover_trace.hpp"
#include "redlock/async_client.hpp"

namespace redlock::bench::peers {

namespace {

// Beyond the timed window: the warm-up, the last cycles, closing.
constexpr std::chrono::seconds kRunSlack{60};
constexpr std::chrono::seconds kCloseLimit{5};

double micros(BenchClock::duration elapsed) {
  return std::chrono::duration<double, std::micro>(elapsed).count();
}

std::int64_t boot_ns(TimePoint at) { return at.time_since_epoch().count(); }
std::int64_t boot_now_ns() { return boot_ns(BootClock::now()); }

// One counted acquisition, on the library's clock (ns), for the profile.
struct Handover {
  std::size_t worker = 0;
  int attempts = 0;
  std::int64_t called = 0;   // acquire called
  std::int64_t started = 0;  // the winning attempt's t0 (Lock::started)
  std::int64_t held = 0;     // the callback with the lock
  std::int64_t release_called = 0;
  std::int64_t release_done = 0;
};

// An attempt starts right after what triggered it (begin_attempt reads the
// clock first thing); a trigger further back than this did not start it.
constexpr std::int64_t kTriggerSlackNs = 200'000;

struct Spread {
  std::vector<double> values;
  void add(double value) { values.push_back(value); }
  [[nodiscard]] double mean() const {
    double sum = 0;
    for (const double value : values) sum += value;
    return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
  }
  [[nodiscard]] double p50() const { return percentile(values, 0.50); }
};

std::vector<std::pair<std::string, double>> profile(const std::vector<Handover>& handovers,
                                                    const trace::Counters& counters,
                                                    const std::vector<trace::Event>& events) {
  std::vector<std::pair<std::string, double>> out;
  const auto n = static_cast<double>(handovers.size());
  if (handovers.size() < 2) return out;
  const auto per = [n](std::uint64_t count) { return static_cast<double>(count) / n; };
  std::uint64_t attempts = 0;
  for (const Handover& each : handovers) attempts += static_cast<std::uint64_t>(each.attempts);
  out.emplace_back("profile_attempts_per_acquire", per(attempts));
  out.emplace_back("profile_failed_held_per_acquire",
                   per(counters.failed_attempts - counters.split_votes));
  out.emplace_back("profile_split_votes_per_acquire", per(counters.split_votes));
  out.emplace_back("profile_wakeups_per_release", per(counters.wakes));
  out.emplace_back("profile_wakeups_in_split_pause_per_release",
                   per(counters.wakes_in_split_pause));
  out.emplace_back("profile_retry_pauses_run_out_per_acquire", per(counters.retry_timers));
  out.emplace_back("profile_split_pauses_run_out_per_acquire", per(counters.split_timers));
  out.emplace_back("profile_courtesy_pauses_per_acquire", per(counters.courtesy_pauses));
  out.emplace_back("profile_courtesy_pause_mean_us",
                   counters.courtesy_pauses == 0
                       ? 0.0
                       : static_cast<double>(counters.courtesy_us) /
                             static_cast<double>(counters.courtesy_pauses));
  out.emplace_back(
      "profile_first_attempt_won_share",
      static_cast<double>(std::count_if(handovers.begin(), handovers.end(),
                                        [](const Handover& each) { return each.attempts == 1; })) /
          n);

  // What started each winning attempt: the latest trigger just before its t0.
  std::uint64_t by_trigger[4] = {};
  std::uint64_t immediate = 0;
  std::uint64_t unknown = 0;
  std::uint64_t same_holder = 0;
  Spread handover, to_winning_attempt, winning_round, release_round, release_to_wake,
      courtesy_first;
  for (std::size_t k = 1; k < handovers.size(); ++k) {
    const Handover& before = handovers[k - 1];
    const Handover& now = handovers[k];
    if (now.worker == before.worker) ++same_holder;
    handover.add(static_cast<double>(now.held - before.release_called) / 1e3);
    to_winning_attempt.add(static_cast<double>(now.started - before.release_called) / 1e3);
    winning_round.add(static_cast<double>(now.held - now.started) / 1e3);
    release_round.add(static_cast<double>(before.release_done - before.release_called) / 1e3);
    const auto after = std::upper_bound(
        events.begin(), events.end(), now.started,
        [](std::int64_t at, const trace::Event& event) { return at < event.at_ns; });
    const trace::Event* trigger = after == events.begin() ? nullptr : &*std::prev(after);
    const bool triggered = trigger != nullptr && now.started - trigger->at_ns <= kTriggerSlackNs &&
                           trigger->at_ns >= now.called;
    if (!triggered) {
      if (now.attempts == 1) {
        ++immediate;
      } else {
        ++unknown;
      }
      continue;
    }
    ++by_trigger[static_cast<int>(trigger->trigger)];
    if (trigger->trigger == trace::Trigger::wake) {
      release_to_wake.add(static_cast<double>(trigger->at_ns - before.release_called) / 1e3);
    }
    if (trigger->trigger == trace::Trigger::courtesy) {
      courtesy_first.add(static_cast<double>(now.started - now.called) / 1e3);
    }
  }
  const double handovers_counted = n - 1;
  const auto share = [handovers_counted](std::uint64_t count) {
    return static_cast<double>(count) / handovers_counted;
  };
  out.emplace_back("profile_winner_immediate_first_share", share(immediate));
  out.emplace_back("profile_winner_after_courtesy_share",
                   share(by_trigger[static_cast<int>(trace::Trigger::courtesy)]));
  out.emplace_back("profile_winner_woken_share",
                   share(by_trigger[static_cast<int>(trace::Trigger::wake)]));
  out.emplace_back("profile_winner_retry_pause_share",
                   share(by_trigger[static_cast<int>(trace::Trigger::retry_timer)]));
  out.emplace_back("profile_winner_split_pause_share",
                   share(by_trigger[static_cast<int>(trace::Trigger::split_timer)]));
  out.emplace_back("profile_winner_unattributed_share", share(unknown));
  out.emplace_back("profile_winner_was_last_holder_share", share(same_holder));
  out.emplace_back("profile_handover_mean_us", handover.mean());
  out.emplace_back("profile_handover_p50_us", handover.p50());
  out.emplace_back("profile_release_to_winning_attempt_mean_us", to_winning_attempt.mean());
  out.emplace_back("profile_release_to_winning_attempt_p50_us", to_winning_attempt.p50());
  out.emplace_back("profile_winning_round_mean_us", winning_round.mean());
  out.emplace_back("profile_winning_round_p50_us", winning_round.p50());
  out.emplace_back("profile_release_round_p50_us", release_round.p50());
  out.emplace_back("profile_release_to_wakeup_p50_us", release_to_wake.p50());
  out.emplace_back("profile_courtesy_won_wait_p50_us", courtesy_first.p50());
  out.emplace_back("profile_retry_pause_mean_us",
                   counters.failed_attempts == 0
                       ? 0.0
                       : static_cast<double>(counters.retry_pause_us) /
                             static_cast<double>(counters.failed_attempts));
  return out;
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
    // One client per worker unless --clients says fewer: then the workers
    // share them round-robin (a client wakes one of its own waiters per
    // release, wakeup_hub.hpp).
    const std::size_t clients =
        settings_.clients == 0 ? workers_.size() : std::min(settings_.clients, workers_.size());
    for (std::size_t c = 0; c < clients; ++c) {
      clients_.push_back(std::make_unique<AsyncClient>(loop_, *config.config));
    }
    for (std::size_t w = 0; w < workers_.size(); ++w)
      workers_[w].client = clients_[w % clients].get();
    if (warmup_left_ == 0) open_window(BenchClock::now());
    for (std::size_t w = 0; w < workers_.size(); ++w) start_acquire(w);
    const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(window_) + kRunSlack;
    if (!run_loop_until(
            loop_, [this] { return finished_ == workers_.size(); }, limit)) {
      fail("the workers did not stop in time");
    }
    close_clients();
    figures_.seconds = std::chrono::duration<double>(window_).count();
    if (tracing_ && error_.empty()) {
      // The last counted acquisitions' releases may still have been in
      // flight when the window closed; those are done by now.
      figures_.profile = profile(handovers_, trace_counters_, trace_events_);
    }
    return {std::move(figures_), std::move(error_)};
  }

 private:
  struct Worker {
    AsyncClient* client = nullptr;
    BenchClock::time_point called{};
    std::int64_t called_ns = 0;  // the same instant on the library's clock
    std::size_t handover = 0;    // its last counted acquisition, plus one
  };

  void open_window(BenchClock::time_point now) {
    window_open_ = true;
    window_end_ = now + window_;
    if (tracing_) trace::reset();
  }

  void start_acquire(std::size_t w) {
    workers_[w].called = BenchClock::now();
    if (tracing_) workers_[w].called_ns = boot_now_ns();
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
    count(w, held, result);
    workers_[w].client->release(*result.lock,
                                [this, w](ReleaseResult released) { on_released(w, released); });
  }

  void count(std::size_t w, BenchClock::time_point held, const AcquireResult& result) {
    const int attempts = result.attempts;
    workers_[w].handover = 0;
    if (!window_open_) {
      if (--warmup_left_ == 0) open_window(held);
      return;
    }
    if (held >= window_end_) {
      if (!stopping_ && tracing_) {
        trace_counters_ = trace::counters();
        trace_events_ = trace::events();
      }
      stopping_ = true;
      return;
    }
    if (tracing_) {
      const std::int64_t now = boot_now_ns();
      handovers_.push_back(
          {w, attempts, workers_[w].called_ns, boot_ns(result.lock->started), now, now, 0});
      workers_[w].handover = handovers_.size();
    }
    figures_.waits_us.push_back(micros(held - workers_[w].called));
    ++figures_.per_worker[w];
    ++figures_.acquisitions;
    figures_.attempts += static_cast<std::uint64_t>(attempts);
  }

  void on_released(std::size_t w, const ReleaseResult& result) {
    if (workers_[w].handover > 0) handovers_[workers_[w].handover - 1].release_done = boot_now_ns();
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
    for (auto& client : clients_) client->close([&closed] { ++closed; });
    if (!run_loop_until(
            loop_, [&] { return closed == clients_.size(); }, kCloseLimit)) {
      fail("a client did not close");
    }
    workers_.clear();
    clients_.clear();
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
  std::vector<std::unique_ptr<AsyncClient>> clients_;
  const bool tracing_ = trace::enabled();
  std::vector<Handover> handovers_;
  trace::Counters trace_counters_;
  std::vector<trace::Event> trace_events_;
  ContendedFigures figures_;
  std::string error_;
};

}  // namespace

ContendedResult run_contended(uv_loop_t* loop, const PeerSettings& settings) {
  ContendedRun run(loop, settings);
  return run.run();
}

}  // namespace redlock::bench::peers
