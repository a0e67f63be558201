#include "child_process.hpp"

#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "exit_codes.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace redlock::cli {
namespace {

// The name of an environment entry "NAME=value".
std::string_view entry_name(std::string_view entry) { return entry.substr(0, entry.find('=')); }

std::vector<std::string> child_environment(const ChildSpec& spec) {
  std::vector<std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view name = entry_name(*entry);
    const auto replaced = [&](const std::pair<std::string, std::string>& variable) {
      return variable.first == name;
    };
    if (std::any_of(spec.set_environment.begin(), spec.set_environment.end(), replaced) ||
        std::find(spec.unset_environment.begin(), spec.unset_environment.end(), name) !=
            spec.unset_environment.end()) {
      continue;
    }
    environment.emplace_back(*entry);
  }
  for (const auto& [name, value] : spec.set_environment) {
    std::string entry = name;
    entry += '=';
    entry += value;
    environment.push_back(std::move(entry));
  }
  return environment;
}

// NULL-terminated char* views of `strings`, for exec. The strings must
// outlive the result.
std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Whether `child` has exited, without reaping it (WNOWAIT): while the
// zombie exists its pid, and so its process group id, stay reserved.
bool has_exited(pid_t child) {
  siginfo_t info{};
  for (;;) {
    if (waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOHANG | WNOWAIT) == 0) {
      return info.si_pid == child;
    }
    if (errno != EINTR) return true;  // ECHILD: nothing left to wait for
  }
}

int reap(pid_t child) {
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return exit_code::os_error;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return exit_code::signal_base + WTERMSIG(status);
  return exit_code::os_error;
}

// No SIGKILL scheduled. (A sentinel rather than std::optional: GCC 12 at
// -O2 warns falsely that an optional time_point may be uninitialized.)
constexpr SteadyClock::time_point kNoDeadline = SteadyClock::time_point::max();

// Milliseconds until `deadline`, rounded up, for poll(2); -1 without one.
int poll_timeout(SteadyClock::time_point deadline) {
  if (deadline == kNoDeadline) return -1;
  const auto left = std::chrono::ceil<Milliseconds>(deadline - SteadyClock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 24LL * 3600 * 1000));
}

}  // namespace

SpawnResult spawn_in_new_group(const ChildSpec& spec) {
  std::vector<std::string> arguments = spec.argv;
  std::vector<std::string> environment = child_environment(spec);
  std::vector<char*> argv = c_strings(arguments);
  std::vector<char*> envp = c_strings(environment);

  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK;
  posix_spawnattr_setpgroup(&attributes, 0);  // a new group, led by the child
  posix_spawnattr_setsigmask(&attributes, &spec.signal_mask);
  if (spec.default_sigpipe) {
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    flags = static_cast<short>(flags | POSIX_SPAWN_SETSIGDEF);
  }
  posix_spawnattr_setflags(&attributes, flags);

  SpawnResult result;
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], nullptr, &attributes, argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) {
    result.error = rc;
    return result;
  }
  result.pid = pid;
  return result;
}

SupervisionResult supervise(pid_t child, SignalChannel& signals, const Wakeup& loss,
                            Milliseconds grace, const SupervisionHooks& hooks) {
  SupervisionResult result;
  SteadyClock::time_point kill_deadline = kNoDeadline;
  // A negative fd is ignored by poll(2): no at-risk wakeup, nothing to watch.
  std::array<pollfd, 3> watched{{{signals.fd(), POLLIN, 0},
                                 {loss.fd(), POLLIN, 0},
                                 {hooks.at_risk != nullptr ? hooks.at_risk->fd() : -1, POLLIN, 0}}};

  // SIGCHLD wakes the poll when the child ends; has_exited() is checked
  // before every wait so an exit that came first is never missed.
  while (!has_exited(child)) {
    const int ready = ::poll(watched.data(), watched.size(), poll_timeout(kill_deadline));
    if (ready < 0 && errno != EINTR) break;  // cannot wait any more: reap below

    if (kill_deadline != kNoDeadline && SteadyClock::now() >= kill_deadline) {
      kill_deadline = kNoDeadline;
      result.killed_after_grace = true;
      if (hooks.on_grace_expired) hooks.on_grace_expired();
      (void)::kill(-child, SIGKILL);
    }
    if (ready > 0 && (watched[1].revents & POLLIN) != 0 && loss.take() && !result.lost) {
      result.lost = true;
      if (hooks.on_lost) hooks.on_lost();
      if (grace.count() == 0) {
        (void)::kill(-child, SIGKILL);
      } else {
        (void)::kill(-child, SIGTERM);
        kill_deadline = SteadyClock::now() + grace;
      }
    }
    if (ready > 0 && (watched[2].revents & POLLIN) != 0 && hooks.at_risk->take() && !result.lost) {
      if (hooks.on_at_risk) hooks.on_at_risk();
      (void)::kill(-child, hooks.at_risk_signal);
    }
    if (ready > 0 && (watched[0].revents & POLLIN) != 0) {
      while (const std::optional<int> signal_number = signals.next()) {
        if (*signal_number == SIGCHLD) continue;
        result.forwarded_signal = *signal_number;
        (void)::kill(-child, *signal_number);
      }
    }
  }
  // After a loss nothing of the group may keep working unprotected.
  if (result.lost) (void)::kill(-child, SIGKILL);
  result.exit_code = reap(child);
  return result;
}

}  // namespace redlock::cli
