#include "holding/hold_registry.hpp"

#include "holding/guard_state.hpp"

namespace redlock::detail {

std::string HoldRegistry::key(const std::string& target, const std::string& owner) {
  // Lengths first, so that no two (target, owner) pairs make one key.
  return std::to_string(target.size()) + ":" + target + std::to_string(owner.size()) + ":" + owner;
}

std::shared_ptr<GuardState> HoldRegistry::join(const std::string& key) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto found = entries_.find(key);
  if (found == entries_.end()) return nullptr;
  std::shared_ptr<GuardState> state = found->second.state.lock();
  // Lost, or past its deadline with the loss not yet declared (a process
  // stopped, a loop turn late): not held any more, so not joined.
  if (!state || state->lost() || SteadyClock::now() >= state->valid_until()) return nullptr;
  ++found->second.holds;
  return state;
}

void HoldRegistry::add(const std::string& key, const std::shared_ptr<GuardState>& state) {
  std::lock_guard<std::mutex> guard(mutex_);
  // A lost hold's entry is replaced: its remaining holds release nothing
  // of the new one (leave() compares the state).
  entries_[key] = Entry{state, 1};
}

bool HoldRegistry::leave(const std::string& key, const GuardState* state) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto found = entries_.find(key);
  if (found == entries_.end()) return true;
  const std::shared_ptr<GuardState> held = found->second.state.lock();
  if (held.get() != state) return true;  // a hold of a lock since replaced
  if (--found->second.holds > 0) return false;
  entries_.erase(found);
  return true;
}

}  // namespace redlock::detail
