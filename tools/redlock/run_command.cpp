// `redlock run`: hold a lock for exactly as long as a command runs.
//
// Order matters here:
//   1. Signals are blocked and routed to a signalfd before the client's loop
//      thread exists (see signal_channel.hpp).
//   2. BlockingClient::lock() acquires and returns a Guard that renews the
//      lock on the loop thread; its on_lost callback only writes to an
//      eventfd — the main thread does all the work.
//   3. A termination signal that arrives while waiting for the lock cancels
//      the wait at once (a watcher thread reads the signalfd and requests
//      stop on the wait's stop_token) and ends run before the command
//      starts, after releasing whatever was acquired.
//   4. The command runs in its own process group; supervise() forwards
//      signals and enforces the loss → SIGTERM → grace → SIGKILL rule.
//   5. The lock is released however the command ended.
#include <poll.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <stop_token>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "first_use.hpp"
#include "quorum_setup.hpp"
#include "redlock/blocking_client.hpp"
#include "report.hpp"
#include "signal_channel.hpp"

namespace redlock::cli {
namespace {

constexpr Milliseconds kDefaultGrace{5000};
// --at-risk-signal: an episode begins with less than half the TTL left (a
// renewal every ttl / 3 has then been missed for at least ttl / 6).
constexpr double kAtRiskShare = 0.5;

// The termination signal pending since before the command started, if any.
std::optional<int> pending_termination(SignalChannel& signals) {
  std::optional<int> termination;
  while (const std::optional<int> signal_number = signals.next()) {
    if (*signal_number != SIGCHLD) termination = *signal_number;
  }
  return termination;
}

// Waits for the lock while a watcher thread turns a termination signal into
// a cancelled wait. Returns the guard and the signal that cancelled it (0
// when none did).
std::pair<Guard, int> lock_or_signal(BlockingClient& client, const Invocation& invocation,
                                     const GuardOptions& options, SignalChannel& signals,
                                     std::string& problem) {
  std::stop_source cancel_wait;
  std::atomic<int> received{0};
  const Wakeup waited(problem);
  std::thread watcher;
  if (waited.fd() >= 0) {
    watcher = std::thread([&] {
      pollfd fds[2] = {{signals.fd(), POLLIN, 0}, {waited.fd(), POLLIN, 0}};
      for (;;) {
        if (poll(fds, 2, -1) < 0) {
          if (errno == EINTR) continue;
          return;
        }
        if ((fds[1].revents & POLLIN) != 0) return;
        while (const std::optional<int> signal_number = signals.next()) {
          if (*signal_number == SIGCHLD) continue;
          received.store(*signal_number);
          cancel_wait.request_stop();
          return;
        }
      }
    });
  }
  Guard guard = lock_named(client, invocation, options, cancel_wait.get_token());
  if (watcher.joinable()) {
    waited.notify();
    watcher.join();
  }
  return {std::move(guard), received.load()};
}

// The variables that hold the nodes' passwords (password_env): the command
// gets the lock, not the credentials to the lock's nodes.
std::vector<std::string> password_variables(const QuorumConfig& config) {
  std::vector<std::string> names;
  for (const NodeConfig& node : config.nodes) {
    if (!node.password_env.empty()) names.push_back(node.password_env);
  }
  return names;
}

// The names, or the tokens, one per line (no newline after the last).
std::string one_per_line(const std::vector<Resource>& resources) {
  std::string text;
  for (const Resource& resource : resources) {
    if (!text.empty()) text += '\n';
    text += resource.str();
  }
  return text;
}

std::string one_per_line(const std::vector<std::uint64_t>& tokens) {
  std::string text;
  for (const std::uint64_t token : tokens) {
    if (!text.empty()) text += '\n';
    text += std::to_string(token);
  }
  return text;
}

ChildSpec child_spec(const Invocation& invocation, const Guard& guard, const SignalChannel& signals,
                     std::vector<std::string> hidden_variables) {
  const Lock lock = guard.lock();
  ChildSpec spec;
  spec.argv = invocation.command;
  spec.unset_environment = std::move(hidden_variables);
  spec.set_environment = {
      {"REDLOCK_RESOURCE", lock.resource.str()},
      {"REDLOCK_RESOURCES", one_per_line(lock.all_resources())},
      {"REDLOCK_VALUE", lock.value.str()},
      {"REDLOCK_VALIDITY_MS", std::to_string(guard.acquired().validity.count())},
  };
  if (lock.fence) {
    spec.set_environment.emplace_back("REDLOCK_FENCE", std::to_string(*lock.fence));
    spec.set_environment.emplace_back("REDLOCK_FENCES", lock.fences.empty()
                                                            ? std::to_string(*lock.fence)
                                                            : one_per_line(lock.fences));
  } else {
    // Never let an outer run's token leak into an unfenced inner one.
    spec.unset_environment.emplace_back("REDLOCK_FENCE");
    spec.unset_environment.emplace_back("REDLOCK_FENCES");
  }
  if (lock.permit) {
    spec.set_environment.emplace_back("REDLOCK_PERMIT", std::to_string(*lock.permit));
    spec.set_environment.emplace_back("REDLOCK_PERMITS", std::to_string(lock.permits));
  } else {
    // Nor an outer run's permit into an inner lock that is not one.
    spec.unset_environment.emplace_back("REDLOCK_PERMIT");
    spec.unset_environment.emplace_back("REDLOCK_PERMITS");
  }
  if (invocation.subcommand == Subcommand::campaign && lock.fence) {
    spec.set_environment.emplace_back("REDLOCK_TERM", std::to_string(*lock.fence));
  } else {
    spec.unset_environment.emplace_back("REDLOCK_TERM");
  }
  if (lock.shared) {
    spec.set_environment.emplace_back("REDLOCK_SHARED", "1");
  } else {
    spec.unset_environment.emplace_back("REDLOCK_SHARED");
  }
  spec.signal_mask = signals.original_mask();
  // main() ignores SIGPIPE for run's sockets; the command gets it back.
  spec.default_sigpipe = sigpipe_was_default();
  return spec;
}

std::string describe(const std::error_code& error) {
  if (!error) return "lost";
  return std::string(error_name(error)) + ": " + error.message();
}

}  // namespace

int run_command(const Invocation& invocation) {
  std::string problem;
  std::optional<SignalChannel> signals = SignalChannel::open(problem);
  if (!signals) {
    print_error("run: " + problem);
    return exit_code::os_error;
  }
  const Wakeup loss(problem);
  if (loss.fd() < 0) {
    print_error("run: " + problem);
    return exit_code::os_error;
  }
  const Wakeup at_risk(problem);
  if (at_risk.fd() < 0) {
    print_error("run: " + problem);
    return exit_code::os_error;
  }
  std::optional<QuorumConfig> config = load_quorum(invocation);
  if (!config) return exit_code::config;
  // The process ends with the release (release_command says why).
  config->lock.release_at_majority = false;
  if (const std::string ttl_error = ttl_problem(invocation, *config); !ttl_error.empty()) {
    print_error("run: " + ttl_error);
    return exit_code::usage;
  }
  const std::string target = lock_target(invocation);
  const std::string verb(name_of(invocation.subcommand));
  const Milliseconds grace = invocation.grace.value_or(kDefaultGrace);
  std::vector<std::string> hidden_variables = password_variables(*config);

  const QuorumConfig quorum = *config;
  BlockingClient client(std::move(*config));
  GuardOptions options;
  options.acquire = acquire_options(invocation);
  options.on_lost = [&loss](std::error_code) { loss.notify(); };
  if (invocation.at_risk_signal) {
    options.at_risk_share = kAtRiskShare;
    options.on_at_risk = [&at_risk](bool begins) {
      if (begins) at_risk.notify();
    };
  }
  auto [guard, cancelling_signal] = lock_or_signal(client, invocation, options, *signals, problem);
  if (cancelling_signal != 0) {
    (void)guard.release();
    print_error(verb + " " + target + ": " + signal_name(cancelling_signal) +
                " received while waiting for the lock; command not started");
    return exit_code::signal_base + cancelling_signal;
  }
  if (!guard) {
    const std::error_code error = guard.error() ? guard.error() : make_error_code(errc::no_quorum);
    const std::string mismatch = permits_mismatch(invocation, guard.acquired().nodes);
    print_error(verb + " " + target + ": " + (mismatch.empty() ? describe(error) : mismatch));
    (void)print_node_faults("acquire", guard.acquired().nodes);
    print_first_use_note(quorum, guard.acquired().nodes, keys_named(invocation));
    return exit_code_for(error);
  }

  if (const std::optional<int> signal_number = pending_termination(*signals)) {
    (void)guard.release();
    print_error(verb + " " + target + ": " + signal_name(*signal_number) +
                " received while acquiring; released the lock, command not started");
    return exit_code::signal_base + *signal_number;
  }

  const SpawnResult spawned =
      spawn_in_new_group(child_spec(invocation, guard, *signals, std::move(hidden_variables)));
  if (spawned.pid < 0) {
    (void)guard.release();
    print_error("run: cannot run " + printable(invocation.command.front()) + ": " +
                std::system_category().message(spawned.error));
    return spawned.error == ENOENT ? exit_code::command_not_found
                                   : exit_code::command_not_executable;
  }

  SupervisionHooks hooks;
  hooks.on_lost = [&] {
    const std::string group = "process group " + std::to_string(spawned.pid);
    print_error(verb + " " + target + ": lock lost while the command ran (" +
                describe(guard.error()) + "); " +
                (grace.count() == 0 ? "sending SIGKILL to " + group
                                    : "sending SIGTERM to " + group + ", SIGKILL after " +
                                          std::to_string(grace.count()) + " ms"));
    // What each node answered to the renewal that lost it, as a failed
    // acquire names its nodes.
    (void)print_node_answers("renew", guard.loss_nodes());
  };
  if (invocation.at_risk_signal) {
    hooks.at_risk = &at_risk;
    hooks.at_risk_signal = *invocation.at_risk_signal;
    hooks.on_at_risk = [&] {
      print_error(verb + " " + target +
                  ": lock at risk (renewals late, less than half the TTL left); sending " +
                  signal_name(*invocation.at_risk_signal) + " to process group " +
                  std::to_string(spawned.pid));
    };
  }
  hooks.on_grace_expired = [&] {
    print_error(verb + " " + target + ": the command outlived the " +
                std::to_string(grace.count()) + " ms grace period; sent SIGKILL");
  };
  const SupervisionResult ended = supervise(spawned.pid, *signals, loss, grace, hooks);

  // A loss signalled as the command ended, or a deadline that passed
  // unnoticed, still means the command may have run unprotected.
  const bool lost = ended.lost || loss.take() || !guard.valid();
  const std::error_code loss_reason = guard.error();
  const std::vector<NodeOutcome> loss_nodes = guard.loss_nodes();
  const ReleaseResult released = guard.release();
  if (lost) {
    if (!ended.lost) {
      print_error(verb + " " + target + ": lock lost before the command ended (" +
                  describe(loss_reason) + ")");
      (void)print_node_answers("renew", loss_nodes);
    }
    return exit_code::lock_lost;
  }
  (void)print_node_faults("release", released.nodes);
  return ended.exit_code;
}

}  // namespace redlock::cli
