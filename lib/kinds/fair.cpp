// The fair lock (docs/algorithm.md, "Fair locks"): the mutex's key, and a
// queue of tickets per resource whose release grants the next waiter.
#include "kinds/fair.hpp"

#include "scripts/script_calls.hpp"

namespace redlock::detail {
namespace {

class FairRules final : public KindRules {
 public:
  // (Its place, and no other kind's field: the table's well_formed.)
  [[nodiscard]] bool well_formed(const Lock& /*lock*/) const noexcept override { return true; }

  [[nodiscard]] ScriptCall attempt_call(const Lock& shape, const KeySpace& keys,
                                        const AttemptSetup& setup) const override {
    const std::string_view prefix = keys.key_prefix();
    const std::string_view resource = shape.resource.str();
    const std::string marker = marker_key(prefix);
    const std::string recovering = recovering_key(prefix);
    const std::string fence = fence_key(prefix);
    const std::string key = lock_key(keys, resource);
    const std::string queue = queue_key(prefix, resource);
    const std::string due = queue_due_key(prefix, resource);
    const std::string claims = queue_claims_key(prefix, resource);
    const std::string entry_ttl = std::to_string(kFairQueueEntryTtl.count());
    return encode(FairAcquireCall{.marker_key = marker,
                                  .recovering_key = recovering,
                                  .fence_key = fence,
                                  .lock_key = key,
                                  .queue = {queue, due, claims},
                                  .value = setup.value,
                                  .ttl_ms = setup.ttl_text,
                                  .fence_field = setup.fenced ? resource : "",
                                  .amnesia_defence = keys.amnesia_defence(),
                                  .waiter_id = shape.queue_id,
                                  .ticket = setup.ticket,
                                  .entry_ttl_ms = entry_ttl,
                                  .counter_field = setup.counter_field});
  }

  [[nodiscard]] ScriptCall extend_call(const Lock& lock, const KeySpace& keys,
                                       std::string ttl_text) const override {
    // The mutex's: a fair lock's key is a mutex's.
    return mutex_rules().extend_call(lock, keys, std::move(ttl_text));
  }

  [[nodiscard]] ScriptCall release_call(const Lock& lock, const KeySpace& keys, bool announce,
                                        std::string_view /*rejoin*/) const override {
    return fair_release_call(lock, keys, announce, FairReleaseExtras{});
  }
};

}  // namespace

const KindRules& fair_rules() noexcept {
  static const FairRules rules;
  return rules;
}

ScriptCall fair_release_call(const Lock& lock, const KeySpace& keys, bool announce,
                             const FairReleaseExtras& extras) {
  const std::string_view prefix = keys.key_prefix();
  const std::string_view resource = lock.resource.str();
  const std::string key = lock_key(keys, resource);
  const std::string queue = queue_key(prefix, resource);
  const std::string due = queue_due_key(prefix, resource);
  const std::string claims = queue_claims_key(prefix, resource);
  const std::string marker = marker_key(prefix);
  const std::string recovering = recovering_key(prefix);
  const std::string fence = fence_key(prefix);
  const std::string channel =
      announce ? release_channel(keys.key_prefix(), resource) : std::string();
  const std::string waiting = announce ? waiting_key(prefix, resource) : std::string();
  const std::string counter = extras.draw ? ticket_field(resource) : std::string();
  // The holder's place and its claim (granted: the claim went with the
  // grant on that node, but a node that had not granted it yet may still
  // keep it) go with the lock.
  return encode(
      FairReleaseCall{.lock_key = key,
                      .queue = {queue, due, claims},
                      .marker_key = marker,
                      .recovering_key = recovering,
                      .fence_key = fence,
                      .value = lock.value.str(),
                      .channel = channel,
                      .leaving_place = extras.leave ? std::string_view(lock.queue_id) : "",
                      .waiting_set = waiting,
                      .counter_field = counter,
                      .amnesia_defence = keys.amnesia_defence(),
                      .leaving_claim = lock.queue_id,
                      .pre_claim = extras.draw ? extras.pre_claim : "",
                      .next_place = extras.draw ? extras.next_place : ""});
}

ScriptCall claim_release_call(const Resource& resource, const LockValue& value, Milliseconds ttl,
                              std::string_view queue_id, const KeySpace& keys, bool leave) {
  Lock claimed{resource, value, ttl, TimePoint{}, TimePoint{}, std::nullopt};
  claimed.queue_id = queue_id;
  claimed.kind = LockKind::fair;
  return fair_release_call(claimed, keys, true, FairReleaseExtras{.leave = leave});
}

std::string claim_argument(Milliseconds ttl, std::string_view tag, bool amnesia_defence,
                           std::string_view value) {
  std::string claim = std::to_string(ttl.count());
  claim.append(":").append(tag).append(amnesia_defence ? ":1:" : ":0:").append(value);
  return claim;
}

}  // namespace redlock::detail
