// A pool of N keys: take any free one.
//
// N interchangeable resources (licence seats, test accounts, GPU slots) are
// locks pool:0 .. pool:N-1. A worker tries them one by one without waiting
// and keeps the first it gets; when every one is taken it says so and
// exits 75, so its scheduler tries again later.
//
//   redlock_example_key_pool [--config FILE | --node HOST:PORT ...]
//       [--pool N] [--hold-ms MS]
//
// It holds its key for --hold-ms, or until SIGINT / SIGTERM, then releases.
#include <chrono>
#include <csignal>
#include <random>
#include <thread>

#include "example_setup.hpp"

namespace {

using std::chrono::milliseconds;

volatile std::sig_atomic_t stop_signalled = 0;
extern "C" void on_stop_signal(int /*signal*/) { stop_signalled = 1; }

}  // namespace

int main(int argc, char** argv) {
  const example::Flags flags = example::parse_flags(argc, argv, {"--pool", "--hold-ms"});
  const auto pool_size = flags.number("--pool", 4, 1, 100000);
  const auto hold_ms = flags.number("--hold-ms", 1000, 0, 86400000);
  if (!flags.error.empty() || !pool_size || !hold_ms) {
    return example::usage(flags,
                          "key_pool [--config FILE | --node HOST:PORT ...] [--pool N]"
                          " [--hold-ms MS]");
  }
  std::optional<redlock::QuorumConfig> quorum = example::load_quorum(flags);
  if (!quorum) return example::exit_code::config;
  // A signal ends the hold early and still releases the key, so the next
  // worker need not wait for its TTL to run out.
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);

  redlock::BlockingClient client(std::move(*quorum));
  redlock::GuardOptions options;
  // One attempt per key: a busy key is someone else's, so move on. (Two
  // workers reaching the same free key in the same instant may both miss it;
  // that only costs a later retry, never a key held twice.)
  options.acquire.wait = milliseconds(0);

  // Start at a random key, so that workers do not all queue on pool:0 and
  // find the free keys only after a row of busy ones. This spreads load; it
  // is not a secret (lock values are; the library draws those itself).
  const auto size = static_cast<unsigned long long>(*pool_size);
  std::random_device seed;
  const unsigned long long start =
      std::uniform_int_distribution<unsigned long long>(0, size - 1)(seed);
  redlock::Guard guard;
  std::error_code last_error;
  unsigned long long tried = 0;
  while (!guard && tried < size) {
    const redlock::Resource key("pool:" + std::to_string((start + tried++) % size));
    guard = client.lock(key, options);
    if (!guard) last_error = guard.error();
  }
  if (!guard) {
    if (last_error == redlock::errc::not_acquired) {
      std::cout << "no free key: all " << size << " of pool:0.." << size - 1 << " are taken\n";
    } else {
      std::cerr << "no key taken; last error: " << last_error.message() << '\n';
    }
    return example::exit_code_for(last_error);
  }
  const std::string key = guard.lock().resource.str();
  std::cout << "took " << key << " (tried " << tried << " of " << size << ")\n" << std::flush;

  // The work: here just holding. The guard renews the key meanwhile; a
  // lost key (its stop token) ends the work early.
  const auto end = std::chrono::steady_clock::now() + milliseconds(*hold_ms);
  while (stop_signalled == 0 && !guard.stop_token().stop_requested() &&
         std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  if (!guard.valid()) {
    const std::error_code why = guard.error() ? guard.error() : redlock::errc::lost;
    std::cerr << "lost " << key << ": " << why.message() << '\n';
    return example::exit_code::lost;
  }
  guard.release();
  std::cout << "released " << key << '\n';
  return example::exit_code::ok;
}
