// redlock_quorum._native: the library's BlockingClient and Guard for
// Python (docs/python.md). The Python package (redlock_quorum/__init__.py)
// builds the public classes on these.
//
// Threads and the GIL: every call that waits for the nodes releases the
// GIL. The library's loop thread takes the GIL only to deliver a loss of a
// `with` block's guard (on_lost sets the Python-side threading.Event), and
// never while the interpreter is finalizing. What `async with` waits for
// comes back through a CompletionQueue (completion_queue.hpp) without the
// GIL: the asyncio loop takes the results on its own thread.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "completion_queue.hpp"
#include "redlock/redlock.hpp"

namespace py = pybind11;

namespace redlock::python {
namespace {

// time.monotonic()'s reading of the library's deadline: the library counts
// on CLOCK_BOOTTIME, Python on CLOCK_MONOTONIC; the time left is the same.
double monotonic_seconds(TimePoint deadline) {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  const double left = std::chrono::duration<double>(deadline - SteadyClock::now()).count();
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9 + left;
}

py::dict node_outcome(const NodeOutcome& node) {
  py::dict out;
  out["node"] = node.node;
  out["name"] = node.name;
  out["status"] = std::string(to_string(node.status));
  out["latency_us"] = node.latency.count();
  out["detail"] = node.detail;
  return out;
}

py::list node_outcomes(const std::vector<NodeOutcome>& nodes) {
  py::list out;
  for (const NodeOutcome& node : nodes) out.append(node_outcome(node));
  return out;
}

// A failure as the package raises it: (kind, message, nodes), where kind is
// "not_acquired", "lost" or "error".
// A failure for redlock_quorum._raise: (kind, message, node outcomes). An
// invalid argument (a ttl of 0, a negative wait) is "invalid" whatever the
// call (Python raises ValueError): it is not a lock that was busy.
py::tuple failure(std::string_view kind, const std::error_code& error,
                  const std::vector<NodeOutcome>& nodes) {
  if (error == errc::invalid_argument) kind = "invalid";
  return py::make_tuple(std::string(kind), error.message(), node_outcomes(nodes));
}

py::dict lock_record(const Lock& lock) {
  py::dict out;
  out["resource"] = lock.resource.str();
  out["value"] = lock.value.str();
  out["ttl_ms"] = lock.ttl.count();
  out["fence"] = lock.fence ? py::cast(*lock.fence) : py::none();
  out["valid_until"] = monotonic_seconds(lock.valid_until);
  // A lock won in the fair queue (asked for, or turned fair while it
  // waited) says so: its release is the queue's, which serves the next
  // waiter; released as a mutex, it would leave its place first in line.
  out["queue_id"] = lock.queue_id;
  out["kind"] = std::string(to_string(lock.kind));
  return out;
}

AcquireOptions acquire_options(std::optional<long> ttl_ms, std::optional<long> wait_ms,
                               std::optional<bool> fenced) {
  AcquireOptions options;
  if (ttl_ms) options.ttl = Milliseconds(*ttl_ms);
  if (wait_ms) options.wait = Milliseconds(*wait_ms);
  options.fenced = fenced;
  return options;
}

// A held lock: the library's Guard, and the Python event its loss sets.
// Runs `drop` without the GIL when this thread holds it: what blocks on
// the library's loop (a release, a client's shutdown) must not hold the GIL
// while the loop may be waiting for it to deliver a callback.
template <typename Drop>
void without_gil(Drop drop) {
  if (Py_IsInitialized() != 0 && _Py_IsFinalizing() == 0 && PyGILState_Check() != 0) {
    py::gil_scoped_release unlocked;
    drop();
  } else {
    drop();
  }
}

// A Python callable kept alive by library callbacks: its last reference
// goes under the GIL, whichever thread drops it (none at exit: leaked).
std::shared_ptr<py::object> shared_callable(py::object callable) {
  return std::shared_ptr<py::object>(new py::object(std::move(callable)), [](py::object* object) {
    if (Py_IsInitialized() == 0 || _Py_IsFinalizing() != 0) return;
    py::gil_scoped_acquire locked;
    delete object;
  });
}

// How long a blocking wait polls for its result before it blocks (the
// client's spin_us), and how long results have been taking: a moving
// average over about the last eight, in microseconds. Polling is worth its
// CPU only while results come back within the budget (a local quorum); a
// client whose results take longer (a far quorum, waits in line) blocks at
// once. Shared by a client and its guards; read and written by any thread
// (a stale average only moves the choice by one wait).
struct Polling {
  std::atomic<std::int64_t> budget_us{0};
  std::atomic<std::int64_t> typical_us{0};
};

// A result the library's loop delivers to a waiting thread: the promise,
// and a flag the waiter may poll without a system call.
template <typename T>
struct Arrival {
  std::promise<T> promise;
  std::atomic<bool> ready{false};
  void deliver(T value) {
    promise.set_value(std::move(value));
    ready.store(true, std::memory_order_release);
  }
};

// Called without the GIL: polls `arrival` until it is ready or the budget
// from `started` is spent (nothing when the budget is 0 or results have
// been taking longer than it).
template <typename T>
void poll_for(const Arrival<T>& arrival, const Polling* polling,
              std::chrono::steady_clock::time_point started) {
  if (polling == nullptr) return;
  const std::int64_t budget = polling->budget_us.load(std::memory_order_relaxed);
  if (budget <= 0 || polling->typical_us.load(std::memory_order_relaxed) > budget) return;
  const auto deadline = started + std::chrono::microseconds(budget);
  while (!arrival.ready.load(std::memory_order_acquire) &&
         std::chrono::steady_clock::now() < deadline) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

// Adds how long a result took to the moving average.
void note_arrival(Polling* polling, std::chrono::steady_clock::time_point started) {
  if (polling == nullptr) return;
  const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now() - started)
                        .count();
  const std::int64_t typical = polling->typical_us.load(std::memory_order_relaxed);
  polling->typical_us.store(typical + (took - typical) / 8, std::memory_order_relaxed);
}

// Starts, without the GIL, what `start(deliver)` starts on the library's
// loop, and waits for the result it delivers: polling first, then
// blocking. For what the node timeouts bound (a release), not for a wait
// that Ctrl-C must be able to end (wait_interruptibly).
template <typename Result, typename Start>
Result wait_polled(Start start, Polling* polling) {
  auto arrival = std::make_shared<Arrival<Result>>();
  std::future<Result> result = arrival->promise.get_future();
  const auto started = std::chrono::steady_clock::now();
  py::gil_scoped_release unlocked;
  start([arrival](Result value) { arrival->deliver(std::move(value)); });
  poll_for(*arrival, polling, started);
  Result value = result.get();
  note_arrival(polling, started);
  return value;
}

class PyGuard {
 public:
  PyGuard() = default;
  explicit PyGuard(Guard guard, std::shared_ptr<Polling> polling = nullptr)
      : guard_(std::move(guard)), polling_(std::move(polling)) {}
  PyGuard(PyGuard&&) noexcept = default;
  PyGuard& operator=(PyGuard&&) = delete;
  PyGuard(const PyGuard&) = delete;
  PyGuard& operator=(const PyGuard&) = delete;
  // A guard garbage-collected while held releases its lock, off the GIL.
  ~PyGuard() {
    if (guard_.owns_lock()) without_gil([this] { Guard dropped = std::move(guard_); });
  }

