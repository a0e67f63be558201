// Shared API keys: at most N tasks at once, each key used by one task at a time.
//
// An agent scheduler shares 10 API keys of an LLM provider between its
// tasks, and each key may carry one task's requests at a time. The keys
// are the permits of one semaphore, llm-keys with 10 permits: a task takes
// a permit and uses the key numbered after it (permit 3: key-3). The
// semaphore admits at most 10 holders at once and each permit has one
// holder at a time, so no key is ever used by two tasks at once — in this
// process or in any other that takes the same semaphore with the same
// count.
//
//   redlock_example_api_keys [--config FILE | --node HOST:PORT ...]
//       [--tasks N] [--threads N] [--keys N] [--work-ms MS] [--wait-ms MS]
//
// One process runs --tasks tasks (30) on a pool of --threads threads (20):
// more threads than keys, so the semaphore, not the pool, is what limits
// them. It checks both promises itself and reports the figures:
//   tasks done: 30 of 30
//   most at once: 10 of 10 keys
//   overlaps: 0
// Exit 0 when every task ran, 70 when a key was used by two tasks at once
// or more tasks held keys than there are keys, 69 when a task lost its
// permit while working, 75 when one got none within --wait-ms, 64 when the
// nodes record another count for llm-keys (or a flag is wrong).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "example_setup.hpp"

namespace {

using std::chrono::milliseconds;

// EX_SOFTWARE: what the semaphore promises did not hold.
constexpr int kViolation = 70;

// Raises `maximum` to `value` if it is larger.
void raise_to(std::atomic<long long>& maximum, long long value) {
  long long seen = maximum.load();
  while (seen < value && !maximum.compare_exchange_weak(seen, value)) {
  }
}

// What the tasks record as they run; every field is written from many
// threads at once.
struct Tally {
  explicit Tally(std::size_t keys) : in_use(keys), uses(keys) {}
  std::atomic<long long> holding{0};       // tasks holding a key right now
  std::atomic<long long> most_holding{0};  // the most at any one time
  std::atomic<long long> overlaps{0};      // a key taken while in use
  std::atomic<long long> done{0};          // tasks that finished their work
  std::atomic<long long> lost{0};          // tasks whose permit was lost
  std::atomic<long long> longest_wait_ms{0};
  std::vector<std::atomic<bool>> in_use;     // per key: a task is using it
  std::vector<std::atomic<long long>> uses;  // per key: how many tasks used it

  std::mutex mutex;  // guards the output and first_error
  std::error_code first_error;
  std::string first_error_detail;
};

void say(Tally& tally, const std::string& line, std::ostream& stream = std::cout) {
  const std::lock_guard<std::mutex> hold(tally.mutex);
  stream << line << '\n' << std::flush;
}

// Why a permit was refused, with the count the nodes record when that was
// the reason (a node that records another count says permits_differ and
// puts the count in holder_ttl_ms).
std::string refusal(const redlock::Guard& guard, const redlock::Semaphore& keys) {
  std::ostringstream text;
  text << guard.error().message();
  for (const redlock::NodeOutcome& node : guard.acquired().nodes) {
    if (node.status == redlock::NodeStatus::permits_differ) {
      text << " (" << node.name << " records " << node.holder_ttl_ms << " permits for "
           << keys.name() << ", not " << keys.permits()
           << ": every client of a semaphore must name one count)";
      break;
    }
  }
  return text.str();
}

// One task: take a key, use it for `work`, give it back.
void run_task(long long task, redlock::BlockingClient& client, const redlock::Semaphore& keys,
              const redlock::GuardOptions& options, milliseconds work, Tally& tally) {
  const auto asked = std::chrono::steady_clock::now();
  redlock::Guard guard = client.lock(keys, options);
  if (!guard) {
    const std::string why = refusal(guard, keys);
    say(tally, "task " + std::to_string(task) + ": no key: " + why, std::cerr);
    const std::lock_guard<std::mutex> hold(tally.mutex);
    if (!tally.first_error) {
      tally.first_error = guard.error();
      tally.first_error_detail = why;
    }
    return;
  }
  raise_to(
      tally.longest_wait_ms,
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - asked).count());
  const std::uint32_t permit = *guard.lock().permit;
  const std::string key = "key-" + std::to_string(permit);

