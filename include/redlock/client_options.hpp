// What a client is built with besides its quorum configuration: the clock
// it measures validity on and where it records its metrics.
#pragma once

#include <memory>

#include "redlock/clock.hpp"
#include "redlock/metrics.hpp"
#include "redlock/types.hpp"

namespace redlock {

struct ClientOptions {
  // The time source; must outlive the client. Tests inject a manual clock.
  // Default: the process's steady clock.
  const MonotonicClock* clock = &steady_clock_source();
  // Where to record counters and latencies; shared to aggregate several
  // clients. Default (null): the client makes its own.
  std::shared_ptr<Metrics> metrics;
  // How often a connected node's persistence settings are read again
  // (CONFIG GET), besides at every connect: a node whose appendfsync is
  // changed at run time is seen within this interval, by NodeHealth and by
  // `strict_persistence`. Default 5 s.
  Milliseconds persistence_recheck{5000};
};

}  // namespace redlock
