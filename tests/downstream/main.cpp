#include <iostream>
#include <redlock/redlock.hpp>

int main() {
  auto loaded = redlock::load_default_config();  // $REDLOCK_CONFIG, else ./redlock.toml
  if (!loaded.ok()) { std::cerr << "redlock: " << loaded.error.to_string() << '\n'; return 78; }
  redlock::BlockingClient client(*loaded.config);
  auto held = client.acquire(redlock::Resource("nightly-report"));
  if (!held.ok()) { std::cerr << "redlock: " << held.error.message() << '\n'; return 75; }
  std::cout << "holding nightly-report as " << held.lock->value.str() << " for "
            << held.validity.count() << " ms\n";
  client.release(*held.lock);
}
