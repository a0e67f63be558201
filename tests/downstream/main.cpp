// README's quickstart: take a fenced lock on a resource with the quorum named
// by $REDLOCK_CONFIG (or ./redlock.toml), print its fencing token, release it.
#include <cstdlib>
#include <iostream>
#include <redlock/redlock.hpp>
#include <utility>

int main() {
  redlock::ConfigResult loaded = redlock::load_default_config();
  if (!loaded.ok()) {
    std::cerr << "redlock: " << loaded.error.to_string() << '\n';
    return EXIT_FAILURE;
  }
  redlock::QuorumConfig config = *std::move(loaded.config);
  config.lock.fenced = true;  // also hand out a fencing token

  redlock::BlockingClient client(std::move(config));
  redlock::AcquireResult acquired = client.acquire(redlock::Resource("nightly-report"));
  if (!acquired.ok()) {
    std::cerr << "redlock: not acquired: " << acquired.error.message() << '\n';
    return EXIT_FAILURE;
  }
  const redlock::Lock& lock = *acquired.lock;
  std::cout << "locked " << lock.resource.str() << " for " << acquired.validity.count()
            << " ms, fencing token " << lock.fence.value_or(0) << '\n';

  // The critical section goes here; every write it makes to the protected
  // resource carries *lock.fence, so a stale holder is rejected.

  redlock::ReleaseResult released = client.release(lock);
  std::cout << "released on " << released.released << " of " << released.nodes.size() << " nodes\n";
  return EXIT_SUCCESS;
}
