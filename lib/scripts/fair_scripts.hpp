// The Lua of the fair lock (docs/algorithm.md, "Fair locks"): waiters are
// ordered by tickets drawn from the quorum, and each node grants the lock
// only to the lowest live ticket it knows. A resource's queue on a node is
// two sorted sets, `{prefix}queue:{R}` (waiter id → ticket) and
// `{prefix}queue-due:{R}` (waiter id → deadline on the node's clock); its
// ticket counter is the fence hash's field `queue:{R}`, so the amnesia
// defence's recovery restores it with the fencing counters. The lock key
// is the mutex's: exclusion still rests on its SET NX, and a queue fault
// costs fairness, never exclusion. scripts.cpp puts these in the one table.
#pragma once

#include <string_view>

namespace redlock::detail {

// The queue's helpers, after the readers' helpers (`now` is node_ms()):
//   keep_place(queue, due, ticket, id, now, ttl) records or renews a
//   waiter's place until now + ttl ms (the queue's keys live twice that);
//   drop_lapsed(queue, due, now) drops the places past their deadline;
//   first_place(queue) is the first place's id (nil: none, or unreadable).
//   The first two answer the error of their first command, if any.
extern const std::string_view kFairQueue;
// fair_acquire — opens with the node rules, the readers' helpers and the
// queue's.
//   KEYS: node marker, recovering key, fence hash, lock key, queue, due.
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
//   queue's. KEYS: node marker,
//   recovering key, fence hash, queue, due, lock key. ARGV: counter field,
//   ticket T, waiter id, queue entry ttl ms, amnesia defence. Raises the
//   counter to T (a max-register: a ticket drawn after this one is
//   recorded is larger) and records the waiter: {1, T, 1 when the waiter
//   is now the first live one in the queue and the lock key does not
//   exist, else 0}, or the node rules' refusal. (First and free: the
//   release came before the record, named someone else or no one, and
//   will not name this waiter; it should attempt now.)
extern const std::string_view kTicketEnqueueBody;
// fair_release — opens with the readers' helpers, readers_or, name_next
//   and the queue's helpers. KEYS: lock key, queue, due. ARGV: value, release channel
//   ("" for a release no one hears of), waiter id, the mutex waiters'
//   waiting set. The waiter's entry goes, then the mutex's release of the
//   value: 1 when the value was deleted, else 0. A release heard of drops
//   the places past their deadline and names the first live waiter of the
//   queue, as the mutex's line names its first ("<number> <value>" on the
//   wake channel its id begins with), and names the next mutex waiter in
//   line; only when it named no fair waiter (an empty queue, an id without
//   a wake channel, or a wake channel no one listens on at this node) does
//   it publish the value on the release channel, which every fair waiter
//   of every client also listens on. With three more KEYS (node marker,
//   recovering key, fence hash) and ARGV (counter field, amnesia defence),
//   a release that deleted the value also draws the releaser's next
//   ticket, as ticket_draw would (and under its node rules): {1, counter}
//   (docs/algorithm.md, "Fair locks": the next ticket drawn in the
//   release).
extern const std::string_view kFairReleaseBody;
// queue_leave — KEYS: the sorted sets that hold the waiter (a fair lock's
//   queue and due, or a mutex's waiting line). ARGV: waiter id. Its entry
//   goes from each (an acquire that gave up, or won while some node still
//   lined it up); 1.
extern const std::string_view kQueueLeaveBody;

}  // namespace redlock::detail