  [[nodiscard]] bool held() const noexcept { return guard_.owns_lock(); }
  [[nodiscard]] bool valid() const noexcept { return guard_.valid(); }
  [[nodiscard]] double valid_until() const { return monotonic_seconds(guard_.valid_until()); }
  [[nodiscard]] std::string value() const { return guard_.lock().value.str(); }
  [[nodiscard]] std::string resource() const { return guard_.lock().resource.str(); }
  [[nodiscard]] py::object fence() const {
    const std::optional<std::uint64_t> token = guard_.fence();
    return token ? py::cast(*token) : py::none();
  }
  [[nodiscard]] int renewals() const noexcept { return guard_.renewals(); }
  // A semaphore permit's number, or None.
  [[nodiscard]] py::object permit() const {
    const std::optional<std::uint32_t> permit = guard_.lock().permit;
    return permit ? py::cast(*permit) : py::none();
  }
  // Every resource of a lock over several, in the order asked (one
  // resource: a list of it).
  [[nodiscard]] std::vector<std::string> resources() const {
    const Lock lock = guard_.lock();
    std::vector<std::string> names;
    if (lock.resources.empty()) names.push_back(lock.resource.str());
    for (const Resource& resource : lock.resources) names.push_back(resource.str());
    return names;
  }
  [[nodiscard]] std::string error() const {
    const std::error_code error = guard_.error();
    return error ? error.message() : std::string();
  }
  // Releases without waiting: completion `id` (kind released) reaches
  // `queue` when the nodes answered (at once when nothing is held).
  void release_async(const std::shared_ptr<CompletionQueue>& queue, std::uint64_t id) {
    guard_.release_async([queue, id](ReleaseResult result) {
      Completion done;
      done.id = id;
      done.kind = Completion::Kind::released;
      done.released = result.released;
      queue->push(std::move(done));
    });
  }

