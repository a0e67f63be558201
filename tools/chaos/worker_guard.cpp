#include "worker_guard.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "history.hpp"
#include "lock_target.hpp"
#include "protocol/validity.hpp"
#include "redlock/redlock.hpp"
#include "worker_clock.hpp"
#include "worker_commands.hpp"
#include "worker_pause.hpp"
#include "worker_resource.hpp"

namespace redlock::chaos {
namespace {

using std::chrono::milliseconds;

// The history file, written by the worker's thread and by the guards' loss
// signals on the client's loop thread.
class SharedHistory {
 public:
  explicit SharedHistory(const std::filesystem::path& file) : writer_(file) {}
  [[nodiscard]] bool ok() const noexcept { return writer_.ok(); }
  void write(const Event& event) {
    std::lock_guard<std::mutex> lock(mutex_);
    writer_.write(event);
  }

 private:
  std::mutex mutex_;
  HistoryWriter writer_;
};

// One hold (the outer one, nested 0, or a nested one) as its loss is
// recorded: by its on_lost, on the loop thread, or at a check of the
// worker's; each way at most once.
struct HoldRecord {
  std::int64_t op = 0;
  std::int64_t nested = 0;
  std::mutex mutex;
  std::string value;  // known once lock() returned
  bool check_recorded = false;
};

// Bounds: the nodes' connections before "ready", the wait for "go", a
// slice of the critical section's work.
constexpr int kReadyPolls = 600;
constexpr milliseconds kReadyPoll{5};
constexpr milliseconds kGoLimit{120000};
constexpr milliseconds kWorkSlice{5};

ClientOptions client_options(const MonotonicClock& clock) {
  ClientOptions options;
  options.clock = &clock;
  return options;
}

class GuardWorker {
 public:
  GuardWorker(const WorkerOptions& options, QuorumConfig config)
      : options_(options),
        proc_("c" + std::to_string(options.index)),
        clock_(options.clock_rate),
        history_(options.history_path),
        resource_(options),
        client_(std::move(config), client_options(clock_)) {}

  int run() {
    if (!history_.ok()) {
      std::fprintf(stderr, "worker: cannot open %s\n", options_.history_path.c_str());
      return 1;
    }
    wait_until_connected();
    say("ready");
    if (commands_.wait_for_go(kGoLimit)) {
      const TimePoint stop_at = SteadyClock::now() + options_.duration;
      bool going = commands_.sleep(options_.start_delay);
      while (going && !commands_.stop_requested() && SteadyClock::now() < stop_at) {
        hold_once();
        going = commands_.sleep(options_.think);
      }
    }
    say("done");
    return 0;
  }

 private:
  void wait_until_connected() {
    for (int poll = 0; poll < kReadyPolls; ++poll) {
      bool all = true;
      for (const NodeHealth& node : client_.node_health()) all = all && node.connected;
      if (all) return;
      std::this_thread::sleep_for(kReadyPoll);
    }
  }

  void say(const std::string& line) {
    const std::string text = line + "\n";
    // A short write to a pipe of this size cannot be partial.
    [[maybe_unused]] const ssize_t written = ::write(STDOUT_FILENO, text.data(), text.size());
  }

  Event event(EventKind kind, Phase phase, std::int64_t nested = 0) const {
    Event e;
    e.t = reference_now_ns();
    e.proc = proc_;
    e.kind = kind;
    e.phase = phase;
    e.op = op_;
    e.nested = nested;
    return e;
  }

  void pause_at(const std::string& point) {
    if (!commands_.take_pause(point)) return;
    pause_self(history_, event(EventKind::nemesis, Phase::invoke),
               event(EventKind::nemesis, Phase::ok), proc_, point,
               [&] { say("pausing " + point); });
  }

  // The loss signal of one hold: recorded from the client's loop thread.
  std::function<void(std::error_code)> on_lost(const std::shared_ptr<HoldRecord>& hold) {
    return [this, hold](std::error_code why) {
      Event lost;
      lost.t = reference_now_ns();
      lost.proc = proc_;
      lost.kind = EventKind::lost;
      lost.phase = Phase::info;
      lost.op = hold->op;
      lost.nested = hold->nested;
      lost.detail = "on_lost";
      lost.error = why.message();
      {
        std::lock_guard<std::mutex> lock(hold->mutex);
        lost.value = hold->value;
      }
      history_.write(lost);
    };
  }

