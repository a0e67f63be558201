// A semaphore permit (docs/algorithm.md, "Semaphores"; kind_scripts.hpp):
// k permit keys and a count key per semaphore; an acquire wins one permit
// on a majority, the same one.
#include "kinds/kind.hpp"

namespace redlock::detail {
namespace {

class SemaphoreRules final : public KindRules {
 public:
  [[nodiscard]] bool well_formed(const Lock& lock) const noexcept override {
    // (The permit is set, and no other kind's field: the table's
    // well_formed.)
    return lock.permits >= 1 && lock.permits <= Semaphore::kMaxPermits &&
           *lock.permit < lock.permits;
  }

  // A permit's keys are a semaphore's own.
  [[nodiscard]] bool keys_allowed(const Lock& /*lock*/, const LockConfig& /*keys*/) const override {
    return true;
  }

  // permit_acquire — KEYS: marker, recovering key, fence hash, count key.
  // ARGV: value, ttl ms, amnesia defence, permits k, the permit tried first
  // (the acquire sets it per attempt, args[4]), the permits' key prefix,
  // their fence field prefix ("" unfenced).
  [[nodiscard]] ScriptCall attempt_call(const Lock& shape, const LockConfig& keys,
                                        const AttemptSetup& setup) const override {
    const std::string_view prefix = keys.key_prefix;
    const std::string_view name = shape.resource.str();
    ScriptCall call;
    call.script = &script(ScriptId::permit_acquire);
    call.keys = {marker_key(prefix), recovering_key(prefix), fence_key(prefix),
                 permit_count_key(prefix, name)};
    call.args = {"",
                 std::string(setup.ttl_text),
                 keys.amnesia_defence ? "1" : "0",
                 std::to_string(shape.permits),
                 "0",
                 permit_key_prefix(prefix, name),
                 setup.fenced ? permit_fence_prefix(name) : std::string()};
    return call;
  }

  [[nodiscard]] ScriptCall extend_call(const Lock& lock, const LockConfig& keys,
                                       std::string ttl_text) const override {
    const std::string_view prefix = keys.key_prefix;
    ScriptCall call;
    call.script = &script(ScriptId::permit_extend);
    call.keys = {permit_key(prefix, lock.resource.str(), *lock.permit),
                 permit_count_key(prefix, lock.resource.str())};
    call.args = {lock.value.str(), std::move(ttl_text), std::to_string(lock.permits)};
    return call;
  }

  [[nodiscard]] ScriptCall release_call(const Lock& lock, const LockConfig& keys, bool announce,
                                        std::string_view /*rejoin*/) const override {
    const std::string_view prefix = keys.key_prefix;
    ScriptCall call;
    call.script = &script(ScriptId::release);
    call.keys = {permit_key(prefix, lock.resource.str(), *lock.permit), marker_key(prefix),
                 recovering_key(prefix)};
    // Permits have no waiting line: any waiter may take any permit.
    call.args = {lock.value.str(),
                 announce ? permit_channel(prefix, lock.resource.str()) : std::string(),
                 std::string(), std::string()};
    return call;
  }
};

}  // namespace

const KindRules& semaphore_rules() noexcept {
  static const SemaphoreRules rules;
  return rules;
}

}  // namespace redlock::detail
