// The acquire of the lock kinds beyond the mutex (docs/engine.md, "Lock
// kinds"): how a lock over several resources and a semaphore permit are
// set up, and how their grants are undone. The round itself, retries,
// fencing and wake-ups are the mutex's, in acquire_operation.cpp.
#include <cstddef>
#include <string>

#include "operations/acquire_operation.hpp"
#include "scripts/script_calls.hpp"

namespace redlock::detail {

AcquireOperation::AcquireOperation(ClientCore& core, std::vector<Resource> resources,
                                   const AcquireOptions& options,
                                   AsyncClient::AcquireCallback callback)
    : Operation(core),
      kind_(LockKind::multi),
      resource_(resources.empty() ? Resource("") : resources.front()),
      resources_(std::move(resources)),
      keys_(core.keys_for(resource_.str())),
      callback_(std::move(callback)) {
  channel_ = release_channel(keys_.key_prefix(), resource_.str());
  configure(options);
  if (!valid_resource_set(resources_)) {
    argument_problem_ = make_error_code(errc::invalid_argument);
    return;
  }
  // Per slot, one call names the keys of one slot: a set across slots is
  // one call per slot on every node (slot_parts.hpp).
  parts_ = slot_parts(core, resources_);
  channels_.assign(resources_.size(), std::string());
  for (const SlotPart& part : parts_) {
    for (const std::size_t i : part.members) {
      const std::string_view name = resources_[i].str();
      if (is_bookkeeping_key(part.keys.key_prefix(), lock_key(part.keys, name))) {
        argument_problem_ = make_error_code(errc::invalid_argument);
      }
      // (A release channel is in its resource's own slot.)
      channels_[i] = release_channel(part.keys.key_prefix(), name);
    }
  }
  // One part (the shared layout, or one slot): one call, as any kind's.
  if (parts_.size() < 2) parts_.clear();
}

AcquireOperation::AcquireOperation(ClientCore& core, const Semaphore& semaphore,
                                   const AcquireOptions& options,
                                   AsyncClient::AcquireCallback callback)
    : Operation(core),
      kind_(LockKind::permit),
      resource_(semaphore.name()),
      keys_(core.keys_for(resource_.str())),
      permits_(semaphore.permits()),
      callback_(std::move(callback)) {
  const std::string& prefix = keys_.key_prefix();
  channel_ = permit_channel(keys_.key_prefix(), resource_.str());
  configure(options);
  if (resource_.empty() || permits_ < 1 || permits_ > Semaphore::kMaxPermits) {
    argument_problem_ = make_error_code(errc::invalid_argument);
    return;
  }
  permit_prefix_ = permit_key_prefix(prefix, resource_.str());
  permit_fence_prefix_ = permit_fence_prefix(resource_.str());
}

MemberCalls AcquireOperation::undo_calls(const LockValue& value, bool announce,
                                         std::int64_t permit) const {
  // The kind's own release of this attempt's value (kinds/; a set's, one
  // per part), or for a permit, of the permit the node granted.
  Lock attempted = shape(value);
  if (kind_ == LockKind::multi) return release_calls(core_, attempted, announce);
  const bool any_permit =
      kind_ == LockKind::permit && (permit < 0 || permit >= static_cast<std::int64_t>(permits_));
  if (!any_permit) {
    if (kind_ == LockKind::permit) attempted.permit = static_cast<std::uint32_t>(permit);
    return release_call(attempted, keys_, announce);
  }
  // Which permit the node granted is not known (its answer never came):
  // whichever holds the value.
  return permits_release_call(value, announce, std::nullopt);
}

ScriptCall AcquireOperation::permits_release_call(const LockValue& value, bool announce,
                                                  std::optional<std::uint32_t> except) const {
  std::vector<ReleasedKey> released;
  released.reserve(permits_);
  for (std::uint32_t j = 0; j < permits_; ++j) {
    if (j == except) continue;
    // Permits have no waiting line.
    released.push_back(
        {permit_prefix_ + std::to_string(j), announce ? channel_ : std::string(), {}});
  }
  return encode(ReleaseAllCall{.marker_key = marker_key_,
                               .recovering_key = recovering_key_,
                               .value = value.str(),
                               .released = released});
}

void AcquireOperation::undo_other_permits() {
  won_tag_ = attempt_.tag();
  const TimePoint expires_at = grant_expiry();
  const auto& outcomes = attempt_.outcomes();
  for (std::size_t i = 0; i < core_.nodes().size(); ++i) {
    if (!attempt_.may_have_changed(i)) continue;
    const NodeOutcome& outcome = outcomes[i];
    if (outcome.status == NodeStatus::granted && outcome.permit == permit_) continue;
    // A node still to answer is dealt with when its answer comes
    // (handle_stale): most often it grants the permit won, and undoing
    // every other permit on it now would cost it a command per permit.
    if (outcome.status == NodeStatus::pending) continue;
    if (outcome.status == NodeStatus::granted) {
      undo_grant(i, value_, false, expires_at, outcome.permit);
      continue;
    }
    undo_other_permits_on(i);
  }
}

void AcquireOperation::undo_other_permits_on(std::size_t node) {
  // What the node did is not known (no answer that says): every permit but
  // the one won, which is ours on this node too if it granted it.
  if (permits_ < 2) return;
  core_.nodes()[node]->send_cleanup(permits_release_call(value_, false, permit_), grant_expiry());
}

}  // namespace redlock::detail