  GuardOptions guard_options(const std::shared_ptr<HoldRecord>& hold) {
    GuardOptions options;
    options.reentrant = true;
    options.acquire.ttl = options_.ttl;
    options.acquire.retry_delay = options_.retry_delay;
    options.acquire.wait = options_.wait.count() > 0 ? options_.wait : options_.ttl;
    options.acquire.fenced = options_.fenced;
    if (options_.max_renewals > 0) options.max_renewals = options_.max_renewals;
    options.on_lost = on_lost(hold);
    return options;
  }

  std::shared_ptr<HoldRecord> hold_record(std::int64_t nested) const {
    auto hold = std::make_shared<HoldRecord>();
    hold->op = op_;
    hold->nested = nested;
    return hold;
  }

  static void name_hold(HoldRecord& hold, const std::string& value) {
    std::lock_guard<std::mutex> lock(hold.mutex);
    hold.value = value;
  }

  // Records a loss the worker found on `guard` (told, or run out), once per
  // hold; true when the guard's lock is lost.
  bool found_lost(const Guard& guard, HoldRecord& hold) {
    const bool told = guard.stop_token().stop_requested();
    const bool run_out = clock_.now() >= guard.valid_until();
    if (!told && !run_out) return false;
    std::string value;
    {
      std::lock_guard<std::mutex> lock(hold.mutex);
      if (hold.check_recorded) return true;
      hold.check_recorded = true;
      value = hold.value;
    }
    Event lost = event(EventKind::lost, Phase::info, hold.nested);
    lost.value = value;
    lost.detail = "check";
    lost.error = told ? guard.error().message() : "validity deadline passed";
    history_.write(lost);
    return true;
  }

  // The careful client: a use only with this much validity left, room for
  // the operation itself on a loaded machine.
  bool usable(const Guard& guard, HoldRecord& hold) {
    if (found_lost(guard, hold)) return false;
    const Milliseconds margin = std::max(Milliseconds(20), options_.ttl / 10);
    return guard.valid_until() > clock_.now() + margin;
  }

  // Records every renewal the outer guard made since the last one seen.
  void see_renewals(const Guard& outer) {
    int count = 0;
    TimePoint deadline{};
    // A renewal landing between the two reads shows as a changed count.
    for (int attempt = 0; attempt < 3; ++attempt) {
      count = outer.renewals();
      deadline = outer.valid_until();
      if (outer.renewals() == count) break;
    }
    if (count <= renewals_seen_) return;
    renewals_seen_ = count;
    Event renewed = event(EventKind::extend, Phase::ok);
    renewed.op = ++extend_op_;
    renewed.value = value_;
    renewed.ttl_ms = options_.ttl.count();
    renewed.renewals = count;
    renewed.deadline_t = clock_.to_reference_ns(deadline);
    renewed.validity_ms = std::chrono::floor<Milliseconds>(deadline - clock_.now()).count();
    renewed.detail = "renewed by the guard";
    history_.write(renewed);
  }

  Event resource_event(EventKind kind, Phase phase, const Storage& storage, const std::string& key,
                       std::int64_t nested) const {
    Event e = event(kind, phase, nested);
    e.value = value_;
    if (storage.token) e.token = static_cast<std::int64_t>(*storage.token);
    e.key = key;
    return e;
  }

  static Phase outcome_of(const ProtectedResource::Result& result) {
    return result.ok ? Phase::ok : (result.indeterminate ? Phase::info : Phase::fail);
  }