  // Releases (waiting for the nodes without the GIL, polling first as an
  // acquire's wait does); the released count.
  std::size_t release() {
    if (!guard_.owns_lock()) return 0;
    return wait_polled<ReleaseResult>(
               [this](auto deliver) { guard_.release_async(std::move(deliver)); }, polling_.get())
        .released;
  }

 private:
  Guard guard_;
  std::shared_ptr<Polling> polling_;
};

// How often a blocking wait lets the interpreter handle signals.
constexpr std::chrono::milliseconds kSignalCheckInterval{50};

// Waits for what an acquire started without waiting will deliver, without
// the GIL, in slices between which the interpreter's signal handlers run.
// When one raises (Ctrl-C), the acquire is cancelled, its result (a grant
// that raced the cancel) goes to `undo` without the GIL, and the handler's
// exception propagates: nothing stays on the nodes.
// `start(deliver)` starts the acquire and returns its cancel function; the
// first slice polls first (poll_for).
template <typename Result, typename Start, typename Undo>
Result wait_interruptibly(Start start, Undo undo, Polling* polling) {
  auto arrival = std::make_shared<Arrival<Result>>();
  std::future<Result> result = arrival->promise.get_future();
  const auto started = std::chrono::steady_clock::now();
  const std::function<void()> cancel =
      start([arrival](Result value) { arrival->deliver(std::move(value)); });
  for (bool first = true;; first = false) {
    std::future_status status = std::future_status::timeout;
    {
      py::gil_scoped_release unlocked;
      if (first) poll_for(*arrival, polling, started);
      status = result.wait_for(kSignalCheckInterval);
    }
    if (status == std::future_status::ready) {
      note_arrival(polling, started);
      return result.get();
    }
    if (PyErr_CheckSignals() != 0) {
      cancel();
      {
        py::gil_scoped_release unlocked;
        undo(result.get());
      }
      throw py::error_already_set();
    }
  }
}

class PyClient {
 public:
  PyClient(PyClient&&) noexcept = default;
  PyClient& operator=(PyClient&&) = delete;
  PyClient(const PyClient&) = delete;
  PyClient& operator=(const PyClient&) = delete;
  // A client garbage-collected without close() shuts down off the GIL.
  ~PyClient() {
    if (client_) without_gil([this] { client_.reset(); });
  }
  explicit PyClient(QuorumConfig config)
      : client_(std::make_unique<BlockingClient>(std::move(config))) {}

