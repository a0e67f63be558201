// The reentrant chaos client (`[lock] reentrant = true`, docs/chaos.md
// "Reentrant holds"): the worker of worker.hpp, but holding through the
// library's guards (BlockingClient::lock with GuardOptions::reentrant),
// which renew by themselves.
//
// Each holding: lock() — the outer hold — then read the counter; a second
// lock() of the same lock on the same thread — a nested hold, joined with
// no round trip — then the critical section's work, the validity check and
// the counter's write under it; the nested hold ends; the log append under
// the outer hold (validity checked again); the outer hold ends (the
// release). It records the nested hold's begin (nest), its end (unnest),
// the resource operations under it (their `nested` id), every renewal it
// sees on the guard (extend ok with `renewals`) and every loss a hold
// observes: through its own on_lost (on the client's loop thread) or at a
// check of the guard before a use and at the hold's end. The careful
// client: no use without validity left, and the work stops when the nested
// hold is told of the loss.
//
// The harness protocol is worker.hpp's; the pause points are after-acquire,
// after-nest (just after the nested hold began), before-write (after the
// check under the nested hold) and before-release. No in-flight: the
// guard's acquire runs on the client's own thread.
#pragma once

#include "redlock/config.hpp"
#include "worker_options.hpp"

namespace redlock::chaos {

int run_guard_worker(const WorkerOptions& options, QuorumConfig config);

}  // namespace redlock::chaos
