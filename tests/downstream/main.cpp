#include <iostream>
#include <redlock/redlock.hpp>

int main() {
  auto loaded = redlock::load_default_config();  // $REDLOCK_CONFIG, else ./redlock.toml
  if (!loaded.ok()) { std::cerr << "redlock: " << loaded.error.to_string() << '\n'; return 78; }
  redlock::BlockingClient client(*loaded.config);
  redlock::GuardOptions options;
  options.acquire.fenced = true;  // also hand out a fencing token
  redlock::Guard guard = client.lock(redlock::Resource("nightly-report"), options);
  if (!guard) { std::cerr << "redlock: " << guard.error().message() << '\n'; return 75; }
  std::cout << "holding nightly-report as " << guard.lock().value.str() << " with fencing token "
            << *guard.fence() << '\n';
  // The critical section: the guard renews the lock until it goes out of scope,
  // and guard.stop_token() is signalled if the lock is ever lost.
}
