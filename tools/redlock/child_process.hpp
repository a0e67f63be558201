// run's command: started in its own process group, watched until it ends.
//
// The child leads a new process group, so the whole tree it starts (a shell
// and its pipeline) can be signalled at once with kill(-pgid). It starts
// with run's original signal mask, and with SIGPIPE back at its default
// action when run only ignored it for its own sockets.
//
// supervise() waits in poll(2) on the signal channel, the loss wakeup and,
// after a loss, the grace deadline — never a busy loop — and:
//   * SIGINT / SIGTERM / SIGHUP to run are sent on to the child's group;
//   * an at-risk episode (when asked for) sends the chosen signal to the
//     group, once per episode, and nothing else;
//   * a loss sends SIGTERM to the group, then SIGKILL once the grace period
//     has passed; once the child has exited, whatever is left of its group
//     gets SIGKILL too (the lock no longer protects it). The child is
//     reaped only after that, so its process group id cannot have been
//     reused by then.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "redlock/types.hpp"
#include "signal_channel.hpp"

namespace redlock::cli {

struct ChildSpec {
  // argv[0] is looked up in PATH.
  std::vector<std::string> argv;
  // Variables to set (replacing inherited ones) and to remove.
  std::vector<std::pair<std::string, std::string>> set_environment;
  std::vector<std::string> unset_environment;
  // The child's signal mask.
  sigset_t signal_mask{};
  // Reset SIGPIPE to its default action in the child.
  bool default_sigpipe = false;
};

struct SpawnResult {
  pid_t pid = -1;
  int error = 0;  // errno from posix_spawnp when pid < 0
};

[[nodiscard]] SpawnResult spawn_in_new_group(const ChildSpec& spec);

struct SupervisionResult {
  // The exit code run reports for the child: its exit status, or 128+N when
  // signal N killed it.
  int exit_code = 0;
  // The loss wakeup fired while the child ran.
  bool lost = false;
  // SIGKILL was needed after the grace period.
  bool killed_after_grace = false;
  // The last signal passed on to the child's group.
  std::optional<int> forwarded_signal;
};

struct SupervisionHooks {
  // Called once, when the loss wakeup fires, before the group is signalled.
  std::function<void()> on_lost;
  // When set: each time this wakeup fires before a loss (an at-risk
  // episode began), `on_at_risk` is called and `at_risk_signal` is sent to
  // the group.
  const Wakeup* at_risk = nullptr;
  int at_risk_signal = 0;
  std::function<void()> on_at_risk;
  // Called when the grace period ran out and SIGKILL is sent.
  std::function<void()> on_grace_expired;
};

// Waits for the child (spawned by spawn_in_new_group) to end, then reaps
// it. `grace` is the delay between SIGTERM and SIGKILL after a loss.
[[nodiscard]] SupervisionResult supervise(pid_t child, SignalChannel& signals, const Wakeup& loss,
                                          Milliseconds grace, const SupervisionHooks& hooks);

}  // namespace redlock::cli