  // (guard, None) or (None, failure tuple). `on_lost` runs on the loop
  // thread once, when the lock is lost; with `at_risk_share`, `on_at_risk`
  // runs there with True when an at-risk episode begins and False when a
  // renewal ends it.
  py::tuple lock(const py::object& target, std::optional<std::uint32_t> permits,
                 std::optional<long> ttl_ms, std::optional<long> wait_ms,
                 std::optional<bool> fenced, py::object on_lost,
                 std::optional<double> at_risk_share, py::object on_at_risk) {
    GuardOptions options = guard_options(ttl_ms, wait_ms, fenced, std::move(on_lost));
    options.at_risk_share = at_risk_share;
    if (at_risk_share && !on_at_risk.is_none()) {
      const std::shared_ptr<py::object> callback = shared_callable(std::move(on_at_risk));
      options.on_at_risk = [callback](bool at_risk) {
        if (Py_IsInitialized() == 0 || _Py_IsFinalizing() != 0) return;
        py::gil_scoped_acquire locked;
        try {
          (*callback)(at_risk);
        } catch (py::error_already_set& raised) {
          raised.discard_as_unraisable("redlock_quorum: the at-risk callback");
        }
      };
    }
    // Started without waiting, then waited for in slices: between them the
    // interpreter's signal handlers run, so Ctrl-C cancels the acquire.
    // A grant that raced a cancel is released by its guard's destructor.
    Guard guard = wait_interruptibly<Guard>(
        [&](auto deliver) { return start(target, permits, options, std::move(deliver)); },
        [](Guard late) { (void)late; }, polling_.get());
    if (!guard.owns_lock()) {
      const AcquireResult& result = guard.acquired();
      return py::make_tuple(py::none(), failure("not_acquired", guard.error(), result.nodes));
    }
    return py::make_tuple(PyGuard(std::move(guard), polling_), py::none());
  }

  // Starts the acquire and returns at once: completion `done_id` (kind
  // acquired, the guard empty when it failed or was cancelled) reaches
  // `queue` when it is decided, completion `lost_id` (kind lost) if the
  // lock is lost later, and with `at_risk_share` completion `risk_id` (kind
  // at_risk) at each at-risk episode's beginning and end. The returned callable cancels a wait in
  // progress.
  py::cpp_function lock_async(const py::object& target, std::optional<std::uint32_t> permits,
                              std::optional<long> ttl_ms, std::optional<long> wait_ms,
                              std::optional<bool> fenced,
                              const std::shared_ptr<CompletionQueue>& queue, std::uint64_t done_id,
                              std::uint64_t lost_id, std::optional<double> at_risk_share,
                              std::uint64_t risk_id) {
    GuardOptions options;
    options.acquire = acquire_options(ttl_ms, wait_ms, fenced);
    options.at_risk_share = at_risk_share;
    if (at_risk_share) {
      options.on_at_risk = [queue, risk_id](bool at_risk) {
        Completion risk;
        risk.id = risk_id;
        risk.kind = Completion::Kind::at_risk;
        risk.at_risk = at_risk;
        queue->push(std::move(risk));
      };
    }
    options.on_lost = [queue, lost_id](std::error_code error) {
      Completion lost;
      lost.id = lost_id;
      lost.kind = Completion::Kind::lost;
      lost.error = error;
      queue->push(std::move(lost));
    };
    BlockingClient::CancelLock cancel =
        start(target, permits, options, [queue, done_id](Guard guard) {
          Completion done;
          done.id = done_id;
          done.guard = std::move(guard);
          queue->push(std::move(done));
        });
    return py::cpp_function([cancel = std::move(cancel)] { cancel(); });
  }

 private:
  // Starts the acquire of what `target` names: a resource (str), several at
  // once (a list of str), or with `permits` one permit of the semaphore
  // `target`.
  BlockingClient::CancelLock start(const py::object& target, std::optional<std::uint32_t> permits,
                                   const GuardOptions& options, std::function<void(Guard)> done) {
    if (permits) {
      return require()->lock_async(Semaphore(target.cast<std::string>(), *permits), options,
                                   std::move(done));
    }
    if (py::isinstance<py::str>(target)) {
      return require()->lock_async(Resource(target.cast<std::string>()), options, std::move(done));
    }
    std::vector<Resource> resources;
    for (const py::handle item : target) resources.emplace_back(item.cast<std::string>());
    return require()->lock_async(resources, options, std::move(done));
  }