  void hold_once() {
    ++op_;
    nested_ = 0;
    renewals_seen_ = 0;
    Event invoke = event(EventKind::acquire, Phase::invoke);
    invoke.ttl_ms = options_.ttl.count();
    record_target(options_.target, invoke);
    history_.write(invoke);
    const std::shared_ptr<HoldRecord> outer_hold = hold_record(0);
    Guard outer = lock(client_, options_.target, guard_options(outer_hold), commands_.stop_token());
    if (!outer) {
      Event failed = event(EventKind::acquire, Phase::fail);
      failed.error = outer.error().message();
      failed.nodes = node_replies(outer.acquired().nodes);
      history_.write(failed);
      return;
    }
    const Lock acquired = *outer.acquired().lock;
    value_ = acquired.value.str();
    name_hold(*outer_hold, value_);
    record_acquired(outer, acquired);
    storage_ = storage_of(options_.target, acquired);
    say("holding " + value_);
    pause_at("after-acquire");
    const std::vector<long long> counters = read_counters(outer);
    if (counters.size() == storage_.size() && usable(outer, *outer_hold)) {
      append_logs(outer, *outer_hold, under_nested_hold(outer, counters));
    }
    see_renewals(outer);
    pause_at("before-release");
    (void)found_lost(outer, *outer_hold);
    Event release = event(EventKind::release, Phase::invoke);
    release.value = value_;
    history_.write(release);
    const ReleaseResult released = outer.release();
    Event done = event(EventKind::release, released.error ? Phase::info : Phase::ok);
    done.value = value_;
    done.nodes = node_replies(released.nodes);
    if (released.error) done.error = released.error.message();
    history_.write(done);
    say("released");
  }

  void record_acquired(const Guard& outer, const Lock& acquired) {
    Event ok = event(EventKind::acquire, Phase::ok);
    ok.value = value_;
    if (acquired.fence) ok.token = static_cast<std::int64_t>(*acquired.fence);
    ok.ttl_ms = acquired.ttl.count();
    ok.validity_ms = outer.acquired().validity.count();
    const auto& lock = client_.config().lock;
    ok.drift_ms = detail::drift_allowance(acquired.ttl, lock.drift_factor, lock.drift_ms).count();
    ok.start_t = clock_.to_reference_ns(acquired.started);
    ok.deadline_t = clock_.to_reference_ns(acquired.valid_until);
    ok.max_renewals = options_.max_renewals;
    ok.nodes = node_replies(outer.acquired().nodes);
    record_lock(options_.target, acquired, ok);
    history_.write(ok);
  }

  // Under the outer hold: every storage's counter; fewer values than
  // storages when a read did not succeed.
  std::vector<long long> read_counters(const Guard& outer) {
    std::vector<long long> counters;
    for (const Storage& storage : storage_) {
      see_renewals(outer);
      const std::string& key = storage.keys.counter;
      history_.write(resource_event(EventKind::read, Phase::invoke, storage, key, 0));
      const ProtectedResource::Result read = resource_.read(storage);
      Event done = resource_event(EventKind::read, outcome_of(read), storage, key, 0);
      if (read.ok) {
        done.read = read.integer;
      } else {
        done.error = read.error;
      }
      history_.write(done);
      if (!read.ok) break;
      counters.push_back(read.integer);
    }
    return counters;
  }

  // A nested hold of the lock: the work, the check and the writes under
  // it. What each storage's counter was set to (the writes accepted).
  std::vector<std::optional<long long>> under_nested_hold(const Guard& outer,
                                                          const std::vector<long long>& counters) {
    std::vector<std::optional<long long>> written(storage_.size());
    const std::int64_t id = ++nested_;
    const std::shared_ptr<HoldRecord> hold = hold_record(id);
    name_hold(*hold, value_);
    Event invoke = event(EventKind::nest, Phase::invoke, id);
    invoke.value = value_;
    history_.write(invoke);
    // Its acquire options are not used when it joins; were it to acquire,
    // it would not wait.
    GuardOptions options = guard_options(hold);
    options.acquire.wait = Milliseconds(0);
    Guard nested = lock(client_, options_.target, options);
    Event begun = event(EventKind::nest, nested ? Phase::ok : Phase::fail, id);
    begun.attempts = nested.acquired().attempts;
    begun.nodes = node_replies(nested.acquired().nodes);
    if (nested) {
      const Lock joined = nested.lock();
      begun.value = joined.value.str();
      if (joined.fence) begun.token = static_cast<std::int64_t>(*joined.fence);
      begun.validity_ms = nested.acquired().validity.count();
      begun.deadline_t = clock_.to_reference_ns(nested.valid_until());
      name_hold(*hold, begun.value);
    } else {
      begun.error = nested.error().message();
    }
    history_.write(begun);
    if (!nested) return written;
    pause_at("after-nest");
    work(outer, nested);
    see_renewals(outer);
    if (usable(nested, *hold)) {
      // A pause right here (Kleppmann's GC pause) goes unnoticed.
      pause_at("before-write");
      for (std::size_t i = 0; i < storage_.size(); ++i) {
        // A write refused (fenced out) or lost ends the section.
        if (!write_counter(storage_[i], counters[i] + 1, id)) break;
        written[i] = counters[i] + 1;
      }
    }
    (void)found_lost(nested, *hold);
    Event ended = event(EventKind::unnest, Phase::ok, id);
    ended.value = value_;
    history_.write(ended);
    (void)nested.release();  // ends this hold only: the outer one holds the lock
    return written;
  }

