// The contended case on the library's side: `workers` AsyncClients, each
// with its own connections, on ONE loop (as node-redlock's workers share
// one event loop), all locking one resource. Each worker loops: acquire
// (retried until acquired, contended_acquire()) -> empty critical section
// -> release. The library's release wake-ups are on, as by default: a
// waiter retries when a release is published instead of sleeping out its
// pause; node-redlock has no such thing and always sleeps.
//
// Timed window: from the `warmup`-th acquisition for `seconds`; an
// acquisition counts if the lock was held before the window closed. The
// first acquisition after it stops every worker at the end of its cycle.
//
// In the traced driver (handover_trace.hpp) the run also profiles the
// window: per acquisition, the attempts that failed on a held lock and the
// split votes, the courtesy pauses, the pauses that ran out and those a
// release cut short (wake-ups), what started each winning attempt, and
// where the time between one holder's release and the next grant went.
// Those figures come back as `profile`, one JSON field each.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "peer_settings.hpp"

namespace redlock::bench::peers {

struct ContendedFigures {
  double seconds = 0;
  std::uint64_t acquisitions = 0;
  // From calling acquire to holding the lock, µs, for every counted one.
  std::vector<double> waits_us;
  std::vector<std::uint64_t> per_worker;
  std::uint64_t attempts = 0;
  // The traced driver's figures (name, value), in the order printed; empty
  // in the plain driver.
  std::vector<std::pair<std::string, double>> profile;
};

struct ContendedResult {
  ContendedFigures figures;
  std::string error;  // empty on success
};

[[nodiscard]] ContendedResult run_contended(uv_loop_t* loop, const PeerSettings& settings);

}  // namespace redlock::bench::peers