  static GuardOptions guard_options(std::optional<long> ttl_ms, std::optional<long> wait_ms,
                                    std::optional<bool> fenced, py::object on_lost) {
    GuardOptions options;
    options.acquire = acquire_options(ttl_ms, wait_ms, fenced);
    if (on_lost.is_none()) return options;
    const std::shared_ptr<py::object> callback = shared_callable(std::move(on_lost));
    options.on_lost = [callback](std::error_code error) {
      if (Py_IsInitialized() == 0 || _Py_IsFinalizing() != 0) return;
      py::gil_scoped_acquire locked;
      try {
        (*callback)(error.message());
      } catch (py::error_already_set& raised) {
        raised.discard_as_unraisable("redlock_quorum: the lost callback");
      }
    };
    return options;
  }

 public:
  // (lock record, None) or (None, failure tuple).
  py::tuple acquire(const std::string& resource, std::optional<long> ttl_ms,
                    std::optional<long> wait_ms, std::optional<bool> fenced) {
    // Started without waiting and waited for in slices, as lock() does.
    BlockingClient* client = require();
    const AcquireResult result = wait_interruptibly<AcquireResult>(
        [&](auto deliver) {
          return client->acquire_async(Resource(resource), acquire_options(ttl_ms, wait_ms, fenced),
                                       std::move(deliver));
        },
        [client](AcquireResult late) {
          if (late.ok()) (void)client->release(*late.lock);
        },
        polling_.get());
    if (!result.ok())
      return py::make_tuple(py::none(), failure("not_acquired", result.error, result.nodes));
    return py::make_tuple(lock_record(*result.lock), py::none());
  }

  py::tuple extend(const py::dict& record, std::optional<long> ttl_ms) {
    const Lock lock = lock_of(record);
    ExtendOptions options;
    if (ttl_ms) options.ttl = Milliseconds(*ttl_ms);
    ExtendResult result;
    {
      py::gil_scoped_release unlocked;
      result = require()->extend(lock, options);
    }
    if (!result.ok())
      return py::make_tuple(py::none(), failure("error", result.error, result.nodes));
    return py::make_tuple(lock_record(*result.lock), py::none());
  }

  // How long a blocking wait polls before it blocks (Polling), 0: never.
  void set_spin_us(std::int64_t budget_us) {
    polling_->budget_us.store(budget_us, std::memory_order_relaxed);
  }

  // Releases, waiting for the nodes without the GIL (polling first, as
  // acquire does).
  std::size_t release(const py::dict& record) {
    const Lock lock = lock_of(record);
    BlockingClient* client = require();
    return wait_polled<ReleaseResult>(
               [&](auto deliver) { client->release_async(lock, std::move(deliver)); },
               polling_.get())
        .released;
  }

  // Who holds `resource` by majority read: a dict with "holder" (None or
  // a dict of value, validity_ms, fence), "fence", "readers" and "nodes";
  // (None, failure) without a majority.
  // What inspect() reports of `target`: a resource, or with `permits` the
  // semaphore `target` of that many permits.
  py::tuple inspect(const std::string& target, std::optional<std::uint32_t> permits) {
    Inspection result;
    {
      py::gil_scoped_release unlocked;
      result = permits ? require()->inspect(Semaphore(target, *permits))
                       : require()->inspect(Resource(target));
    }
    if (!result.ok()) {
      py::list nodes;
      for (const NodeInspection& node : result.nodes) {
        py::dict entry;
        entry["node"] = node.node;
        entry["name"] = node.name;
        entry["status"] = node.answered ? "answered" : "unanswered";
        entry["latency_us"] = node.latency.count();
        entry["detail"] = node.detail;
        nodes.append(entry);
      }
      return py::make_tuple(py::none(),
                            py::make_tuple(std::string("error"), result.error.message(), nodes));
    }
    const auto holder_dict = [](const HolderView& holder) {
      py::dict out;
      out["value"] = holder.value;
      out["validity_ms"] = holder.validity.count();
      out["fence"] = holder.fence;
      out["permit"] = holder.permit ? py::cast(*holder.permit) : py::none();
      return out;
    };
    const auto key_dict = [](py::dict& entry, const KeyView& key) {
      entry["pttl_ms"] = key.pttl_ms;
      entry["value"] = key.value ? py::cast(*key.value) : py::none();
    };
    py::dict out;
    if (permits) {
      out["semaphore"] = target;
      out["permits"] = *permits;
      py::list holders;
      for (const HolderView& holder : result.holders) holders.append(holder_dict(holder));
      out["holders"] = holders;
    } else {
      out["resource"] = target;
      out["holder"] = result.holder ? py::object(holder_dict(*result.holder)) : py::none();
      py::list readers;
      for (const HolderView& reader : result.readers) readers.append(holder_dict(reader));
      out["readers"] = readers;
    }
    out["fence"] = result.fence;
    py::list nodes;
    for (const NodeInspection& node : result.nodes) {
      py::dict entry;
      entry["name"] = node.name;
      entry["answered"] = node.answered;
      entry["detail"] = node.detail;
      if (permits) {
        // Each permit key the node reports, in permit order.
        entry["permits_recorded"] = node.permits_recorded;
        py::list keys;
        for (const KeyView& key : node.permits) {
          py::dict permit;
          key_dict(permit, key);
          keys.append(permit);
        }
        entry["permits"] = keys;
      } else {
        key_dict(entry, node.key);
      }
      nodes.append(entry);
    }
    out["nodes"] = nodes;
    return py::make_tuple(out, py::none());
  }

