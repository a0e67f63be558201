// A lock over several resources at once (docs/algorithm.md, "Lock kinds";
// kind_scripts.hpp): every resource's mutex key granted, extended and
// released together or not at all, and one token fencing all of them.
#include "kinds/multi.hpp"

#include <algorithm>
#include <set>

#include "scripts/script_calls.hpp"

namespace redlock::detail {
namespace {

// Each resource's name: its fence field.
std::vector<std::string> names_of(const std::vector<Resource>& resources) {
  std::vector<std::string> out;
  out.reserve(resources.size());
  for (const Resource& each : resources) out.push_back(each.str());
  return out;
}

class MultiRules final : public KindRules {
 public:
  [[nodiscard]] bool well_formed(const Lock& lock) const noexcept override {
    return valid_resource_set(lock.resources) && lock.resources.front() == lock.resource &&
           (lock.fences.empty() || lock.fences.size() == lock.resources.size());
  }

  [[nodiscard]] bool keys_allowed(const Lock& lock, const KeySpace& keys) const override {
    // Per slot, every resource in the space's slot: one call names them all.
    return std::all_of(lock.resources.begin(), lock.resources.end(),
                       [&keys](const Resource& resource) {
                         return key_allowed(resource, keys) &&
                                (!keys.slot() || resource_slot(resource.str()) == *keys.slot());
                       });
  }

  [[nodiscard]] ScriptCall attempt_call(const Lock& shape, const KeySpace& keys,
                                        const AttemptSetup& setup) const override {
    const std::string_view prefix = keys.key_prefix();
    const std::string marker = marker_key(prefix);
    const std::string recovering = recovering_key(prefix);
    const std::string fence = fence_key(prefix);
    const std::vector<std::string> lock_keys = lock_keys_of(shape.resources, keys);
    const std::vector<std::string> fields = names_of(shape.resources);
    return encode(AcquireAllCall{.marker_key = marker,
                                 .recovering_key = recovering,
                                 .fence_key = fence,
                                 .lock_keys = lock_keys,
                                 .value = setup.value,
                                 .ttl_ms = setup.ttl_text,
                                 .amnesia_defence = keys.amnesia_defence(),
                                 .fenced = setup.fenced,
                                 .fence_fields = fields});
  }

  [[nodiscard]] ScriptCall extend_call(const Lock& lock, const KeySpace& keys,
                                       std::string ttl_text) const override {
    const std::vector<std::string> lock_keys = lock_keys_of(lock.resources, keys);
    return encode(
        ExtendAllCall{.lock_keys = lock_keys, .value = lock.value.str(), .ttl_ms = ttl_text});
  }

  [[nodiscard]] ScriptCall release_call(const Lock& lock, const KeySpace& keys, bool announce,
                                        std::string_view /*rejoin*/) const override {
    const std::string_view prefix = keys.key_prefix();
    const std::string marker = marker_key(prefix);
    const std::string recovering = recovering_key(prefix);
    std::vector<ReleasedKey> released;
    released.reserve(lock.resources.size());
    for (const Resource& resource : lock.resources) {
      released.push_back(
          {lock_key(keys, resource.str()),
           announce ? release_channel(keys.key_prefix(), resource.str()) : std::string(),
           announce ? waiting_key(prefix, resource.str()) : std::string()});
    }
    return encode(ReleaseAllCall{.marker_key = marker,
                                 .recovering_key = recovering,
                                 .value = lock.value.str(),
                                 .released = released});
  }

 private:
  [[nodiscard]] static std::vector<std::string> lock_keys_of(const std::vector<Resource>& resources,
                                                             const KeySpace& keys) {
    std::vector<std::string> out;
    out.reserve(resources.size());
    for (const Resource& each : resources) out.push_back(lock_key(keys, each.str()));
    return out;
  }
};

}  // namespace

const KindRules& multi_rules() noexcept {
  static const MultiRules rules;
  return rules;
}

bool valid_resource_set(const std::vector<Resource>& resources) noexcept {
  if (resources.empty() || resources.size() > kMaxResourcesPerLock) return false;
  std::set<std::string_view> names;
  return std::all_of(resources.begin(), resources.end(), [&](const Resource& resource) {
    return !resource.empty() && names.insert(resource.str()).second;
  });
}

ScriptCall adopt_call(const Lock& set, const std::vector<LockValue>& member_values,
                      const KeySpace& keys) {
  const std::string marker = marker_key(keys.key_prefix());
  const std::string recovering = recovering_key(keys.key_prefix());
  const std::size_t count = std::min(set.resources.size(), member_values.size());
  std::vector<std::string> lock_keys;
  std::vector<std::string> held;
  for (std::size_t i = 0; i < count; ++i) {
    lock_keys.push_back(lock_key(keys, set.resources[i].str()));
    held.push_back(member_values[i].str());
  }
  const std::string ttl = std::to_string(set.ttl.count());
  return encode(AdoptAllCall{.marker_key = marker,
                             .recovering_key = recovering,
                             .lock_keys = lock_keys,
                             .value = set.value.str(),
                             .ttl_ms = ttl,
                             .amnesia_defence = keys.amnesia_defence(),
                             .held_values = held});
}

ScriptCall fence_all_call(const std::vector<Resource>& resources, std::uint64_t token,
                          const KeySpace& keys) {
  const std::string marker = marker_key(keys.key_prefix());
  const std::string recovering = recovering_key(keys.key_prefix());
  const std::string fence = fence_key(keys.key_prefix());
  const std::string token_text = std::to_string(token);
  const std::vector<std::string> fields = names_of(resources);
  return encode(FenceAllCall{.marker_key = marker,
                             .recovering_key = recovering,
                             .fence_key = fence,
                             .amnesia_defence = keys.amnesia_defence(),
                             .token = token_text,
                             .fields = fields});
}

}  // namespace redlock::detail
