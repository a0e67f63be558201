// A set's calls on one member, one per hash slot (docs/algorithm.md, "Key
// layout", a set across slots). In the per-slot layout (some member is a
// Redis Cluster) one call may name the keys of one slot only, so a set (a
// multi lock) whose resources hash to several slots goes to each member as
// several calls: one per part, the set's resources of one slot in the
// set's order under that slot's KeySpace. A member's answer is its parts'
// answers merged (QuorumRound::whole): a grant only when every part was
// granted, and a part granted beside a refused one is undone before the
// refusal counts, so the set stays all or nothing on each member. Every
// other lock, and a set in the shared layout or within one slot, is one
// part: one call, as ever.
//
// Loop thread. The calls are built here; the operations send them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "operations/client_core.hpp"
#include "operations/quorum_round.hpp"
#include "protocol/fence_round.hpp"
#include "redlock/outcome.hpp"
#include "scripts/key_space.hpp"
#include "transport/node_link.hpp"

namespace redlock::detail {

struct SlotPart {
  KeySpace keys;
  // Indexes into the set's resources (and fences), in the set's order.
  std::vector<std::size_t> members;
};

// The parts of a lock over `resources` (one for a single resource): its
// resources grouped by slot, the group of resources[0] first.
[[nodiscard]] std::vector<SlotPart> slot_parts(const ClientCore& core,
                                               const std::vector<Resource>& resources);
// The parts of `lock` (its kind's: a set's resources, else the one).
[[nodiscard]] std::vector<SlotPart> slot_parts(const ClientCore& core, const Lock& lock);
// `set` restricted to `part`: the part's resources (its first the lock's
// `resource`), and their fences when the set has them.
[[nodiscard]] Lock part_lock(const Lock& set, const SlotPart& part);
// The resources of `resources` in `part`.
[[nodiscard]] std::vector<Resource> part_resources(const std::vector<Resource>& resources,
                                                   const SlotPart& part);

// One member's calls for one request, one per part. The first is kept in
// place, so that a request of one part (every lock's but a set across
// slots) allocates nothing beside its call.
class MemberCalls {
 public:
  MemberCalls() = default;
  MemberCalls(ScriptCall call)  // NOLINT(google-explicit-constructor): one part
      : first_(std::move(call)), parts_(1) {}

  void add(ScriptCall call);
  [[nodiscard]] std::uint32_t parts() const noexcept { return parts_; }
  [[nodiscard]] const ScriptCall& operator[](std::size_t i) const {
    return i == 0 ? first_ : more_[i - 1];
  }

 private:
  ScriptCall first_;
  std::vector<ScriptCall> more_;
  std::uint32_t parts_ = 0;
};

// Whether no lock key of `lock`, part by part, is one of the library's own
// keys (lock_keys_allowed, kinds/kind.hpp).
[[nodiscard]] bool lock_keys_allowed(const ClientCore& core, const Lock& lock);

// One member's calls for `lock`, one per part: its extend, its release.
[[nodiscard]] MemberCalls extend_calls(const ClientCore& core, const Lock& lock, Milliseconds ttl);
// (`rejoin`: a mutex's place in line, release_call, kinds/kind.hpp.)
[[nodiscard]] MemberCalls release_calls(const ClientCore& core, const Lock& lock, bool announce,
                                        std::string_view rejoin = {});

// One member's fence_all calls for `token` over `resources` (one per part).
[[nodiscard]] MemberCalls fence_all_calls(const ClientCore& core,
                                          const std::vector<Resource>& resources,
                                          std::uint64_t token);

// Asks `recovery` for a round of every part's key space (or joins each
// one running, RecoveryCoordinator::request) and calls `done(progressed)`
// once all have ended, progressed only if each did.
void recover_parts(RecoveryCoordinator& recovery, const std::vector<SlotPart>& parts,
                   std::function<void(bool progressed)> done);

// Sends each of `calls` on `link` in one round (`tag`), or as cleanups.
void send_calls(NodeLink& link, const MemberCalls& calls, bool require_replicas, TimePoint sent_at,
                const std::shared_ptr<ResponseSink>& sink, std::uint32_t tag);
void send_cleanups(NodeLink& link, const MemberCalls& calls, TimePoint expires_at);

// A member's calls encoded once, for an operation that sends them again
// and again (a guard's renewals): one request, plus one per further part
// (none for every lock but a set across slots, which costs no allocation).
class PreparedCalls {
 public:
  explicit PreparedCalls(const MemberCalls& calls);
  // The transport keeps pointers to the requests: they never move.
  PreparedCalls(const PreparedCalls&) = delete;
  PreparedCalls& operator=(const PreparedCalls&) = delete;

  [[nodiscard]] std::uint32_t parts() const noexcept {
    return 1 + (more_ ? static_cast<std::uint32_t>(more_->size()) : 0);
  }
  void send(NodeLink& link, TimePoint sent_at, const std::shared_ptr<ResponseSink>& sink,
            std::uint32_t tag) const;

 private:
  PreparedRequest first_;
  std::unique_ptr<std::vector<PreparedRequest>> more_;
};

// Counts `node`'s answer to a fence round (fence or fence_all, one call
// per part of `round`) into `proposal` once every part's has come: the
// node stored the token only if every part did, and its counter is the
// highest any part reported. A part that failed makes the node's answer
// none, its reason in `report`'s detail (when given). Sets `*unmerged` when a part
// awaits its second merge after a recovery. Returns whether the node's
// answer was counted.
bool count_fence_answer(QuorumRound& round, std::size_t node, const NodeResponse& response,
                        FenceRound& proposal, NodeOutcome* report, bool* unmerged);

}  // namespace redlock::detail