  py::list node_health() {
    std::vector<NodeHealth> health;
    {
      py::gil_scoped_release unlocked;
      health = require()->node_health();
    }
    py::list out;
    for (const NodeHealth& node : health) {
      py::dict entry;
      entry["name"] = node.name;
      entry["connected"] = node.connected;
      entry["last_error"] = node.last_error;
      entry["warnings"] = node.warnings;
      out.append(entry);
    }
    return out;
  }

  void close() {
    std::unique_ptr<BlockingClient> closing = std::move(client_);
    py::gil_scoped_release unlocked;
    closing.reset();
  }

 private:
  BlockingClient* require() {
    if (!client_) throw std::runtime_error("the client is closed");
    return client_.get();
  }

  // The lock a record from acquire()/extend() describes.
  Lock lock_of(const py::dict& record) const {
    Lock lock{Resource(record["resource"].cast<std::string>()),
              LockValue(record["value"].cast<std::string>()),
              Milliseconds(record["ttl_ms"].cast<long>()),
              {},
              {},
              {}};
    const double left =
        record["valid_until"].cast<double>() - monotonic_seconds(SteadyClock::now());
    lock.valid_until = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                                std::chrono::duration<double>(left));
    lock.started = lock.valid_until - lock.ttl;
    if (!record["fence"].is_none()) lock.fence = record["fence"].cast<std::uint64_t>();
    if (record.contains("queue_id")) lock.queue_id = record["queue_id"].cast<std::string>();
    // The kind the record says (the binding's records are mutexes and fair
    // locks); a record written without one is read by its queue id. A kind
    // that does not fit the record is refused by the release, not guessed.
    const std::string kind = record.contains("kind") ? record["kind"].cast<std::string>()
                             : lock.queue_id.empty() ? "mutex"
                                                     : "fair";
    if (kind == "fair") {
      lock.kind = LockKind::fair;
    } else if (kind != "mutex") {
      throw py::value_error("a lock record of kind \"" + kind +
                            "\": this module takes mutexes and fair locks");
    }
    return lock;
  }

