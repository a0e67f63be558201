#include "operations/slot_parts.hpp"

#include "kinds/kind.hpp"
#include "kinds/multi.hpp"
#include "scripts/reply_parse.hpp"

namespace redlock::detail {

void MemberCalls::add(ScriptCall call) {
  if (parts_ == 0) {
    first_ = std::move(call);
  } else {
    more_.push_back(std::move(call));
  }
  ++parts_;
}

std::vector<SlotPart> slot_parts(const ClientCore& core, const std::vector<Resource>& resources) {
  std::vector<SlotPart> parts;
  if (resources.empty()) return parts;
  parts.push_back({core.keys_for(resources.front().str()), {0}});
  if (!parts.front().keys.slot()) {
    for (std::size_t i = 1; i < resources.size(); ++i) parts.front().members.push_back(i);
    return parts;
  }
  for (std::size_t i = 1; i < resources.size(); ++i) {
    const std::uint16_t slot = resource_slot(resources[i].str());
    SlotPart* found = nullptr;
    for (SlotPart& part : parts) {
      if (*part.keys.slot() == slot) found = &part;
    }
    if (found == nullptr) {
      parts.push_back({core.keys_for(resources[i].str()), {}});
      found = &parts.back();
    }
    found->members.push_back(i);
  }
  return parts;
}

std::vector<SlotPart> slot_parts(const ClientCore& core, const Lock& lock) {
  if (lock.kind == LockKind::multi && !lock.resources.empty()) {
    return slot_parts(core, lock.resources);
  }
  std::vector<SlotPart> parts;
  parts.push_back({core.keys_for(lock.resource.str()), {0}});
  return parts;
}

std::vector<Resource> part_resources(const std::vector<Resource>& resources, const SlotPart& part) {
  std::vector<Resource> out;
  out.reserve(part.members.size());
  for (const std::size_t i : part.members) out.push_back(resources[i]);
  return out;
}

Lock part_lock(const Lock& set, const SlotPart& part) {
  if (set.kind != LockKind::multi || set.resources.empty()) return set;
  Lock out = set;
  out.resources = part_resources(set.resources, part);
  out.resource = out.resources.front();
  if (!set.fences.empty()) {
    out.fences.clear();
    for (const std::size_t i : part.members) out.fences.push_back(set.fences[i]);
  }
  return out;
}

bool lock_keys_allowed(const ClientCore& core, const Lock& lock) {
  if (lock.kind != LockKind::multi) {
    return lock_keys_allowed(lock, core.keys_for(lock.resource.str()));
  }
  for (const SlotPart& part : slot_parts(core, lock)) {
    if (!lock_keys_allowed(part_lock(lock, part), part.keys)) return false;
  }
  return true;
}

MemberCalls extend_calls(const ClientCore& core, const Lock& lock, Milliseconds ttl) {
  if (lock.kind != LockKind::multi) {
    return extend_call(lock, core.keys_for(lock.resource.str()), ttl);
  }
  MemberCalls calls;
  for (const SlotPart& part : slot_parts(core, lock)) {
    calls.add(extend_call(part_lock(lock, part), part.keys, ttl));
  }
  return calls;
}

MemberCalls release_calls(const ClientCore& core, const Lock& lock, bool announce,
                          std::string_view rejoin) {
  if (lock.kind != LockKind::multi) {
    return release_call(lock, core.keys_for(lock.resource.str()), announce, rejoin);
  }
  MemberCalls calls;
  for (const SlotPart& part : slot_parts(core, lock)) {
    calls.add(release_call(part_lock(lock, part), part.keys, announce, rejoin));
  }
  return calls;
}

MemberCalls fence_all_calls(const ClientCore& core, const std::vector<Resource>& resources,
                            std::uint64_t token) {
  MemberCalls calls;
  for (const SlotPart& part : slot_parts(core, resources)) {
    calls.add(fence_all_call(part_resources(resources, part), token, part.keys));
  }
  return calls;
}

void recover_parts(RecoveryCoordinator& recovery, const std::vector<SlotPart>& parts,
                   std::function<void(bool progressed)> done) {
  struct Join {
    std::size_t left;
    bool progressed = true;
    std::function<void(bool)> done;
  };
  auto join = std::make_shared<Join>(Join{parts.size(), true, std::move(done)});
  for (const SlotPart& part : parts) {
    recovery.request(part.keys, [join](bool progressed) {
      join->progressed = join->progressed && progressed;
      if (--join->left == 0) join->done(join->progressed);
    });
  }
}

void send_calls(NodeLink& link, const MemberCalls& calls, bool require_replicas, TimePoint sent_at,
                const std::shared_ptr<ResponseSink>& sink, std::uint32_t tag) {
  for (std::uint32_t i = 0; i < calls.parts(); ++i) {
    link.send_call(calls[i], require_replicas, sent_at, sink, tag);
  }
}

void send_cleanups(NodeLink& link, const MemberCalls& calls, TimePoint expires_at) {
  for (std::uint32_t i = 0; i < calls.parts(); ++i) link.send_cleanup(calls[i], expires_at);
}

PreparedCalls::PreparedCalls(const MemberCalls& calls) : first_(calls[0]) {
  if (calls.parts() == 1) return;
  more_ = std::make_unique<std::vector<PreparedRequest>>();
  more_->reserve(calls.parts() - 1);
  for (std::uint32_t i = 1; i < calls.parts(); ++i) more_->emplace_back(calls[i]);
}

void PreparedCalls::send(NodeLink& link, TimePoint sent_at,
                         const std::shared_ptr<ResponseSink>& sink, std::uint32_t tag) const {
  link.send_prepared(first_, sent_at, sink, tag);
  if (!more_) return;
  for (const PreparedRequest& part : *more_) link.send_prepared(part, sent_at, sink, tag);
}

bool count_fence_answer(QuorumRound& round, std::size_t node, const NodeResponse& response,
                        FenceRound& proposal, NodeOutcome* report, bool* unmerged) {
  NodeOutcome& part = round.answer(node, response);
  FenceAnswer answer;
  if (parse_fence_response(response, answer, part, unmerged)) {
    // (Stored or not, as an acquire's grant or refusal, for the merge.)
    part.status = answer.stored ? NodeStatus::granted : NodeStatus::busy;
    part.fence_counter = static_cast<std::int64_t>(answer.current);
  } else {
    part.status = NodeStatus::error;
  }
  const NodeOutcome* whole = round.whole(node, part);
  if (whole == nullptr) return false;
  if (whole->status == NodeStatus::granted || whole->status == NodeStatus::busy) {
    proposal.answer({.stored = whole->status == NodeStatus::granted,
                     .current = static_cast<std::uint64_t>(whole->fence_counter)});
    return true;
  }
  proposal.no_answer();
  if (report != nullptr) report->detail = whole->detail;
  return true;
}

}  // namespace redlock::detail
