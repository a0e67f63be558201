#include "worker.hpp"

#include <signal.h>
#include <unistd.h>
#include <uv.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "history.hpp"
#include "lock_target.hpp"
#include "protocol/validity.hpp"
#include "redlock/redlock.hpp"
#include "worker_clock.hpp"
#include "worker_guard.hpp"
#include "worker_options.hpp"
#include "worker_pause.hpp"
#include "worker_resource.hpp"

namespace redlock::chaos {
namespace {

ClientOptions client_options(const MonotonicClock& clock) {
  ClientOptions options;
  options.clock = &clock;
  return options;
}

// One client's work, as a state machine on its loop.
class Worker {
 public:
  Worker(uv_loop_t* loop, WorkerOptions options, QuorumConfig config)
      : loop_(loop),
        options_(std::move(options)),
        proc_("c" + std::to_string(options_.index)),
        clock_(options_.clock_rate),
        history_(options_.history_path),
        client_(loop, std::move(config), client_options(clock_)),
        resource_(options_) {
    uv_timer_init(loop_, &timer_);
    uv_timer_init(loop_, &renew_timer_);
    uv_timer_init(loop_, &ready_timer_);
    uv_idle_init(loop_, &idle_);
    uv_check_init(loop_, &check_);
    uv_pipe_init(loop_, &input_, 0);
    timer_.data = renew_timer_.data = ready_timer_.data = this;
    idle_.data = check_.data = input_.data = this;
  }

  bool start() {
    if (!history_.ok()) {
      std::fprintf(stderr, "worker: cannot open %s\n", options_.history_path.c_str());
      return false;
    }
    if (uv_pipe_open(&input_, STDIN_FILENO) != 0) return false;
    uv_read_start(reinterpret_cast<uv_stream_t*>(&input_), allocate, on_input);
    uv_timer_start(&ready_timer_, on_ready_poll, 5, 5);
    return true;
  }

  void close_all() {
    client_.close();
    for (uv_handle_t* handle :
         {reinterpret_cast<uv_handle_t*>(&timer_), reinterpret_cast<uv_handle_t*>(&renew_timer_),
          reinterpret_cast<uv_handle_t*>(&ready_timer_), reinterpret_cast<uv_handle_t*>(&idle_),
          reinterpret_cast<uv_handle_t*>(&check_), reinterpret_cast<uv_handle_t*>(&input_)}) {
      if (!uv_is_closing(handle)) uv_close(handle, nullptr);
    }
  }

 private:
  enum class Stage { waiting, acquiring, holding, releasing, thinking, stopped };

  static void allocate(uv_handle_t*, std::size_t suggested, uv_buf_t* buf) {
    buf->base = static_cast<char*>(std::malloc(suggested));
    buf->len = buf->base == nullptr ? 0 : suggested;
  }

  static void on_input(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
    auto* self = static_cast<Worker*>(stream->data);
    if (nread > 0) self->input_buffer_.append(buf->base, static_cast<std::size_t>(nread));
    std::free(buf->base);
    if (nread < 0) {
      self->stop_requested_ = true;  // the harness went away
      uv_read_stop(stream);
    }
    std::size_t newline = 0;
    while ((newline = self->input_buffer_.find('\n')) != std::string::npos) {
      const std::string line = self->input_buffer_.substr(0, newline);
      self->input_buffer_.erase(0, newline + 1);
      self->command(line);
    }
    if (self->stop_requested_ && self->stage_ == Stage::waiting) self->finish();
  }

  void command(const std::string& line) {
    if (line == "go") {
      go();
    } else if (line == "stop") {
      stop_requested_ = true;
      armed_pause_.clear();  // a pause armed but not reached stays unfired
      if (stage_ == Stage::thinking || stage_ == Stage::waiting) finish();
    } else if (line.rfind("pause ", 0) == 0) {
      armed_pause_ = line.substr(6);
    }
  }

  // Reports "ready" once every node is connected (or after 3 s regardless).
  static void on_ready_poll(uv_timer_t* timer) {
    auto* self = static_cast<Worker*>(timer->data);
    bool all = true;
    for (const NodeHealth& node : self->client_.node_health()) all = all && node.connected;
    if (all || ++self->ready_polls_ > 600) {
      uv_timer_stop(timer);
      self->say("ready");
    }
  }

  void go() {
    if (stage_ != Stage::waiting) return;
    stop_at_ = SteadyClock::now() + options_.duration;
    stage_ = Stage::thinking;
    after(options_.start_delay, [](Worker& self) { self.acquire(); });
  }

