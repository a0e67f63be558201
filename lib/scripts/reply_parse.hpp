// Turns node responses into NodeOutcomes: pure functions of hiredis reply
// trees, unit-tested by feeding RESP bytes through a redisReader.
#pragma once

#include <cstdint>

#include "protocol/fence_round.hpp"
#include "protocol/recovery_plan.hpp"
#include "redlock/inspection.hpp"
#include "redlock/outcome.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

// The response to the acquire script (and WAIT, when replicas are required).
// `min_replicas` is the node's requirement (0: none). `drawn`, for a fair
// attempt: a refusal may carry the ticket the node drew ({0, PTTL, ticket},
// fair_scripts.hpp), stored there (else 0); without it such a refusal is
// unexpected.
void parse_acquire_response(const NodeResponse& response, int min_replicas, NodeOutcome& out,
                            std::int64_t* drawn = nullptr);

// Where a ticket's record left the waiter on a node (ticket_enqueue's third
// element, fair_scripts.hpp).
enum class QueueState : std::uint8_t {
  behind,          // another waiter is first
  first_and_free,  // first, and the lock key does not exist
  granted,         // first, and the key holds the waiter's claim
  first_and_held,  // first, and the key is held
  held_behind,     // another waiter is first, and the key holds the claim
};
// The response to ticket_draw ({1, counter}) or ticket_enqueue ({1, T,
// state}): granted with the counter or T in fence_counter; `state` is
// ticket_enqueue's third element (behind for anything else; a third
// element outside the states is malformed).
void parse_ticket_response(const NodeResponse& response, NodeOutcome& out, QueueState& state);

// What a release that comes back (a client that will want the lock again)
// learnt: a mutex's rejoined place was taken; a fair lock's next ticket
// drawn (the node's counter), and whether the place it pre-claimed at that
// count is first in the node's queue with the key free.
struct Comeback {
  bool rejoined = false;
  std::uint64_t drawn = 0;
  bool first_and_free = false;
};
// The response to the extend or release script: 1 → `yes`, 0 → not_held;
// with `comeback` (a release that comes back), also 2 → `yes` and
// rejoined, and {1 or 0, counter} or {1 or 0, counter, 0 or 1} → `yes` or
// not_held, and drawn (and first_and_free for a last 1).
void parse_flag_response(const NodeResponse& response, NodeStatus yes, NodeOutcome& out,
                         Comeback* comeback = nullptr);

// Whether a token or ticket script's answer is the refusal of a node that
// awaits its second merge after a recovery (ReplyCode::unmerged).
[[nodiscard]] bool answers_unmerged(const NodeResponse& response) noexcept;

// The response to the fence script. Returns false (and fills `out` with the
// reason) for anything but a well-formed {stored, counter} reply; sets
// `*unmerged` when the node refused because it awaits its second merge
// after a recovery (a recovery round merges it).
[[nodiscard]] bool parse_fence_response(const NodeResponse& response, FenceAnswer& answer,
                                        NodeOutcome& out, bool* unmerged = nullptr);

// The response to the inspect script, for a lock (`permits` false) or a
// semaphore. Fills `out` (answered, detail, latency, key or permits);
// false for no answer or a malformed one.
bool parse_inspect_response(const NodeResponse& response, bool permits, NodeInspection& out);

// The response to the probe script; false when the node gave none (or a
// malformed one), which counts as "did not answer".
[[nodiscard]] bool parse_probe_response(const NodeResponse& response, NodeProbe& probe);

}  // namespace redlock::detail
