// Reentrant holds (docs/engine.md, "Reentrant holds"): which locks an
// owner holds through this client, so that the owner taking one again
// shares the first hold's renewal instead of waiting for itself. A lock is
// released when its last hold ends. Any thread; one mutex.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace redlock::detail {

class GuardState;

class HoldRegistry {
 public:
  // The key of a hold: what is locked (its kind and names) and its owner.
  [[nodiscard]] static std::string key(const std::string& target, const std::string& owner);

  // Another hold of the lock `key` names, when one is held, not lost and
  // not past its validity deadline (on the steady clock, as
  // Guard::valid()): counted, and its state returned; else null.
  [[nodiscard]] std::shared_ptr<GuardState> join(const std::string& key);
  // A first hold of `key`.
  void add(const std::string& key, const std::shared_ptr<GuardState>& state);
  // One hold of `key` ends; true when it was the last (release the lock).
  [[nodiscard]] bool leave(const std::string& key, const GuardState* state);

 private:
  struct Entry {
    std::weak_ptr<GuardState> state;
    int holds = 0;
  };
  std::mutex mutex_;
  std::map<std::string, Entry> entries_;
};

}  // namespace redlock::detail