  // Runs `next` on the loop after `delay` (the one work timer).
  void after(Milliseconds delay, void (*next)(Worker&)) {
    next_ = next;
    uv_timer_start(
        &timer_,
        [](uv_timer_t* timer) {
          auto* self = static_cast<Worker*>(timer->data);
          self->next_(*self);
        },
        static_cast<std::uint64_t>(std::max<std::int64_t>(0, delay.count())), 0);
  }

  void say(const std::string& line) {
    const std::string text = line + "\n";
    // A short write to a pipe of this size cannot be partial.
    [[maybe_unused]] const ssize_t written = ::write(STDOUT_FILENO, text.data(), text.size());
  }

  Event event(EventKind kind, Phase phase) const {
    Event e;
    e.t = reference_now_ns();
    e.proc = proc_;
    e.kind = kind;
    e.phase = phase;
    e.op = op_;
    return e;
  }

  void acquire() {
    if (stop_requested_ || SteadyClock::now() >= stop_at_) return finish();
    stage_ = Stage::acquiring;
    ++op_;
    Event invoke = event(EventKind::acquire, Phase::invoke);
    invoke.ttl_ms = options_.ttl.count();
    record_target(options_.target, invoke);
    history_.write(invoke);
    AcquireOptions acquire_options;
    acquire_options.ttl = options_.ttl;
    acquire_options.retry_delay = options_.retry_delay;
    acquire_options.wait = options_.wait.count() > 0 ? options_.wait : options_.ttl;
    acquire_options.fenced = options_.fenced;
    acquire_pending_ = true;
    (void)chaos::acquire(client_, options_.target, acquire_options,
                         [this](AcquireResult result) { on_acquired(std::move(result)); });
    if (armed_pause_ == "in-flight") {
      // Let this loop turn write the requests, then stop before the poll
      // of the next turn can read the replies (idle keeps that poll from
      // blocking; the check callback runs right after it).
      uv_idle_start(&idle_, [](uv_idle_t*) {});
      uv_check_start(&check_, on_check_in_flight);
    }
  }

  static void on_check_in_flight(uv_check_t* check) {
    auto* self = static_cast<Worker*>(check->data);
    uv_check_stop(&self->check_);
    uv_idle_stop(&self->idle_);
    // Missed: the replies were already read; stay armed for the next one.
    if (self->acquire_pending_) self->pause_here("in-flight");
  }

  void pause_here(const std::string& point) {
    armed_pause_.clear();
    pause_self(history_, event(EventKind::nemesis, Phase::invoke),
               event(EventKind::nemesis, Phase::ok), proc_, point,
               [&] { say("pausing " + point); });
  }

  void on_acquired(AcquireResult result) {
    acquire_pending_ = false;
    if (!result.ok()) {
      Event failed = event(EventKind::acquire, Phase::fail);
      failed.error = result.error.message();
      failed.nodes = node_replies(result.nodes);
      history_.write(failed);
      stage_ = Stage::thinking;
      return after(options_.think, [](Worker& self) { self.acquire(); });
    }
    lock_ = *result.lock;
    renewals_ = 0;
    Event ok = event(EventKind::acquire, Phase::ok);
    ok.value = lock_->value.str();
    if (lock_->fence) ok.token = static_cast<std::int64_t>(*lock_->fence);
    ok.ttl_ms = lock_->ttl.count();
    ok.validity_ms = result.validity.count();
    ok.drift_ms = drift_ms();
    ok.start_t = clock_.to_reference_ns(lock_->started);
    ok.deadline_t = clock_.to_reference_ns(lock_->valid_until);
    ok.max_renewals = options_.max_renewals;
    ok.nodes = node_replies(result.nodes);
    if (result.ticket) {
      ok.ticket = static_cast<std::int64_t>(result.ticket->number);
      ok.ticket_drawn_t = clock_.to_reference_ns(result.ticket->drawn_at);
      ok.ticket_recorded_t = clock_.to_reference_ns(result.ticket->recorded_at);
    }
    ok.places = places_of(result);
    record_lock(options_.target, *lock_, ok);
    history_.write(ok);
    storage_ = storage_of(options_.target, *lock_);
    stage_ = Stage::holding;
    say("holding " + lock_->value.str());
    if (armed_pause_ == "after-acquire") pause_here("after-acquire");
    critical_section();
  }

