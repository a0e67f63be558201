// The checker: invariants C1-C17 (docs/chaos.md, "The checker") over a merged
// history. Pure logic: no I/O, no clock; tested on synthetic histories.
//
// What each invariant reads (see history.hpp for the event keys). An
// operation is its invoke and its first completion, matched by (proc, kind,
// op, key); a holding is everything about one lock value (acquire, extends,
// release).
//   C1  acquire ok: at least floor(N/2)+1 nodes with status "granted"
//       (N from the run event's count; without one, from the highest node
//       index replied); for a lock over several resources "extended"
//       counts too, the answer of the round that adopts a waiting set's
//       members as one lock (acquire_reply_grants, history.hpp).
//   C2  acquire ok: 0 < validity_ms <= ttl_ms - drift_ms; the claimed
//       deadline_t is not after start_t + (ttl_ms - drift_ms) ms (1 ms
//       tolerance): validity is ttl - elapsed - drift with elapsed counted
//       from the attempt's start; and t < start_t + (ttl_ms - drift_ms) ms.
//       The ok event's t only bounds the quorum time from above (the
//       callback may run late), so elapsed is not measured to t. The last
//       two need start_t.
//   C3  windows [acquire ok t, deadline] per holding (value), the deadline
//       (deadline_t, else start_t + validity_ms) raised by each extend ok's
//       deadline_t and cut by the release invoke: no two holdings' windows
//       overlap where they claim the same key. A holding claims each name
//       of its resources (a lock over several, or a plain lock among them),
//       or its semaphore's permit (resources[0], permit), or else the run's
//       one resource (the acquire's key, normally none).
//   C4  resource ops without a token: invoke and completion inside the
//       window of the holding named by their value (a failed op changed
//       nothing and is skipped).
//   C5  no two acquire ok events share a token on a key they both claim
//       (each resource of a lock over several has its own token: tokens;
//       a permit's token is its own).
//   C6  acquire ok A at t_A, acquire invoke B (of a later holding) after
//       t_A, on a key both claim  =>  token_B > token_A there.
//   C7  accepted fenced resource ops: in completion order, a token below
//       the highest token accepted before that op's invoke is a violation;
//       the resource snapshot's log (entries "proc:op:token:value") is
//       non-decreasing in token.
//   C8  the resource snapshot's counter equals the number of accepted
//       writes (plus at most the indeterminate ones: info or no
//       completion), and every accepted append's entry is in the log.
//   C9  a release reports "released" only on nodes its holding was granted
//       or extended on, or where its acquire got no answer (timeout,
//       pending, unreachable: the SET may have landed after the library
//       stopped waiting, and deleting one's own value is safe).
//   C10 after the run (snapshot events of nodes: target "n<i>", one per
//       lock key, with its value and pttl_ms; no value = nothing held): a
//       value left on a node must not have an expiry longer than the TTL
//       (pttl -1 or > max ttl_ms is a violation), and a value whose holding
//       released with that node answering "released" or "not_held" is a
//       violation.
//   C11 a probe acquire after the last heal event succeeded within its
//       budget_ms (ok t - invoke t); and for every nemesis ok event with
//       budget_ms (the end of a fault that asks for progress), each client
//       its target names ("c0->n*": c0, "c*->...": every client) has an
//       acquire ok in (t, t + budget_ms]. A budget that runs past the last
//       heal is not judged.
//   C12 extend ok: at least floor(N/2)+1 nodes "extended"; t not after
//       the holding's deadline at invoke time; number of extend oks of the
//       holding <= max_renewals when that is > 0. A renewal seen on a guard
//       (renewals > 0: no invoke, no node replies) counts as `renewals`
//       extensions for the cap, and its deadline is at most ttl_ms past the
//       deadline it extended (the renewal began before the lock ran out);
//       its quorum is not seen, so not checked.
//   C13 acquire ok with a permit: the permit is below its permits count,
//       and at no moment are more windows of one semaphore (resources[0])
//       open than its count (the smallest count its holders recorded).
//   C14 nested holds (nest, unnest, lost events; a nested hold is named by
//       proc, op and nested, its holding by the acquire of that proc and
//       op): it begins inside the holding's window (C3's) with its value
//       and token; its nest completion ran no acquire round (attempts 0)
//       and has no node replies; its resource ops that did not fail start
//       and complete inside the window, fenced or not; it ends inside the
//       window or has a lost event at or before its end; the first lost
//       event with detail "on_lost" of any hold of the holding is matched by
//       one of every hold open at that moment (the outer hold from its
//       acquire ok to its release invoke).
//   C15 leader acquires (leader): no two leaders' windows overlap, and each
//       leader's term (token) is above every earlier leader's.
//   C16 acquire ok with ticket, ticket_drawn_t and ticket_recorded_t, per
//       resource: a waiter that began drawing after another's ticket was
//       recorded acquires after it (unless that one was paused in
//       between: nemesis "pause" or "pause-client" of it) with a larger
//       ticket.
//   C17 acquire ok with places: for each place (a member, its recorded_t),
//       no client other than the set's has two acquire oks claiming that
//       member in (recorded_t, the set's ok t), unless the set's client
//       was paused between recorded_t and the second.
//
// Findings carry times as ms since the run event (when there is one).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "history.hpp"

namespace redlock::chaos {

inline constexpr int kInvariantCount = 17;

// "C1".."C17" for index 0..16.
[[nodiscard]] std::string_view invariant_id(int index) noexcept;
// One line: what the invariant says.
[[nodiscard]] std::string_view invariant_title(int index) noexcept;
// Index for "C1".."C17", -1 otherwise.
[[nodiscard]] int invariant_index(std::string_view id) noexcept;

enum class Verdict {
  holds,           // checked, no violation
  violated,        // at least one finding
  not_applicable,  // nothing in the history to check (e.g. C5 in an unfenced run)
};

[[nodiscard]] std::string_view to_string(Verdict verdict) noexcept;

struct Finding {
  int invariant = 0;    // index 0..16
  std::int64_t t = 0;   // reference time where it shows (ns)
  std::string proc;     // the process it concerns ("" when none)
  std::string message;  // one line, human readable
};

struct CheckResult {
  std::array<Verdict, kInvariantCount> verdicts{};
  std::vector<Finding> findings;  // ordered by t
  [[nodiscard]] bool violated(int index) const noexcept {
    return verdicts.at(static_cast<std::size_t>(index)) == Verdict::violated;
  }
};

[[nodiscard]] CheckResult check_history(const History& history);

}  // namespace redlock::chaos
