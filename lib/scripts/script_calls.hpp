// Every script's call as a struct of named keys and arguments
// (docs/engine.md, "Script calls"). The order in which a script's Lua
// reads its KEYS and ARGV is written once, in its struct's keys() and
// args(); encode() is the one function that lays any of them out as a
// ScriptCall, and send_to() / send_cleanup_to() hand one to a link
// without copying. tests/integration/script_calls_test.cpp sends each
// struct to a real node and checks that its script's own count check
// accepts it, so a field missing here, or one too many, fails there.
//
// Fields are views: whatever builds a call keeps the strings alive until
// it is encoded or sent (send() encodes before it returns). Numbers are
// passed as their decimal text, flags as bools. For a batched script
// (scripts.hpp) keys() is one request's own key, then the shared keys,
// and args() that request's arguments.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scripts/scripts.hpp"
#include "transport/node_link.hpp"

namespace redlock::detail {

[[nodiscard]] constexpr std::string_view flag_text(bool on) noexcept { return on ? "1" : "0"; }

// acquire (batched): one resource's exclusive try, the node rules first.
struct AcquireCall {
  static constexpr ScriptId kId = ScriptId::acquire;
  std::string_view lock_key{}, marker_key{}, recovering_key{}, fence_key{};
  std::string_view value{}, ttl_ms{};
  std::string_view fence_field{};  // "" unfenced
  bool amnesia_defence = true;
  std::string_view line{};  // line_argument(), "" for none
  [[nodiscard]] std::array<std::string_view, 4> keys() const {
    return {lock_key, marker_key, recovering_key, fence_key};
  }
  [[nodiscard]] std::array<std::string_view, 5> args() const {
    return {value, ttl_ms, fence_field, flag_text(amnesia_defence), line};
  }
};

// acquire_set: the acquire as one transaction (set_acquire.hpp).
struct AcquireSetCall {
  static constexpr ScriptId kId = ScriptId::acquire_set;
  std::string_view lock_key{}, marker_key{}, recovering_key{};
  std::string_view value{}, ttl_ms{};
  bool amnesia_defence = true;
  [[nodiscard]] std::array<std::string_view, 3> keys() const {
    return {lock_key, marker_key, recovering_key};
  }
  [[nodiscard]] std::array<std::string_view, 3> args() const {
    return {value, ttl_ms, flag_text(amnesia_defence)};
  }
};

// extend (batched), and read_extend: one key's value kept for ttl_ms more.
template <ScriptId Id>
struct OneKeyExtendCall {
  static constexpr ScriptId kId = Id;
  std::string_view lock_key{}, value{}, ttl_ms{};
  [[nodiscard]] std::array<std::string_view, 1> keys() const { return {lock_key}; }
  [[nodiscard]] std::array<std::string_view, 2> args() const { return {value, ttl_ms}; }
};
using ExtendCall = OneKeyExtendCall<ScriptId::extend>;
using ReadExtendCall = OneKeyExtendCall<ScriptId::read_extend>;

// release (batched): compare-and-delete, then wake and serve the lines.
struct ReleaseCall {
  static constexpr ScriptId kId = ScriptId::release;
  std::string_view lock_key{}, marker_key{}, recovering_key{};
  std::string_view value{};
  std::string_view channel{};      // "" publishes nothing
  std::string_view waiting_set{};  // "" names no waiter
  std::string_view rejoin{};       // rejoin_argument(), "" for none
  [[nodiscard]] std::array<std::string_view, 3> keys() const {
    return {lock_key, marker_key, recovering_key};
  }
  [[nodiscard]] std::array<std::string_view, 4> args() const {
    return {value, channel, waiting_set, rejoin};
  }
};

// fence (batched): one counter raised to a proposed token.
struct FenceCall {
  static constexpr ScriptId kId = ScriptId::fence;
  std::string_view fence_key{}, marker_key{}, recovering_key{};
  std::string_view field{}, token{};
  bool amnesia_defence = true;
  [[nodiscard]] std::array<std::string_view, 3> keys() const {
    return {fence_key, marker_key, recovering_key};
  }
  [[nodiscard]] std::array<std::string_view, 3> args() const {
    return {field, token, flag_text(amnesia_defence)};
  }
};

// probe: what the recovery decision needs to know of a node.
struct ProbeCall {
  static constexpr ScriptId kId = ScriptId::probe;
  std::string_view marker_key{}, recovering_key{}, fence_key{};
  std::string_view lock_pattern{}, permit_pattern{};
  [[nodiscard]] std::array<std::string_view, 3> keys() const {
    return {marker_key, recovering_key, fence_key};
  }
  [[nodiscard]] std::array<std::string_view, 2> args() const {
    return {lock_pattern, permit_pattern};
  }
};

// recover: a node marked again, its counters merged, its delay set.
struct RecoverCall {
  static constexpr ScriptId kId = ScriptId::recover;
  std::string_view marker_key{}, recovering_key{}, fence_key{};
  std::string_view delay_ms{}, marker_value{}, recovering_value{};
  std::span<const std::string> counters{};  // field, value, field, value …
  [[nodiscard]] std::array<std::string_view, 3> keys() const {
    return {marker_key, recovering_key, fence_key};
  }
  [[nodiscard]] std::vector<std::string_view> args() const {
    std::vector<std::string_view> out{delay_ms, marker_value, recovering_value};
    out.insert(out.end(), counters.begin(), counters.end());
    return out;
  }
};

// remerge: the second merge of a node recovered with a delay.
struct RemergeCall {
  static constexpr ScriptId kId = ScriptId::remerge;
  std::string_view recovering_key{}, fence_key{};
  std::span<const std::string> counters{};  // field, value, field, value …
  [[nodiscard]] std::array<std::string_view, 2> keys() const { return {recovering_key, fence_key}; }
  [[nodiscard]] std::vector<std::string_view> args() const {
    return {counters.begin(), counters.end()};
  }
};

// declare_new: `redlock init`'s mark on a node that shows no sign of use.
struct DeclareNewCall {
  static constexpr ScriptId kId = ScriptId::declare_new;
  std::string_view marker_key{}, recovering_key{}, fence_key{};
  std::string_view marker_value{}, first_init_prefix{};
  std::span<const std::string> lock_patterns{};
  [[nodiscard]] std::array<std::string_view, 3> keys() const {
    return {marker_key, recovering_key, fence_key};
  }
  [[nodiscard]] std::vector<std::string_view> args() const {
    std::vector<std::string_view> out{marker_value, first_init_prefix};
    out.insert(out.end(), lock_patterns.begin(), lock_patterns.end());
    return out;
  }
};

// check_marker: a session's first word, taking away a marker a promoted
// replica copied from its master.
struct CheckMarkerCall {
  static constexpr ScriptId kId = ScriptId::check_marker;
  std::string_view marker_key{};
  [[nodiscard]] std::array<std::string_view, 1> keys() const { return {marker_key}; }
  [[nodiscard]] std::array<std::string_view, 0> args() const { return {}; }
};

// check_slot_markers: check_marker over every slot's marker (per slot).
// The last argument is the tag of a slot the server serves: where the
// server notes that its markers were checked after a promotion. A Redis
// Cluster's link puts one of each server's own slots there
// (SessionSetup::opening_slot_tag).
struct CheckSlotMarkersCall {
  static constexpr ScriptId kId = ScriptId::check_slot_markers;
  std::string_view key_prefix{}, slot_tag{};
  [[nodiscard]] std::array<std::string_view, 0> keys() const { return {}; }
  [[nodiscard]] std::array<std::string_view, 2> args() const { return {key_prefix, slot_tag}; }
};

// declare_new_slots: `redlock init`'s mark on a server of a quorum whose
// keys are per slot, over the slots it has (or, with mark false, the
// question alone).
struct DeclareNewSlotsCall {
  static constexpr ScriptId kId = ScriptId::declare_new_slots;
  std::string_view key_prefix{}, marker_value{}, first_init_prefix{};
  bool mark = false;
  std::string_view lock_pattern{}, permit_pattern{};  // slot_lock_pattern, slot_permit_pattern
  std::span<const std::string_view> slot_tags{};
  [[nodiscard]] std::array<std::string_view, 0> keys() const { return {}; }
  [[nodiscard]] std::vector<std::string_view> args() const {
    std::vector<std::string_view> out{key_prefix,       marker_value, first_init_prefix,
                                      mark ? "1" : "0", lock_pattern, permit_pattern};
    out.insert(out.end(), slot_tags.begin(), slot_tags.end());
    return out;
  }
};

// acquire_all: every resource of a set granted or none.
struct AcquireAllCall {
  static constexpr ScriptId kId = ScriptId::acquire_all;
  std::string_view marker_key{}, recovering_key{}, fence_key{};
  std::span<const std::string> lock_keys{};
  std::string_view value{}, ttl_ms{};
  bool amnesia_defence = true;
  bool fenced = false;
  std::span<const std::string> fence_fields{};  // one per lock key
  [[nodiscard]] std::vector<std::string_view> keys() const {
    std::vector<std::string_view> out{marker_key, recovering_key, fence_key};
    out.insert(out.end(), lock_keys.begin(), lock_keys.end());
    return out;
  }
  [[nodiscard]] std::vector<std::string_view> args() const {
    std::vector<std::string_view> out{value, ttl_ms, flag_text(amnesia_defence), flag_text(fenced)};
    out.insert(out.end(), fence_fields.begin(), fence_fields.end());
    return out;
  }
};

// extend_all: every key of a set extended or none.
struct ExtendAllCall {
  static constexpr ScriptId kId = ScriptId::extend_all;
  std::span<const std::string> lock_keys{};
  std::string_view value{}, ttl_ms{};
  [[nodiscard]] std::vector<std::string_view> keys() const {
    return {lock_keys.begin(), lock_keys.end()};
  }
  [[nodiscard]] std::array<std::string_view, 2> args() const { return {value, ttl_ms}; }
};

// One key release_all frees, with where its release is heard.
struct ReleasedKey {
  std::string key;
  std::string channel;      // "" publishes nothing
  std::string waiting_set;  // "" for none
};

// release_all: every key of a set that holds the value deleted.
struct ReleaseAllCall {
  static constexpr ScriptId kId = ScriptId::release_all;
  std::string_view marker_key{}, recovering_key{};
  std::string_view value{};
  std::span<const ReleasedKey> released{};
  [[nodiscard]] std::vector<std::string_view> keys() const {
    std::vector<std::string_view> out{marker_key, recovering_key};
    for (const ReleasedKey& each : released) out.emplace_back(each.key);
    return out;
  }
  [[nodiscard]] std::vector<std::string_view> args() const {
    std::vector<std::string_view> out{value};
    for (const ReleasedKey& each : released) {
      out.emplace_back(each.channel);
      out.emplace_back(each.waiting_set);
    }
    return out;
  }
};

// adopt_all: the members a set took one at a time made one lock.
struct AdoptAllCall {
  static constexpr ScriptId kId = ScriptId::adopt_all;
  std::string_view marker_key{}, recovering_key{};
  std::span<const std::string> lock_keys{};
  std::string_view value{}, ttl_ms{};
  bool amnesia_defence = true;
  std::span<const std::string> held_values{};  // one per lock key
  [[nodiscard]] std::vector<std::string_view> keys() const {
    std::vector<std::string_view> out{marker_key, recovering_key};
    out.insert(out.end(), lock_keys.begin(), lock_keys.end());
    return out;
  }
  [[nodiscard]] std::vector<std::string_view> args() const {
    std::vector<std::string_view> out{value, ttl_ms, flag_text(amnesia_defence)};
    out.insert(out.end(), held_values.begin(), held_values.end());
    return out;
  }
};

// fence_all: one token stored in every field or none.
struct FenceAllCall {
  static constexpr ScriptId kId = ScriptId::fence_all;
  std::string_view marker_key{}, recovering_key{}, fence_key{};
  bool amnesia_defence = true;
  std::string_view token{};
  std::span<const std::string> fields{};
  [[nodiscard]] std::array<std::string_view, 3> keys() const {
    return {marker_key, recovering_key, fence_key};
  }
  [[nodiscard]] std::vector<std::string_view> args() const {
    std::vector<std::string_view> out{flag_text(amnesia_defence), token};
    out.insert(out.end(), fields.begin(), fields.end());
    return out;
  }
};

// permit_acquire: the first free permit of a semaphore.
struct PermitAcquireCall {
  static constexpr ScriptId kId = ScriptId::permit_acquire;
  std::string_view marker_key{}, recovering_key{}, fence_key{}, count_key{};
  std::string_view value{}, ttl_ms{};
  bool amnesia_defence = true;
  std::string_view permits{}, first_permit{};
  std::string_view permit_key_prefix{};
  std::string_view fence_field_prefix{};  // "" unfenced
  [[nodiscard]] std::array<std::string_view, 4> keys() const {
    return {marker_key, recovering_key, fence_key, count_key};
  }
  [[nodiscard]] std::array<std::string_view, 7> args() const {
    return {value,
            ttl_ms,
            flag_text(amnesia_defence),
            permits,
            first_permit,
            permit_key_prefix,
            fence_field_prefix};
  }
};

// permit_extend: one permit kept, and the count recorded as long.
struct PermitExtendCall {
  static constexpr ScriptId kId = ScriptId::permit_extend;
  std::string_view permit_key{}, count_key{};
  std::string_view value{}, ttl_ms{}, permits{};
  [[nodiscard]] std::array<std::string_view, 2> keys() const { return {permit_key, count_key}; }
  [[nodiscard]] std::array<std::string_view, 3> args() const { return {value, ttl_ms, permits}; }
};

// inspect, of a lock: its key, its holder, its counter.
struct InspectLockCall {
  static constexpr ScriptId kId = ScriptId::inspect;
  std::string_view lock_key{}, fence_key{}, fence_field{};
  [[nodiscard]] std::array<std::string_view, 2> keys() const { return {lock_key, fence_key}; }
  [[nodiscard]] std::array<std::string_view, 2> args() const { return {"lock", fence_field}; }
};

// inspect, of a semaphore: its count and every permit.
struct InspectPermitsCall {
  static constexpr ScriptId kId = ScriptId::inspect;
  std::string_view count_key{}, fence_key{};
  std::string_view permit_key_prefix{}, fence_field_prefix{}, permits{};
  [[nodiscard]] std::array<std::string_view, 2> keys() const { return {count_key, fence_key}; }
  [[nodiscard]] std::array<std::string_view, 4> args() const {
    return {"permits", permit_key_prefix, fence_field_prefix, permits};
  }
};

// read_acquire: one reader's share of a read-write lock.
struct ReadAcquireCall {
  static constexpr ScriptId kId = ScriptId::read_acquire;
  std::string_view marker_key{}, recovering_key{}, fence_key{}, lock_key{};
  std::string_view value{}, ttl_ms{};
  std::string_view fence_field{};  // "" unfenced
  bool amnesia_defence = true;
  [[nodiscard]] std::array<std::string_view, 4> keys() const {
    return {marker_key, recovering_key, fence_key, lock_key};
  }
  [[nodiscard]] std::array<std::string_view, 4> args() const {
    return {value, ttl_ms, fence_field, flag_text(amnesia_defence)};
  }
};

// read_release: one reader out.
struct ReadReleaseCall {
  static constexpr ScriptId kId = ScriptId::read_release;
  std::string_view lock_key{};
  std::string_view value{};
  std::string_view channel{};      // "" publishes nothing
  std::string_view waiting_set{};  // "" names no waiter
  [[nodiscard]] std::array<std::string_view, 1> keys() const { return {lock_key}; }
  [[nodiscard]] std::array<std::string_view, 3> args() const {
    return {value, channel, waiting_set};
  }
};

// announce: one PUBLISH (an elected leader's term). The channel goes as
// its key, which routes the call: on a cluster member, to the master of
// the channel's slot, where its shard channel's subscribers are.
struct AnnounceCall {
  static constexpr ScriptId kId = ScriptId::announce;
  std::string_view channel{}, message{};
  [[nodiscard]] std::array<std::string_view, 1> keys() const { return {channel}; }
  [[nodiscard]] std::array<std::string_view, 1> args() const { return {message}; }
};

// A fair lock's queue keys for one resource.
struct QueueKeys {
  std::string_view queue{}, due{}, claims{};
};

// fair_acquire: the mutex's try, granted only to the first live ticket.
struct FairAcquireCall {
  static constexpr ScriptId kId = ScriptId::fair_acquire;
  std::string_view marker_key{}, recovering_key{}, fence_key{}, lock_key{};
  QueueKeys queue{};
  std::string_view value{}, ttl_ms{};
  std::string_view fence_field{};  // "" unfenced
  bool amnesia_defence = true;
  std::string_view waiter_id{};
  std::string_view ticket{};  // "" before the waiter has one
  std::string_view entry_ttl_ms{};
  std::string_view counter_field{};  // "" for no draw
  [[nodiscard]] std::array<std::string_view, 7> keys() const {
    return {marker_key, recovering_key, fence_key, lock_key, queue.queue, queue.due, queue.claims};
  }
  [[nodiscard]] std::array<std::string_view, 8> args() const {
    return {value,     ttl_ms, fence_field,  flag_text(amnesia_defence),
            waiter_id, ticket, entry_ttl_ms, counter_field};
  }
};

// ticket_draw: one ticket drawn from a counter.
struct TicketDrawCall {
  static constexpr ScriptId kId = ScriptId::ticket_draw;
  std::string_view marker_key{}, recovering_key{}, fence_key{};
  std::string_view counter_field{};
  bool amnesia_defence = true;
  [[nodiscard]] std::array<std::string_view, 3> keys() const {
    return {marker_key, recovering_key, fence_key};
  }
  [[nodiscard]] std::array<std::string_view, 2> args() const {
    return {counter_field, flag_text(amnesia_defence)};
  }
};

// ticket_enqueue: a drawn ticket recorded as the waiter's place.
struct TicketEnqueueCall {
  static constexpr ScriptId kId = ScriptId::ticket_enqueue;
  std::string_view marker_key{}, recovering_key{}, fence_key{}, lock_key{};
  QueueKeys queue{};
  std::string_view counter_field{}, ticket{}, waiter_id{}, entry_ttl_ms{};
  bool amnesia_defence = true;
  std::string_view claim{};  // claim_argument(), "" for none
  [[nodiscard]] std::array<std::string_view, 7> keys() const {
    return {marker_key, recovering_key, fence_key, queue.queue, queue.due, lock_key, queue.claims};
  }
  [[nodiscard]] std::array<std::string_view, 6> args() const {
    return {counter_field, ticket, waiter_id, entry_ttl_ms, flag_text(amnesia_defence), claim};
  }
};

// fair_release: the release that serves the queue's first live waiter.
struct FairReleaseCall {
  static constexpr ScriptId kId = ScriptId::fair_release;
  std::string_view lock_key{};
  QueueKeys queue{};
  std::string_view marker_key{}, recovering_key{}, fence_key{};
  std::string_view value{};
  std::string_view channel{};        // "" for a release no one hears of
  std::string_view leaving_place{};  // the waiter id whose place goes, "" none
  std::string_view waiting_set{};    // the mutex waiters' line, "" none
  std::string_view counter_field{};  // "" for no draw
  bool amnesia_defence = true;
  std::string_view leaving_claim{};  // the waiter id whose claim of the value goes
  std::string_view pre_claim{};      // the releaser's pre-claim, "" none
  std::string_view next_place{};     // "<entry ttl ms>:<waiter id>", "" none
  [[nodiscard]] std::array<std::string_view, 7> keys() const {
    return {lock_key, queue.queue, queue.due, queue.claims, marker_key, recovering_key, fence_key};
  }
  [[nodiscard]] std::array<std::string_view, 9> args() const {
    return {value,         channel,       leaving_place,
            waiting_set,   counter_field, flag_text(amnesia_defence),
            leaving_claim, pre_claim,     next_place};
  }
};

// queue_leave: a waiter's entry out of sorted sets (and claim hashes).
struct QueueLeaveCall {
  static constexpr ScriptId kId = ScriptId::queue_leave;
  std::array<std::string_view, 3> sorted_sets{};  // the first `set_count` used
  std::size_t set_count = 0;
  std::string_view claims_hash{};  // "" for none
  std::string_view waiter_id{};
  [[nodiscard]] std::vector<std::string_view> keys() const {
    std::vector<std::string_view> out(sorted_sets.begin(), sorted_sets.begin() + set_count);
    if (!claims_hash.empty()) out.push_back(claims_hash);
    return out;
  }
  [[nodiscard]] std::array<std::string_view, 2> args() const {
    return {waiter_id, claims_hash.empty() ? "0" : "1"};
  }
};

// pass_turn: a rejoined releaser's turn handed on.
struct PassTurnCall {
  static constexpr ScriptId kId = ScriptId::pass_turn;
  std::string_view lock_key{}, waiting_set{}, value{};
  [[nodiscard]] std::array<std::string_view, 2> keys() const { return {lock_key, waiting_set}; }
  [[nodiscard]] std::array<std::string_view, 1> args() const { return {value}; }
};

// Any call above, laid out as its script reads it: the one encoding.
template <class Call>
[[nodiscard]] ScriptCall encode(const Call& call) {
  ScriptCall out;
  out.script = &script(Call::kId);
  const auto keys = call.keys();
  const auto args = call.args();
  out.keys.assign(keys.begin(), keys.end());
  out.args.assign(args.begin(), args.end());
  return out;
}

// Sends `call` on `link`, encoded before this returns (no copy kept).
template <class Call>
void send_to(NodeLink& link, const Call& call, bool require_replicas, TimePoint sent_at,
             std::shared_ptr<ResponseSink> sink, std::uint32_t tag) {
  const auto keys = call.keys();
  const auto args = call.args();
  Request request;
  request.script = &script(Call::kId);
  request.keys = std::span<const std::string_view>(keys.data(), keys.size());
  request.args = std::span<const std::string_view>(args.data(), args.size());
  request.require_replicas = require_replicas;
  request.sent_at = sent_at;
  request.sink = std::move(sink);
  request.tag = tag;
  link.send(std::move(request));
}

// Sends `call` on `link` as a cleanup (NodeLink's Request::cleanup).
template <class Call>
void send_cleanup_to(NodeLink& link, const Call& call, TimePoint expires_at) {
  const auto keys = call.keys();
  const auto args = call.args();
  Request request;
  request.script = &script(Call::kId);
  request.keys = std::span<const std::string_view>(keys.data(), keys.size());
  request.args = std::span<const std::string_view>(args.data(), args.size());
  request.cleanup = true;
  request.expires_at = expires_at;
  link.send(std::move(request));
}

}  // namespace redlock::detail