  // The members a set waited for in their fair lines, on the reference
  // clock (C17); a set has at most kMaxPlaces members, so none is dropped.
  std::vector<Place> places_of(const AcquireResult& result) const {
    std::vector<Place> places;
    for (const AcquireResult::Place& place : result.places) {
      if (places.size() == kMaxPlaces) break;
      places.push_back(Place{place.resource.str(), static_cast<std::int64_t>(place.ticket.number),
                             clock_.to_reference_ns(place.ticket.drawn_at),
                             clock_.to_reference_ns(place.ticket.recorded_at)});
    }
    return places;
  }

  std::int64_t drift_ms() const {
    const auto& lock = client_.config().lock;
    return detail::drift_allowance(lock_->ttl, lock.drift_factor, lock.drift_ms).count();
  }

  static std::optional<std::int64_t> token_of(const Storage& storage) {
    if (!storage.token) return std::nullopt;
    return static_cast<std::int64_t>(*storage.token);
  }

  Event resource_event(EventKind kind, Phase phase, const Storage& storage,
                       const std::string& key) const {
    Event e = event(kind, phase);
    e.value = lock_ ? lock_->value.str() : std::string();
    e.token = token_of(storage);
    e.key = key;
    return e;
  }

  static Phase outcome_of(const ProtectedResource::Result& result) {
    return result.ok ? Phase::ok : (result.indeterminate ? Phase::info : Phase::fail);
  }

  // Reads the counter of every storage the holding uses (one, but one per
  // resource of a set), each fenced by its own token.
  void critical_section() {
    read_values_.clear();
    for (const Storage& storage : storage_) {
      const std::string& key = storage.keys.counter;
      history_.write(resource_event(EventKind::read, Phase::invoke, storage, key));
      const ProtectedResource::Result read = resource_.read(storage);
      Event done = resource_event(EventKind::read, outcome_of(read), storage, key);
      if (read.ok) {
        done.read = read.integer;
      } else {
        done.error = read.error;
      }
      history_.write(done);
      if (!read.ok) return release();
      read_values_.push_back(read.integer);
    }
    if (options_.renew) schedule_renewal();
    after(options_.critical_section, [](Worker& self) { self.write(); });
  }

  void schedule_renewal() {
    const auto period = std::max<std::int64_t>(1, options_.ttl.count() / 3);
    uv_timer_start(
        &renew_timer_, [](uv_timer_t* timer) { static_cast<Worker*>(timer->data)->renew(); },
        static_cast<std::uint64_t>(period), 0);
  }

  void renew() {
    if (!lock_ || stage_ != Stage::holding) return;
    if (options_.max_renewals > 0 && renewals_ >= options_.max_renewals) return;
    ++renewals_;
    // Each renewal is its own operation: the checker pairs invoke and
    // completion by (process, kind, op).
    Event invoke = event(EventKind::extend, Phase::invoke);
    invoke.op = ++extend_op_;
    invoke.value = lock_->value.str();
    invoke.ttl_ms = lock_->ttl.count();
    history_.write(invoke);
    client_.extend(*lock_, ExtendOptions{},
                   [this, op = invoke.op, value = invoke.value](ExtendResult result) {
                     Event done = event(EventKind::extend, result.ok() ? Phase::ok : Phase::fail);
                     done.op = op;
                     done.value = value;
                     done.nodes = node_replies(result.nodes);
                     const bool current = lock_ && lock_->value.str() == value;
                     if (result.ok() && result.lock) {
                       done.validity_ms = result.validity.count();
                       done.deadline_t = clock_.to_reference_ns(result.lock->valid_until);
                       if (current) lock_ = *result.lock;
                     } else {
                       done.error = result.error.message();
                     }
                     history_.write(done);
                     if (current && result.ok() && stage_ == Stage::holding) schedule_renewal();
                   });
  }

  // The careful client uses the lock only with this much validity left,
  // room for the operation itself on a loaded machine.
  [[nodiscard]] bool validity_left_for_use() const {
    const Milliseconds margin = std::max(Milliseconds(20), lock_->ttl / 10);
    return lock_->valid_at(clock_.now() + margin);
  }

  void write() {
    // The careful client: no write without validity left...
    if (!validity_left_for_use()) return release();
    // ...but a pause right here (Kleppmann's GC pause) goes unnoticed.
    if (armed_pause_ == "before-write") pause_here("before-write");
    // A reader reads, and writes nothing.
    if (options_.target.shared) return release();
    for (std::size_t i = 0; i < storage_.size(); ++i) {
      // A write refused (fenced out) or lost ends the section: the holding
      // is stale, or the store is in doubt.
      if (!write_one(storage_[i], read_values_[i] + 1)) break;
    }
    release();
  }

