// The Lua of the fair lock (docs/algorithm.md, "Fair locks"): waiters are
// ordered by tickets drawn from the quorum, and each node grants the lock
// only to the lowest live ticket it knows. A resource's queue on a node is
// two sorted sets, `{prefix}queue:{R}` (waiter id → ticket) and
// `{prefix}queue-due:{R}` (waiter id → deadline on the node's clock), and
// a hash, `{prefix}queue-claim:{R}` (waiter id → its claim: the value a
// release may grant it, "<ttl ms>:<claim tag>:<amnesia defence>:<value>");
// its ticket counter is the fence hash's field `queue:{R}`, so the amnesia
// defence's recovery restores it with the fencing counters. The lock key
// is the mutex's: exclusion still rests on the key being set only while it
// is free, and a queue fault costs fairness, never exclusion. scripts.cpp
// puts these in the one table.
#pragma once

#include <string_view>

namespace redlock::detail {

// The queue's helpers, after the readers' helpers (`now` is node_ms()):
//   keep_place(queue, due, ticket, id, now, ttl) records or renews a
//   waiter's place until now + ttl ms (the queue's keys live twice that);
//   drop_lapsed(queue, due, claims, now) drops the places past their
//   deadline, and their claims;
//   first_place(queue) is the first place's id (nil: none, or unreadable);
//   read_claim(claim) is a claim's ttl, tag, defence flag and value (nil:
//   none, or malformed);
//   serve_queue(...) serves one freed key's line, and serve_freed(freed,
//   marker, recovering) the lines of every key a release freed (the plain
//   release and release_all share it).
//   The first two answer the error of their first command, if any.
extern const std::string_view kFairQueue;
// fair_acquire — opens with the node rules, the readers' helpers and the
// queue's.
//   KEYS: node marker, recovering key, fence hash, lock key, queue, due,
//   claims.
//   ARGV: value, ttl ms, fence field ("" unfenced), amnesia defence, waiter
//   id, ticket ("" before the waiter has one), queue entry ttl ms, the
//   ticket counter's field ("" for no draw). Drops the waiters past their
//   deadline; with a ticket, (re)records the waiter's entry and deadline;
//   refuses {0, the lock's PTTL} while another waiter is first in the
//   queue; else answers as the mutex's acquire. A refusal with a counter
//   field also draws the waiter's ticket there, as ticket_draw does, and
//   answers {0, PTTL, the counter after HINCRBY 1}: a waiter refused by a
//   majority has drawn its ticket in the same round.
extern const std::string_view kFairAcquireBody;
// ticket_draw — opens with the node rules. KEYS: node marker, recovering
//   key, fence hash. ARGV: counter field, amnesia defence. {1, the counter
//   after HINCRBY 1}, or the node rules' refusal.
extern const std::string_view kTicketDrawBody;
// ticket_enqueue — opens with the node rules, the readers' helpers and the
//   queue's. KEYS: node marker, recovering key, fence hash, queue, due,
//   lock key, claims. ARGV: counter field, ticket T, waiter id, queue entry
//   ttl ms, amnesia defence, claim ("" for none). Raises the counter to T
//   (a max-register: a ticket drawn after this one is recorded is larger)
//   and records the waiter: {1, T, state}, or the node rules' refusal.
//   state: 0 another waiter is first; 1 the waiter is first and the lock
//   key does not exist (first and free: the release came before the
//   record, named someone else or no one, and will not name this waiter;
//   it should attempt now); 2 the waiter is first and the key holds its
//   claim's value (set now, when it was free: granted); 3 the waiter is
//   first and the key is held; 4 another waiter is first and the key holds
//   this waiter's claim (granted before the earlier place came: to give
//   back). A claim not granted now is kept for the
//   release that frees the key (fair_release).
extern const std::string_view kTicketEnqueueBody;
// fair_release — opens with the readers' helpers, readers_or, name_next
//   and the queue's helpers. KEYS: lock key, queue, due, claims, node
//   marker, recovering key, fence hash. ARGV: value, release channel ("" for
//   a release no one hears of), the waiter id whose place goes ("" none),
//   the mutex waiters' waiting set, the ticket counter field ("" for no
//   draw), amnesia defence, the waiter id whose claim of this value goes
//   ("" none), the releaser's pre-claim ("" none) and next place
//   ("<entry ttl ms>:<waiter id>"). The place goes, the claim goes if it claims this value, then
//   the mutex's release of the value: 1 when the value was deleted, else 0.
//   A release heard of drops the places past their deadline and serves the
//   first live waiter of the queue: if it left a claim and the node rules
//   (under the claim's defence flag) allow, the key is set to the claim's
//   value for its ttl and "<number>+<claim tag>:<its place's ticket>
//   <value>" is published on the waiter's wake channel (a grant: the waiter counts this node's vote
//   without an attempt); without a claim, "<number> <value>" names it, as
//   the mutex's line names its first. A grant no one hears is taken back
//   (the key deleted again). Only when it served no fair waiter does it
//   publish the value on the release channel, which every fair waiter of
//   every client also listens on; unless it granted, it names the next
//   mutex waiter in line. With a counter field, a release that deleted the
//   value (or did not hold it: see below) also draws the releaser's next ticket, as ticket_draw
//   would (and under its node rules): {1, counter} (docs/algorithm.md, "Fair locks": the next
//   ticket drawn in the release); with a pre-claim, the releaser's next place is also recorded at
//   that count with the pre-claim as its claim: {1, counter, 1 when that place is first and the key
//   free, else 0}. A node that did not hold the value draws all the same (and records the
//   pre-claim), answering {0, counter[, 0 or 1]}, so that the nodes' counters count the same draws.
extern const std::string_view kFairReleaseBody;
// queue_leave — KEYS: the sorted sets that hold the waiter (a fair lock's
//   queue and due, or a mutex's waiting line), then ARGV[2] (default 0)
//   hashes (a fair lock's claims). ARGV: waiter id, the number of hashes.
//   Its entry goes from each (an acquire that gave up, or won while some
//   node still lined it up); 1.
extern const std::string_view kQueueLeaveBody;

}  // namespace redlock::detail
