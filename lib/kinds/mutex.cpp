// The mutex (docs/algorithm.md, "Acquire"): one key per resource, waiters
// in the waiting line its release names. The acquire's plain transaction
// (scripts.hpp, acquire_set) stands in for attempt_call where no fence
// counter is read and no place in line kept.
#include "kinds/kind.hpp"
#include "scripts/script_calls.hpp"

namespace redlock::detail {
namespace {

class MutexRules final : public KindRules {
 public:
  [[nodiscard]] bool well_formed(const Lock& /*lock*/) const noexcept override { return true; }

  [[nodiscard]] ScriptCall attempt_call(const Lock& shape, const KeySpace& keys,
                                        const AttemptSetup& setup) const override {
    const std::string_view prefix = keys.key_prefix();
    const std::string lock = lock_key(keys, shape.resource.str());
    const std::string marker = marker_key(prefix);
    const std::string recovering = recovering_key(prefix);
    const std::string fence = fence_key(prefix);
    return encode(
        AcquireCall{.lock_key = lock,
                    .marker_key = marker,
                    .recovering_key = recovering,
                    .fence_key = fence,
                    .value = setup.value,
                    .ttl_ms = setup.ttl_text,
                    .fence_field = setup.fenced ? std::string_view(shape.resource.str()) : "",
                    .amnesia_defence = keys.amnesia_defence(),
                    .line = setup.line});
  }

  [[nodiscard]] ScriptCall extend_call(const Lock& lock, const KeySpace& keys,
                                       std::string ttl_text) const override {
    return one_key_extend(ScriptId::extend, lock, keys, std::move(ttl_text));
  }

  [[nodiscard]] ScriptCall release_call(const Lock& lock, const KeySpace& keys, bool announce,
                                        std::string_view rejoin) const override {
    const std::string_view prefix = keys.key_prefix();
    const std::string_view resource = lock.resource.str();
    const std::string key = lock_key(keys, resource);
    const std::string marker = marker_key(prefix);
    const std::string recovering = recovering_key(prefix);
    const std::string channel =
        announce ? release_channel(keys.key_prefix(), resource) : std::string();
    const std::string waiting = announce ? waiting_key(prefix, resource) : std::string();
    return encode(ReleaseCall{.lock_key = key,
                              .marker_key = marker,
                              .recovering_key = recovering,
                              .value = lock.value.str(),
                              .channel = channel,
                              .waiting_set = waiting,
                              .rejoin = announce ? rejoin : std::string_view()});
  }
};

}  // namespace

const KindRules& mutex_rules() noexcept {
  static const MutexRules rules;
  return rules;
}

}  // namespace redlock::detail