  // Writes one storage's counter and, with validity left, appends to its
  // log; false when the write did not succeed.
  bool write_one(const Storage& storage, long long value) {
    const std::string& counter = storage.keys.counter;
    history_.write(resource_event(EventKind::write, Phase::invoke, storage, counter));
    const ProtectedResource::Result wrote = resource_.write(storage, value);
    Event done = resource_event(EventKind::write, outcome_of(wrote), storage, counter);
    if (wrote.ok || wrote.indeterminate) done.wrote = value;
    if (!wrote.ok) done.error = wrote.error;
    history_.write(done);
    if (!wrote.ok) return false;
    if (!validity_left_for_use()) return true;
    const std::string& log = storage.keys.log;
    const std::string entry = proc_ + ":" + std::to_string(op_) + ":" +
                              std::to_string(token_of(storage).value_or(0)) + ":" +
                              std::to_string(value);
    Event invoke = resource_event(EventKind::append, Phase::invoke, storage, log);
    invoke.entry = entry;
    history_.write(invoke);
    const ProtectedResource::Result appended = resource_.append(storage, entry);
    Event finished = resource_event(EventKind::append, outcome_of(appended), storage, log);
    finished.entry = entry;
    finished.error = appended.error;
    history_.write(finished);
    return true;
  }

  void release() {
    uv_timer_stop(&renew_timer_);
    if (armed_pause_ == "before-release") pause_here("before-release");
    stage_ = Stage::releasing;
    Event invoke = event(EventKind::release, Phase::invoke);
    invoke.value = lock_->value.str();
    history_.write(invoke);
    client_.release(*lock_, [this](ReleaseResult result) {
      Event done = event(EventKind::release, result.error ? Phase::info : Phase::ok);
      done.value = lock_->value.str();
      done.nodes = node_replies(result.nodes);
      if (result.error) done.error = result.error.message();
      history_.write(done);
      // Stopped right after its release: a fair release's pre-claim of the
      // next place is neither adopted nor withdrawn while it is.
      if (armed_pause_ == "after-release") pause_here("after-release");
      lock_.reset();
      say("released");
      stage_ = Stage::thinking;
      after(options_.think, [](Worker& self) { self.acquire(); });
    });
  }

  void finish() {
    if (stage_ == Stage::stopped) return;
    stage_ = Stage::stopped;
    say("done");
    close_all();
  }

  uv_loop_t* loop_;
  WorkerOptions options_;
  std::string proc_;
  RateClock clock_;
  HistoryWriter history_;
  AsyncClient client_;
  ProtectedResource resource_;
  uv_timer_t timer_{};
  uv_timer_t renew_timer_{};
  uv_timer_t ready_timer_{};
  uv_idle_t idle_{};
  uv_check_t check_{};
  uv_pipe_t input_{};
  std::string input_buffer_;
  void (*next_)(Worker&) = nullptr;
  Stage stage_ = Stage::waiting;
  bool stop_requested_ = false;
  bool acquire_pending_ = false;
  int ready_polls_ = 0;
  std::string armed_pause_;
  std::int64_t op_ = 0;
  std::int64_t extend_op_ = 0;
  std::optional<Lock> lock_;
  // The storage the holding uses and the counters read from it.
  std::vector<Storage> storage_;
  std::vector<long long> read_values_;
  int renewals_ = 0;
  TimePoint stop_at_{};
};

}  // namespace

int run_worker(int argc, char** argv) {
  const std::optional<WorkerOptions> options = parse_worker_options(argc, argv);
  if (!options) return 2;
  ConfigResult config = load_config(options->config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "worker: %s\n", config.error.to_string().c_str());
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  if (options->reentrant) return run_guard_worker(*options, std::move(*config.config));
  uv_loop_t loop;
  uv_loop_init(&loop);
  int status = 0;
  {
    Worker worker(&loop, *options, std::move(*config.config));
    if (!worker.start()) {
      worker.close_all();
      status = 1;
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    worker.close_all();  // idempotent; the handles must be closed before they die
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  if (uv_loop_close(&loop) != 0) status = status == 0 ? 3 : status;
  return status;
}

}  // namespace redlock::chaos