  // The critical section's work: its length in slices, seeing the lock's
  // renewals; it stops as soon as the nested hold is told of the loss.
  void work(const Guard& outer, const Guard& nested) {
    const TimePoint end = SteadyClock::now() + options_.critical_section;
    while (!nested.stop_token().stop_requested()) {
      see_renewals(outer);
      const TimePoint now = SteadyClock::now();
      if (now >= end) return;
      const SteadyClock::duration slice = kWorkSlice;
      std::this_thread::sleep_for(std::min<SteadyClock::duration>(end - now, slice));
    }
  }

  bool write_counter(const Storage& storage, long long value, std::int64_t nested) {
    const std::string& counter = storage.keys.counter;
    history_.write(resource_event(EventKind::write, Phase::invoke, storage, counter, nested));
    const ProtectedResource::Result wrote = resource_.write(storage, value);
    Event done = resource_event(EventKind::write, outcome_of(wrote), storage, counter, nested);
    if (wrote.ok || wrote.indeterminate) done.wrote = value;
    if (!wrote.ok) done.error = wrote.error;
    history_.write(done);
    return wrote.ok;
  }

  // Under the outer hold again, with validity left: the log entry of each
  // storage written.
  void append_logs(const Guard& outer, HoldRecord& outer_hold,
                   const std::vector<std::optional<long long>>& written) {
    for (std::size_t i = 0; i < storage_.size(); ++i) {
      if (!written[i]) continue;
      see_renewals(outer);
      if (!usable(outer, outer_hold)) return;
      const Storage& storage = storage_[i];
      const std::string& log = storage.keys.log;
      const std::int64_t token = storage.token ? static_cast<std::int64_t>(*storage.token) : 0;
      const std::string entry = proc_ + ":" + std::to_string(op_) + ":" + std::to_string(token) +
                                ":" + std::to_string(*written[i]);
      Event invoke = resource_event(EventKind::append, Phase::invoke, storage, log, 0);
      invoke.entry = entry;
      history_.write(invoke);
      const ProtectedResource::Result appended = resource_.append(storage, entry);
      Event finished = resource_event(EventKind::append, outcome_of(appended), storage, log, 0);
      finished.entry = entry;
      finished.error = appended.error;
      history_.write(finished);
    }
  }

  WorkerOptions options_;
  std::string proc_;
  RateClock clock_;
  // Declared before the client: the guards' loss signals write to it until
  // the client's loop thread has stopped.
  SharedHistory history_;
  ProtectedResource resource_;
  WorkerCommands commands_;
  BlockingClient client_;
  std::int64_t op_ = 0;
  std::int64_t extend_op_ = 0;
  std::int64_t nested_ = 0;
  int renewals_seen_ = 0;
  std::string value_;
  std::vector<Storage> storage_;
};

}  // namespace

int run_guard_worker(const WorkerOptions& options, QuorumConfig config) {
  GuardWorker worker(options, std::move(config));
  return worker.run();
}

}  // namespace redlock::chaos
