#include "scripts/lock_calls.hpp"

#include <algorithm>
#include <set>
#include <string>

namespace redlock::detail {

LockKind kind_of(const Lock& lock) noexcept {
  if (lock.permit) return LockKind::permit;
  if (lock.shared) return LockKind::shared;
  if (!lock.queue_id.empty()) return LockKind::fair;
  if (!lock.resources.empty()) return LockKind::multi;
  return LockKind::single;
}

bool well_formed(const Lock& lock) noexcept {
  if (lock.value.empty() || lock.resource.empty()) return false;
  switch (kind_of(lock)) {
    case LockKind::single:
      return true;
    case LockKind::shared:
      return lock.resources.empty() && lock.permits == 0 && lock.queue_id.empty();
    case LockKind::fair:
      return lock.resources.empty() && lock.permits == 0;
    case LockKind::permit:
      return lock.permits >= 1 && lock.permits <= Semaphore::kMaxPermits &&
             *lock.permit < lock.permits && lock.resources.empty() && !lock.shared;
    case LockKind::multi:
      return !lock.shared && valid_resource_set(lock.resources) &&
             lock.resources.front() == lock.resource &&
             (lock.fences.empty() || lock.fences.size() == lock.resources.size());
  }
  return false;
}

bool valid_resource_set(const std::vector<Resource>& resources) noexcept {
  if (resources.empty() || resources.size() > kMaxResourcesPerLock) return false;
  std::set<std::string_view> names;
  return std::all_of(resources.begin(), resources.end(), [&](const Resource& resource) {
    return !resource.empty() && names.insert(resource.str()).second;
  });
}

bool lock_keys_allowed(const Lock& lock, const LockConfig& keys) {
  const auto allowed = [&keys](const Resource& resource) {
    return !is_bookkeeping_key(keys.key_prefix, lock_key(keys, resource.str()));
  };
  switch (kind_of(lock)) {
    case LockKind::permit:
      return true;
    case LockKind::multi:
      return std::all_of(lock.resources.begin(), lock.resources.end(), allowed);
    case LockKind::single:
    case LockKind::shared:
    case LockKind::fair:
      break;
  }
  return allowed(lock.resource);
}

ScriptCall extend_call(const Lock& lock, const LockConfig& keys, Milliseconds ttl) {
  const std::string_view prefix = keys.key_prefix;
  ScriptCall call;
  std::string ttl_text = std::to_string(ttl.count());
  switch (kind_of(lock)) {
    case LockKind::single:
    case LockKind::fair:
      call.script = &script(ScriptId::extend);
      call.keys = {lock_key(keys, lock.resource.str())};
      call.args = {lock.value.str(), std::move(ttl_text)};
      break;
    case LockKind::shared:
      call.script = &script(ScriptId::read_extend);
      call.keys = {lock_key(keys, lock.resource.str())};
      call.args = {lock.value.str(), std::move(ttl_text)};
      break;
    case LockKind::multi:
      call.script = &script(ScriptId::extend_all);
      for (const Resource& resource : lock.resources) {
        call.keys.push_back(lock_key(keys, resource.str()));
      }
      call.args = {lock.value.str(), std::move(ttl_text)};
      break;
    case LockKind::permit:
      call.script = &script(ScriptId::permit_extend);
      call.keys = {permit_key(prefix, lock.resource.str(), *lock.permit),
                   permit_count_key(prefix, lock.resource.str())};
      call.args = {lock.value.str(), std::move(ttl_text), std::to_string(lock.permits)};
      break;
  }
  return call;
}

void draw_next_ticket(ScriptCall& call, const Lock& lock, const LockConfig& keys,
                      std::string_view pre_claim, std::string_view next_place) {
  // (release_call left the counter field and the pre-claim empty.)
  call.args[4] = ticket_field(lock.resource.str());
  call.args[5].assign(1, keys.amnesia_defence ? '1' : '0');
  call.args[7] = pre_claim;
  call.args[8] = next_place;
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

ScriptCall claim_release_call(const Resource& resource, const LockValue& value, Milliseconds ttl,
                              std::string_view queue_id, const LockConfig& keys, bool leave) {
  Lock claimed{resource, value, ttl, TimePoint{}, TimePoint{}, std::nullopt};
  claimed.queue_id = queue_id;
  ScriptCall call = release_call(claimed, keys, true);
  if (!leave) call.args[2].clear();
  return call;
}

std::string claim_argument(Milliseconds ttl, std::string_view tag, bool amnesia_defence,
                           std::string_view value) {
  std::string claim = std::to_string(ttl.count());
  claim.append(":").append(tag).append(amnesia_defence ? ":1:" : ":0:").append(value);
  return claim;
}

ScriptCall release_call(const Lock& lock, const LockConfig& keys, bool announce,
                        std::string_view rejoin) {
  const std::string_view prefix = keys.key_prefix;
  ScriptCall call;
  switch (kind_of(lock)) {
    case LockKind::single:
      call.script = &script(ScriptId::release);
      call.keys = {lock_key(keys, lock.resource.str()), marker_key(prefix), recovering_key(prefix)};
      if (announce) {
        call.args = {lock.value.str(), release_channel(prefix, lock.resource.str()),
                     waiting_key(prefix, lock.resource.str()), std::string(rejoin)};
      } else {
        call.args = {lock.value.str(), std::string(), std::string(), std::string()};
      }
      break;
    case LockKind::fair: {
      call.script = &script(ScriptId::fair_release);
      const std::string_view resource = lock.resource.str();
      call.keys = {lock_key(keys, resource),
                   queue_key(prefix, resource),
                   queue_due_key(prefix, resource),
                   queue_claims_key(prefix, resource),
                   marker_key(prefix),
                   recovering_key(prefix),
                   fence_key(prefix)};
      // The holder's place and its claim (granted: the claim went with the
      // grant on that node, but a node that had not granted it yet may
      // still keep it) go with the lock.
      call.args = {lock.value.str(), announce ? release_channel(prefix, resource) : std::string(),
                   lock.queue_id,    announce ? waiting_key(prefix, resource) : std::string(),
                   std::string(),    keys.amnesia_defence ? "1" : "0",
                   lock.queue_id,    std::string(),
                   std::string()};
      break;
    }
    case LockKind::shared:
      call.script = &script(ScriptId::read_release);
      call.keys = {lock_key(keys, lock.resource.str())};
      call.args = {lock.value.str(),
                   announce ? release_channel(prefix, lock.resource.str()) : std::string(),
                   announce ? waiting_key(prefix, lock.resource.str()) : std::string()};
      break;
    case LockKind::multi:
      call.script = &script(ScriptId::release_all);
      call.keys = {marker_key(prefix), recovering_key(prefix)};
      call.args = {lock.value.str()};
      for (const Resource& resource : lock.resources) {
        call.keys.push_back(lock_key(keys, resource.str()));
        call.args.push_back(announce ? release_channel(prefix, resource.str()) : std::string());
        call.args.push_back(announce ? waiting_key(prefix, resource.str()) : std::string());
      }
      break;
    case LockKind::permit:
      call.script = &script(ScriptId::release);
      call.keys = {permit_key(prefix, lock.resource.str(), *lock.permit), marker_key(prefix),
                   recovering_key(prefix)};
      // Permits have no waiting line: any waiter may take any permit.
      call.args = {lock.value.str(),
                   announce ? permit_channel(prefix, lock.resource.str()) : std::string(),
                   std::string(), std::string()};
      break;
  }
  return call;
}

}  // namespace redlock::detail