  std::unique_ptr<BlockingClient> client_;
  std::shared_ptr<Polling> polling_ = std::make_shared<Polling>();
};

// (client, None) or (None, "file:line:col: message").
py::tuple client_from_file(std::optional<std::string> path) {
  ConfigResult loaded = path ? load_config(*path) : load_default_config();
  if (!loaded.ok()) return py::make_tuple(py::none(), loaded.error.to_string());
  return py::make_tuple(PyClient(std::move(*loaded.config)), py::none());
}

// The same from quorum-file text (nodes= and keyword settings).
py::tuple client_from_text(const std::string& text, const std::string& source) {
  ConfigResult loaded = parse_config(text, source);
  if (!loaded.ok()) return py::make_tuple(py::none(), loaded.error.to_string());
  return py::make_tuple(PyClient(std::move(*loaded.config)), py::none());
}

// A new queue for one asyncio loop.
std::shared_ptr<CompletionQueue> new_completion_queue() {
  std::error_code error;
  std::shared_ptr<CompletionQueue> queue = CompletionQueue::create(error);
  if (!queue) throw std::system_error(error, "redlock_quorum: eventfd");
  return queue;
}

// Every completion queued so far as (id, first, second) tuples: an acquire
// (guard, None) or (None, failure), a loss (reason, None), a release
// (count, None), an at-risk episode (True when it begins, False when a
// renewal ends it; None).
py::list take_completions(CompletionQueue& queue) {
  std::vector<Completion> taken = queue.take();
  py::list out;
  for (Completion& done : taken) {
    switch (done.kind) {
      case Completion::Kind::acquired:
        if (done.guard.owns_lock()) {
          out.append(py::make_tuple(done.id, PyGuard(std::move(done.guard)), py::none()));
        } else {
          const std::error_code error = done.guard.error();
          out.append(py::make_tuple(done.id, py::none(),
                                    failure(error == errc::cancelled ? "cancelled" : "not_acquired",
                                            error, done.guard.acquired().nodes)));
        }
        break;
      case Completion::Kind::lost:
        out.append(py::make_tuple(done.id, done.error.message(), py::none()));
        break;
      case Completion::Kind::released:
        out.append(py::make_tuple(done.id, done.released, py::none()));
        break;
      case Completion::Kind::at_risk:
        out.append(py::make_tuple(done.id, done.at_risk, py::none()));
        break;
    }
  }
  return out;
}

}  // namespace
}  // namespace redlock::python

PYBIND11_MODULE(_native, module) {
  using namespace redlock::python;
  module.doc() = "The redlock library's client, for the redlock_quorum package.";
  py::class_<CompletionQueue, std::shared_ptr<CompletionQueue>>(module, "CompletionQueue")
      .def(py::init(&new_completion_queue))
      .def_property_readonly("fd", &CompletionQueue::fd)
      .def("take", &take_completions);
  py::class_<PyGuard>(module, "Guard")
      .def_property_readonly("held", &PyGuard::held)
      .def_property_readonly("valid", &PyGuard::valid)
      .def_property_readonly("valid_until", &PyGuard::valid_until)
      .def_property_readonly("value", &PyGuard::value)
      .def_property_readonly("resource", &PyGuard::resource)
      .def_property_readonly("fence", &PyGuard::fence)
      .def_property_readonly("renewals", &PyGuard::renewals)
      .def_property_readonly("permit", &PyGuard::permit)
      .def_property_readonly("resources", &PyGuard::resources)
      .def_property_readonly("error", &PyGuard::error)
      .def("release", &PyGuard::release)
      .def("release_async", &PyGuard::release_async, py::arg("queue"), py::arg("id"));
  py::class_<PyClient>(module, "Client")
      .def("lock", &PyClient::lock, py::arg("target"), py::arg("permits"), py::arg("ttl_ms"),
           py::arg("wait_ms"), py::arg("fenced"), py::arg("on_lost"),
           py::arg("at_risk_share") = py::none(), py::arg("on_at_risk") = py::none())
      .def("lock_async", &PyClient::lock_async, py::arg("target"), py::arg("permits"),
           py::arg("ttl_ms"), py::arg("wait_ms"), py::arg("fenced"), py::arg("queue"),
           py::arg("done_id"), py::arg("lost_id"), py::arg("at_risk_share") = py::none(),
           py::arg("risk_id") = 0)
      .def("acquire", &PyClient::acquire, py::arg("resource"), py::arg("ttl_ms"),
           py::arg("wait_ms"), py::arg("fenced"))
      .def("extend", &PyClient::extend, py::arg("lock"), py::arg("ttl_ms"))
      .def("release", &PyClient::release, py::arg("lock"))
      .def("inspect", &PyClient::inspect, py::arg("target"), py::arg("permits"))
      .def("node_health", &PyClient::node_health)
      .def("set_spin_us", &PyClient::set_spin_us, py::arg("budget_us"))
      .def("close", &PyClient::close);
  module.def("client_from_file", &client_from_file, py::arg("path"));
  module.def("client_from_text", &client_from_text, py::arg("text"), py::arg("source"));
}
