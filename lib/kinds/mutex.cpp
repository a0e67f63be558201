// The mutex (docs/algorithm.md, "Acquire"): one key per resource, waiters
// in the waiting line its release names. The acquire's plain transaction
// (scripts.hpp, acquire_set) stands in for attempt_call where no fence
// counter is read and no place in line kept.
#include "kinds/kind.hpp"

namespace redlock::detail {
namespace {

class MutexRules final : public KindRules {
 public:
  [[nodiscard]] bool well_formed(const Lock& /*lock*/) const noexcept override { return true; }

  // acquire — KEYS: lock key, marker, recovering key, fence hash. ARGV:
  // value, ttl ms, fence field ("" unfenced), amnesia defence, place in
  // line ("" for none; the acquire sets it per attempt, args[4]).
  [[nodiscard]] ScriptCall attempt_call(const Lock& shape, const LockConfig& keys,
                                        const AttemptSetup& setup) const override {
    const std::string_view prefix = keys.key_prefix;
    ScriptCall call;
    call.script = &script(ScriptId::acquire);
    call.keys = {lock_key(keys, shape.resource.str()), marker_key(prefix), recovering_key(prefix),
                 fence_key(prefix)};
    call.args = {"", std::string(setup.ttl_text),
                 setup.fenced ? shape.resource.str() : std::string(),
                 keys.amnesia_defence ? "1" : "0", ""};
    return call;
  }

  [[nodiscard]] ScriptCall extend_call(const Lock& lock, const LockConfig& keys,
                                       std::string ttl_text) const override {
    return one_key_extend(ScriptId::extend, lock, keys, std::move(ttl_text));
  }

  [[nodiscard]] ScriptCall release_call(const Lock& lock, const LockConfig& keys, bool announce,
                                        std::string_view rejoin) const override {
    const std::string_view prefix = keys.key_prefix;
    ScriptCall call;
    call.script = &script(ScriptId::release);
    call.keys = {lock_key(keys, lock.resource.str()), marker_key(prefix), recovering_key(prefix)};
    if (announce) {
      call.args = {lock.value.str(), release_channel(prefix, lock.resource.str()),
                   waiting_key(prefix, lock.resource.str()), std::string(rejoin)};
    } else {
      call.args = {lock.value.str(), std::string(), std::string(), std::string()};
    }
    return call;
  }
};

}  // namespace

const KindRules& mutex_rules() noexcept {
  static const MutexRules rules;
  return rules;
}

}  // namespace redlock::detail
