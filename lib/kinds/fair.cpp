// The fair lock (docs/algorithm.md, "Fair locks"): the mutex's key, and a
// queue of tickets per resource whose release grants the next waiter.
#include "kinds/fair.hpp"

namespace redlock::detail {
namespace {

class FairRules final : public KindRules {
 public:
  // (Its place, and no other kind's field: the table's well_formed.)
  [[nodiscard]] bool well_formed(const Lock& /*lock*/) const noexcept override { return true; }

  // fair_acquire (fair_scripts.hpp) — KEYS: marker, recovering key, fence
  // hash, lock key, queue, due, claims. ARGV: value, ttl ms, fence field,
  // amnesia defence, waiter id, ticket and counter field (the acquire sets
  // both per attempt, args[5] and args[7]), queue entry ttl ms.
  [[nodiscard]] ScriptCall attempt_call(const Lock& shape, const LockConfig& keys,
                                        const AttemptSetup& setup) const override {
    const std::string_view prefix = keys.key_prefix;
    const std::string_view resource = shape.resource.str();
    ScriptCall call;
    call.script = &script(ScriptId::fair_acquire);
    call.keys = {marker_key(prefix),
                 recovering_key(prefix),
                 fence_key(prefix),
                 lock_key(keys, resource),
                 queue_key(prefix, resource),
                 queue_due_key(prefix, resource),
                 queue_claims_key(prefix, resource)};
    call.args = {"",
                 std::string(setup.ttl_text),
                 setup.fenced ? std::string(resource) : std::string(),
                 keys.amnesia_defence ? "1" : "0",
                 shape.queue_id,
                 "",
                 std::to_string(kFairQueueEntryTtl.count()),
                 ""};
    return call;
  }

  [[nodiscard]] ScriptCall extend_call(const Lock& lock, const LockConfig& keys,
                                       std::string ttl_text) const override {
    // The mutex's: a fair lock's key is a mutex's.
    return mutex_rules().extend_call(lock, keys, std::move(ttl_text));
  }

  [[nodiscard]] ScriptCall release_call(const Lock& lock, const LockConfig& keys, bool announce,
                                        std::string_view /*rejoin*/) const override {
    const std::string_view prefix = keys.key_prefix;
    const std::string_view resource = lock.resource.str();
    ScriptCall call;
    call.script = &script(ScriptId::fair_release);
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
    return call;
  }
};

}  // namespace

const KindRules& fair_rules() noexcept {
  static const FairRules rules;
  return rules;
}

void draw_next_ticket(ScriptCall& call, const Lock& lock, const LockConfig& keys,
                      std::string_view pre_claim, std::string_view next_place) {
  // (release_call left the counter field and the pre-claim empty.)
  call.args[4] = ticket_field(lock.resource.str());
  call.args[5].assign(1, keys.amnesia_defence ? '1' : '0');
  call.args[7] = pre_claim;
  call.args[8] = next_place;
}

ScriptCall claim_release_call(const Resource& resource, const LockValue& value, Milliseconds ttl,
                              std::string_view queue_id, const LockConfig& keys, bool leave) {
  Lock claimed{resource, value, ttl, TimePoint{}, TimePoint{}, std::nullopt};
  claimed.queue_id = queue_id;
  claimed.kind = LockKind::fair;
  ScriptCall call = fair_rules().release_call(claimed, keys, true, {});
  if (!leave) call.args[2].clear();
  return call;
}

std::string claim_argument(Milliseconds ttl, std::string_view tag, bool amnesia_defence,
                           std::string_view value) {
  std::string claim = std::to_string(ttl.count());
  claim.append(":").append(tag).append(amnesia_defence ? ":1:" : ":0:").append(value);
  return claim;
}

}  // namespace redlock::detail
