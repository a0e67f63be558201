// The one table of lock kinds: a new kind is one entry here and one file
// of its own beside this one (kind.hpp).
#include "kinds/kind.hpp"
#include "scripts/script_calls.hpp"

namespace redlock::detail {

const KindRules& rules_of(LockKind kind) noexcept {
  switch (kind) {
    case LockKind::mutex:
      return mutex_rules();
    case LockKind::fair:
      return fair_rules();
    case LockKind::shared:
      return read_write_rules();
    case LockKind::multi:
      return multi_rules();
    case LockKind::permit:
      return semaphore_rules();
  }
  return mutex_rules();
}

LockKind kind_of(const Lock& lock) noexcept { return lock.kind; }

bool KindRules::keys_allowed(const Lock& lock, const KeySpace& keys) const {
  return key_allowed(lock.resource, keys);
}

std::unique_ptr<AttemptTally> KindRules::attempt_tally(const Lock& /*shape*/) const {
  return one_key_tally();
}

bool KindRules::key_allowed(const Resource& resource, const KeySpace& keys) {
  return !is_bookkeeping_key(keys.key_prefix(), lock_key(keys, resource.str()));
}

ScriptCall KindRules::one_key_extend(ScriptId id, const Lock& lock, const KeySpace& keys,
                                     std::string ttl_text) {
  const std::string key = lock_key(keys, lock.resource.str());
  if (id == ScriptId::read_extend) {
    return encode(ReadExtendCall{.lock_key = key, .value = lock.value.str(), .ttl_ms = ttl_text});
  }
  return encode(ExtendCall{.lock_key = key, .value = lock.value.str(), .ttl_ms = ttl_text});
}

bool well_formed(const Lock& lock) noexcept {
  if (lock.value.empty() || lock.resource.empty()) return false;
  // A kind this version does not know (a record from elsewhere) is no kind.
  if (static_cast<int>(lock.kind) > static_cast<int>(LockKind::fair)) return false;
  // The fields only one kind uses, set on a record of another: refused,
  // never read as that other kind.
  if (lock.shared != (lock.kind == LockKind::shared) ||
      lock.permit.has_value() != (lock.kind == LockKind::permit) ||
      (lock.kind != LockKind::permit && lock.permits != 0) ||
      lock.queue_id.empty() == (lock.kind == LockKind::fair) ||
      (lock.kind != LockKind::multi && (!lock.resources.empty() || !lock.fences.empty()))) {
    return false;
  }
  return rules_of(kind_of(lock)).well_formed(lock);
}

bool lock_keys_allowed(const Lock& lock, const KeySpace& keys) {
  return rules_of(kind_of(lock)).keys_allowed(lock, keys);
}

ScriptCall extend_call(const Lock& lock, const KeySpace& keys, Milliseconds ttl) {
  return rules_of(kind_of(lock)).extend_call(lock, keys, std::to_string(ttl.count()));
}

ScriptCall release_call(const Lock& lock, const KeySpace& keys, bool announce,
                        std::string_view rejoin) {
  return rules_of(kind_of(lock)).release_call(lock, keys, announce, rejoin);
}

}  // namespace redlock::detail
