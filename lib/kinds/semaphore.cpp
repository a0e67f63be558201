// A semaphore permit (docs/algorithm.md, "Semaphores"; kind_scripts.hpp):
// k permit keys and a count key per semaphore; an acquire wins one permit
// on a majority, the same one.
#include "kinds/kind.hpp"
#include "scripts/script_calls.hpp"

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
  [[nodiscard]] bool keys_allowed(const Lock& /*lock*/, const KeySpace& /*keys*/) const override {
    return true;
  }

  [[nodiscard]] ScriptCall attempt_call(const Lock& shape, const KeySpace& keys,
                                        const AttemptSetup& setup) const override {
    const std::string_view prefix = keys.key_prefix();
    const std::string_view name = shape.resource.str();
    const std::string marker = marker_key(prefix);
    const std::string recovering = recovering_key(prefix);
    const std::string fence = fence_key(prefix);
    const std::string count = permit_count_key(prefix, name);
    const std::string permits = std::to_string(shape.permits);
    const std::string key_prefix = permit_key_prefix(prefix, name);
    const std::string fence_prefix = setup.fenced ? permit_fence_prefix(name) : std::string();
    return encode(PermitAcquireCall{.marker_key = marker,
                                    .recovering_key = recovering,
                                    .fence_key = fence,
                                    .count_key = count,
                                    .value = setup.value,
                                    .ttl_ms = setup.ttl_text,
                                    .amnesia_defence = keys.amnesia_defence(),
                                    .permits = permits,
                                    .first_permit = setup.first_permit,
                                    .permit_key_prefix = key_prefix,
                                    .fence_field_prefix = fence_prefix});
  }

  // Grants of different permits split the nodes: the attempt holds the
  // permit a majority granted.
  [[nodiscard]] std::unique_ptr<AttemptTally> attempt_tally(const Lock& shape) const override {
    return permit_tally(shape.permits);
  }

  [[nodiscard]] ScriptCall extend_call(const Lock& lock, const KeySpace& keys,
                                       std::string ttl_text) const override {
    const std::string_view prefix = keys.key_prefix();
    const std::string key = permit_key(prefix, lock.resource.str(), *lock.permit);
    const std::string count = permit_count_key(prefix, lock.resource.str());
    const std::string permits = std::to_string(lock.permits);
    return encode(PermitExtendCall{.permit_key = key,
                                   .count_key = count,
                                   .value = lock.value.str(),
                                   .ttl_ms = ttl_text,
                                   .permits = permits});
  }

  [[nodiscard]] ScriptCall release_call(const Lock& lock, const KeySpace& keys, bool announce,
                                        std::string_view /*rejoin*/) const override {
    const std::string_view prefix = keys.key_prefix();
    const std::string key = permit_key(prefix, lock.resource.str(), *lock.permit);
    const std::string marker = marker_key(prefix);
    const std::string recovering = recovering_key(prefix);
    const std::string channel =
        announce ? permit_channel(keys.key_prefix(), lock.resource.str()) : std::string();
    // Permits have no waiting line: any waiter may take any permit.
    return encode(ReleaseCall{.lock_key = key,
                              .marker_key = marker,
                              .recovering_key = recovering,
                              .value = lock.value.str(),
                              .channel = channel});
  }
};

}  // namespace

const KindRules& semaphore_rules() noexcept {
  static const SemaphoreRules rules;
  return rules;
}

}  // namespace redlock::detail
