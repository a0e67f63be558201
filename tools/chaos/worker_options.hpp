// The command line of `redlock-chaos worker` (the harness writes it:
// runner_workers.cpp): where the quorum file, the history file and the
// protected resource are, and the client's workload.
#pragma once

#include <optional>
#include <string>

#include "lock_target.hpp"
#include "redlock/types.hpp"

namespace redlock::chaos {

struct WorkerOptions {
  std::string config_path;
  std::string history_path;
  std::string resource_host = "127.0.0.1";
  int resource_port = 0;
  int index = 0;
  bool fenced = false;
  Milliseconds ttl{1000};
  Milliseconds retry_delay{20};
  Milliseconds wait{0};
  Milliseconds critical_section{10};
  Milliseconds think{0};
  Milliseconds duration{3000};
  Milliseconds start_delay{0};
  double clock_rate = 1.0;
  bool renew = false;
  int max_renewals = 0;
  // Hold through a reentrant guard with a nested hold inside (worker_guard.hpp).
  bool reentrant = false;
  LockTarget target;
};

// argv[2..]: the flags; nullopt (with a message on stderr) when one is bad.
[[nodiscard]] std::optional<WorkerOptions> parse_worker_options(int argc, char** argv);

}  // namespace redlock::chaos