  // From here until the release below the permit is ours: count it, and
  // mark its key in use. Finding the mark already set means another task
  // is using the key right now.
  raise_to(tally.most_holding, ++tally.holding);
  if (permit >= tally.in_use.size() || tally.in_use[permit].exchange(true)) {
    ++tally.overlaps;
    say(tally, "task " + std::to_string(task) + ": " + key + " is already in use", std::cerr);
  } else {
    ++tally.uses[permit];
  }
  say(tally, "task " + std::to_string(task) + " uses " + key);

  // The work: requests made with the key (here just time passing). The
  // guard renews the permit meanwhile; if it is lost, the key may be
  // another task's at once, so the work stops there, not at its end.
  const auto end = std::chrono::steady_clock::now() + work;
  const std::stop_token lost = guard.stop_token();
  while (!lost.stop_requested() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::min(milliseconds(5), work));
  }
  // valid() also turns false at the local validity deadline, before the
  // loss signal may have arrived.
  const bool kept = guard.valid();

  // Unmarked before the release: once the permit is released, the next
  // task may take the key.
  if (permit < tally.in_use.size()) tally.in_use[permit] = false;
  --tally.holding;
  if (kept) {
    ++tally.done;
  } else {
    ++tally.lost;
    const std::error_code why = guard.error() ? guard.error() : redlock::errc::lost;
    say(tally, "task " + std::to_string(task) + ": lost " + key + ": " + why.message(), std::cerr);
  }
  guard.release();
}

}  // namespace

int main(int argc, char** argv) {
  const example::Flags flags = example::parse_flags(
      argc, argv, {"--tasks", "--threads", "--keys", "--work-ms", "--wait-ms"});
  const auto tasks = flags.number("--tasks", 30, 1, 100000);
  const auto threads = flags.number("--threads", 20, 1, 256);
  const auto key_count = flags.number("--keys", 10, 1, redlock::Semaphore::kMaxPermits);
  const auto work_ms = flags.number("--work-ms", 10, 0, 3600000);
  const auto wait_ms = flags.number("--wait-ms", 20000, 0, 3600000);
  if (!flags.error.empty() || !tasks || !threads || !key_count || !work_ms || !wait_ms) {
    return example::usage(flags,
                          "api_keys [--config FILE | --node HOST:PORT ...] [--tasks N]"
                          " [--threads N] [--keys N] [--work-ms MS] [--wait-ms MS]");
  }
  std::optional<redlock::QuorumConfig> quorum = example::load_quorum(flags);
  if (!quorum) return example::exit_code::config;

  // One client for the whole process: its calls may come from any number
  // of threads at once, and its waiters share one subscription per node,
  // so a released permit wakes one waiting task rather than all of them.
  redlock::BlockingClient client(std::move(*quorum));
  const redlock::Semaphore keys("llm-keys", static_cast<std::uint32_t>(*key_count));
  redlock::GuardOptions options;
  // A bounded wait: a task that gets no key in this time gives up (exit 75
  // for the run), rather than queueing without end behind stuck holders.
  options.acquire.wait = milliseconds(*wait_ms);

  Tally tally(keys.permits());
  std::atomic<long long> next_task{0};
  {
    std::vector<std::jthread> pool;
    pool.reserve(static_cast<std::size_t>(*threads));
    for (long long i = 0; i < *threads; ++i) {
      pool.emplace_back([&] {
        for (long long task = next_task++; task < *tasks; task = next_task++) {
          run_task(task, client, keys, options, milliseconds(*work_ms), tally);
        }
      });
    }
  }  // the pool joins here

  long long keys_used = 0;
  for (const auto& uses : tally.uses) keys_used += uses.load() > 0 ? 1 : 0;
  const long long done = tally.done.load();
  const long long most = tally.most_holding.load();
  const long long overlaps = tally.overlaps.load();
  std::cout << "tasks done: " << done << " of " << *tasks << '\n'
            << "most at once: " << most << " of " << keys.permits() << " keys\n"
            << "overlaps: " << overlaps << '\n'
            << "keys used: " << keys_used << " of " << keys.permits() << '\n'
            << "longest wait: " << tally.longest_wait_ms.load() << " ms\n";

  if (overlaps > 0 || most > static_cast<long long>(keys.permits())) {
    std::cerr << "violation: a key was used by two tasks at once, or more tasks held keys"
                 " than there are keys\n";
    return kViolation;
  }
  if (tally.lost.load() > 0) return example::exit_code::lost;
  if (tally.first_error) {
    std::cerr << *tasks - done << " tasks got no key; first: " << tally.first_error_detail << '\n';
    return example::exit_code_for(tally.first_error);
  }
  return example::exit_code::ok;
}
