// A lock over several resources at once (docs/algorithm.md, "Lock kinds";
// kind_scripts.hpp): every resource's mutex key granted, extended and
// released together or not at all, and one token fencing all of them.
#include "kinds/multi.hpp"

#include <algorithm>
#include <set>

namespace redlock::detail {
namespace {

class MultiRules final : public KindRules {
 public:
  [[nodiscard]] bool well_formed(const Lock& lock) const noexcept override {
    return valid_resource_set(lock.resources) && lock.resources.front() == lock.resource &&
           (lock.fences.empty() || lock.fences.size() == lock.resources.size());
  }

  [[nodiscard]] bool keys_allowed(const Lock& lock, const LockConfig& keys) const override {
    return std::all_of(lock.resources.begin(), lock.resources.end(),
                       [&keys](const Resource& resource) { return key_allowed(resource, keys); });
  }

  // acquire_all — KEYS: marker, recovering key, fence hash, then every
  // resource's lock key. ARGV: value, ttl ms, amnesia defence, "1" when
  // fenced, then every resource's fence field.
  [[nodiscard]] ScriptCall attempt_call(const Lock& shape, const LockConfig& keys,
                                        const AttemptSetup& setup) const override {
    const std::string_view prefix = keys.key_prefix;
    ScriptCall call;
    call.script = &script(ScriptId::acquire_all);
    call.keys = {marker_key(prefix), recovering_key(prefix), fence_key(prefix)};
    call.args = {"", std::string(setup.ttl_text), keys.amnesia_defence ? "1" : "0",
                 setup.fenced ? "1" : "0"};
    for (const Resource& each : shape.resources) {
      call.keys.push_back(lock_key(keys, each.str()));
      call.args.push_back(each.str());
    }
    return call;
  }

  [[nodiscard]] ScriptCall extend_call(const Lock& lock, const LockConfig& keys,
                                       std::string ttl_text) const override {
    ScriptCall call;
    call.script = &script(ScriptId::extend_all);
    for (const Resource& resource : lock.resources) {
      call.keys.push_back(lock_key(keys, resource.str()));
    }
    call.args = {lock.value.str(), std::move(ttl_text)};
    return call;
  }

  [[nodiscard]] ScriptCall release_call(const Lock& lock, const LockConfig& keys, bool announce,
                                        std::string_view /*rejoin*/) const override {
    const std::string_view prefix = keys.key_prefix;
    ScriptCall call;
    call.script = &script(ScriptId::release_all);
    call.keys = {marker_key(prefix), recovering_key(prefix)};
    call.args = {lock.value.str()};
    for (const Resource& resource : lock.resources) {
      call.keys.push_back(lock_key(keys, resource.str()));
      call.args.push_back(announce ? release_channel(prefix, resource.str()) : std::string());
      call.args.push_back(announce ? waiting_key(prefix, resource.str()) : std::string());
    }
    return call;
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
                      const LockConfig& keys) {
  ScriptCall call;
  call.script = &script(ScriptId::adopt_all);
  call.keys = {marker_key(keys.key_prefix), recovering_key(keys.key_prefix)};
  call.args = {set.value.str(), std::to_string(set.ttl.count()), keys.amnesia_defence ? "1" : "0"};
  for (std::size_t i = 0; i < set.resources.size() && i < member_values.size(); ++i) {
    call.keys.push_back(lock_key(keys, set.resources[i].str()));
    call.args.push_back(member_values[i].str());
  }
  return call;
}

ScriptCall fence_all_call(const std::vector<Resource>& resources, std::uint64_t token,
                          const LockConfig& keys) {
  ScriptCall call;
  call.script = &script(ScriptId::fence_all);
  call.keys = {marker_key(keys.key_prefix), recovering_key(keys.key_prefix),
               fence_key(keys.key_prefix)};
  call.args = {keys.amnesia_defence ? "1" : "0", std::to_string(token)};
  for (const Resource& each : resources) call.args.push_back(each.str());
  return call;
}

}  // namespace redlock::detail
