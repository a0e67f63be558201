// What a client is built with besides its quorum configuration: the clock
// it measures validity on and where it records its metrics.
#pragma once

#include <memory>

#include "redlock/clock.hpp"
#include "redlock/metrics.hpp"

namespace redlock {

struct ClientOptions {
  // The time source; must outlive the client. Tests inject a manual clock.
  // Default: the process's steady clock.
  const MonotonicClock* clock = &steady_clock_source();
  // Where to record counters and latencies; shared to aggregate several
  // clients. Default (null): the client makes its own.
  std::shared_ptr<Metrics> metrics;
};

}  // namespace redlock
