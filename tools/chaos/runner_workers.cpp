// The client worker processes: starting them with their arguments and
// quorum files, reading the lines they report (ready, holding, released,
// pausing, done), and at the end healing everything and stopping them,
// killing any that does not stop in time.
#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <utility>

#include "lock_target.hpp"
#include "runner_internal.hpp"

namespace redlock::chaos::runner_internal {

void Run::start_workers() {
  phase("starting clients");
  const bool fenced = variant_ == Variant::fenced;
  // The clients' start stagger comes from the run's seed so that a run can
  // be repeated; lock values never come from here (the library draws them
  // from getrandom).
  std::mt19937_64 random(options_.seed);
  workers_.clear();
  for (int c = 0; c < client_count(); ++c) {
    const ClientSpec& spec = scenario_.clients.spec(c);
    const std::filesystem::path config = dir_ / (client_name(c) + ".toml");
    write_file(config, quorum_file(link_ports_[static_cast<std::size_t>(c)]));
    const std::uint16_t resource_port = resource_ports_[static_cast<std::size_t>(c)];
    // The seed staggers the clients by up to 3 ms beyond their start delay.
    const auto stagger = static_cast<long long>(random() % 4);
    std::vector<std::string> args{"worker",
                                  "--config",
                                  config.string(),
                                  "--history",
                                  (dir_ / (client_name(c) + ".jsonl")).string(),
                                  "--resource-port",
                                  std::to_string(resource_port),
                                  "--index",
                                  std::to_string(c),
                                  "--ttl-ms",
                                  std::to_string(scenario_.lock.ttl.count()),
                                  "--retry-delay-ms",
                                  std::to_string(scenario_.lock.retry_delay.count()),
                                  "--wait-ms",
                                  std::to_string(scenario_.lock.wait.count()),
                                  "--cs-ms",
                                  std::to_string(spec.critical_section.count()),
                                  "--think-ms",
                                  std::to_string(spec.think.count()),
                                  "--duration-ms",
                                  std::to_string(duration_.count()),
                                  "--start-delay-ms",
                                  std::to_string(spec.start_delay.count() + stagger),
                                  "--max-renewals",
                                  std::to_string(scenario_.lock.max_renewals),
                                  "--clock-rate",
                                  std::to_string(spec.clock_rate)};
    const LockTarget target = lock_target(scenario_, c);
    args.insert(args.end(), {"--kind", std::string(to_string(target.kind))});
    if (target.kind == LockKind::semaphore) {
      args.insert(args.end(), {"--permits", std::to_string(target.permits)});
    }
    if (target.kind == LockKind::multi) {
      for (const std::string& name : target.resources)
        args.insert(args.end(), {"--resource", name});
    }
    if (target.shared) args.emplace_back("--shared");
    if (target.fair) args.emplace_back("--fair");
    if (fenced) args.emplace_back("--fenced");
    if (scenario_.lock.renew) args.emplace_back("--renew");
    if (scenario_.lock.reentrant) args.emplace_back("--reentrant");
    auto worker = std::make_unique<WorkerProcess>();
    std::string error;
    if (!worker->spawn(options_.executable, args, dir_ / (client_name(c) + ".stderr"), error)) {
      throw std::runtime_error("cannot start client " + client_name(c) + ": " + error);
    }
    workers_.push_back(std::move(worker));
  }
  holding_.assign(static_cast<std::size_t>(client_count()), false);
  holding_since_.assign(static_cast<std::size_t>(client_count()), Clock::time_point{});
  ready_.assign(static_cast<std::size_t>(client_count()), false);
  done_.assign(static_cast<std::size_t>(client_count()), false);
  const auto deadline = Clock::now() + kReadyTimeout;
  while (std::count(ready_.begin(), ready_.end(), true) < client_count()) {
    if (Clock::now() >= deadline) throw std::runtime_error("clients not ready within 15 s");
    read_worker_lines(milliseconds(5));
    for (int c = 0; c < client_count(); ++c) {
      auto& worker = *workers_[static_cast<std::size_t>(c)];
      worker.stopped();
      if (worker.exit_status()) {
        throw std::runtime_error("client " + client_name(c) + " exited with status " +
                                 std::to_string(*worker.exit_status()) + " (see " +
                                 (dir_ / (client_name(c) + ".stderr")).string() + ")");
      }
    }
  }
}

// Reads every worker's complete lines, waiting up to `wait` for one.
void Run::read_worker_lines(milliseconds wait) {
  std::vector<pollfd> fds;
  for (const auto& worker : workers_) fds.push_back(pollfd{worker->stdout_fd(), POLLIN, 0});
  ::poll(fds.data(), fds.size(), static_cast<int>(wait.count()));
  for (int c = 0; c < client_count(); ++c) {
    for (const std::string& line : workers_[static_cast<std::size_t>(c)]->poll_lines()) {
      on_worker_line(c, line);
    }
  }
}

void Run::on_worker_line(int c, const std::string& line) {
  const auto index = static_cast<std::size_t>(c);
  if (line == "ready") {
    ready_[index] = true;
  } else if (line.rfind("holding", 0) == 0) {
    holding_[index] = true;
    holding_since_[index] = Clock::now();
  } else if (line == "released") {
    holding_[index] = false;
  } else if (line == "done") {
    done_[index] = true;
    holding_[index] = false;
  } else if (line.rfind("pausing", 0) == 0) {
    // The worker stopped itself at its pause point; resume it later.
    const milliseconds length = pending_pause_.count(c) ? pending_pause_[c] : kDefaultPause;
    pending_pause_.erase(c);
    active_.push_back(ActiveFault{Clock::now() + length, [this, c] {
                                    workers_[static_cast<std::size_t>(c)]->signal(SIGCONT);
                                  }});
  }
}

void Run::heal_and_stop() {
  phase("healing");
  // A fault that never happened makes the run meaningless: say so.
  for (const PlannedStep& left : planned_) {
    history_->write(nemesis_event(Phase::info, left.op, *left.step, "never fired"));
    problems_.push_back("nemesis step at line " + std::to_string(left.step->line) + " (" +
                        std::string(to_string(left.step->action)) + " " + left.step->target +
                        ") never fired");
  }
  for (const auto& [c, length] : pending_pause_) {
    problems_.push_back("client " + client_name(c) + " never reached its pause point");
  }
  planned_.clear();
  pending_pause_.clear();
  const std::string detail = heal_everything();
  Event heal;
  heal.t = reference_now_ns();
  heal.proc = "harness";
  heal.kind = EventKind::heal;
  heal.phase = Phase::ok;
  heal.detail = detail;
  history_->write(heal);

  phase("stopping clients");
  for (auto& worker : workers_) worker->send("stop");
  // A generous bound: a client may be in an acquire (its wait), a
  // critical section, and three resource operations (5 s bound each).
  milliseconds longest_section = scenario_.clients.defaults.critical_section;
  for (const auto& [index, spec] : scenario_.clients.overrides) {
    longest_section = std::max(longest_section, spec.critical_section);
  }
  const milliseconds grace =
      scenario_.lock.ttl * 3 + scenario_.lock.wait + longest_section * 2 + std::chrono::seconds(20);
  const auto deadline = Clock::now() + grace;
  while (std::count(done_.begin(), done_.end(), true) < client_count() && Clock::now() < deadline) {
    read_worker_lines(milliseconds(5));
    // A worker that armed a pause may still stop itself: keep resuming.
    // Never one that said done: it is exiting, and under a sanitizer its
    // exit-time leak scan stops it with ptrace, which a SIGCONT from here
    // can wedge.
    for (int c = 0; c < client_count(); ++c) {
      if (done_[static_cast<std::size_t>(c)]) continue;
      WorkerProcess& worker = *workers_[static_cast<std::size_t>(c)];
      if (worker.stopped()) worker.signal(SIGCONT);
    }
  }
  for (int c = 0; c < client_count(); ++c) {
    WorkerProcess& worker = *workers_[static_cast<std::size_t>(c)];
    // A generous bound: a sanitizer's exit-time leak scan on a loaded
    // machine can take seconds; a worker that truly hangs still fails.
    if (!worker.wait_exit(milliseconds(20000))) {
      const std::string state = worker.describe_state();
      worker.signal(SIGKILL);
      (void)worker.wait_exit(milliseconds(3000));
      Event killed;
      killed.t = reference_now_ns();
      killed.proc = "harness";
      killed.kind = EventKind::nemesis;
      killed.phase = Phase::info;
      killed.fault = "harness";
      killed.target = client_name(c);
      const std::string why = std::string(done_[static_cast<std::size_t>(c)] ? "after saying done"
                                                                             : "never said done") +
                              "; " + state;
      killed.detail = "client did not stop within the grace period (" + why + "); killed";
      history_->write(killed);
      problems_.push_back("client " + client_name(c) + " did not stop (" + why + "); killed (see " +
                          (dir_ / (client_name(c) + ".stderr")).string() + ")");
      continue;
    }
    const std::optional<int> status = worker.exit_status();
    if (!done_[static_cast<std::size_t>(c)] || status.value_or(-1) != 0) {
      problems_.push_back("client " + client_name(c) + " exited with status " +
                          std::to_string(status.value_or(-1)) + " (see " +
                          (dir_ / (client_name(c) + ".stderr")).string() + ")");
    }
  }
}

}  // namespace redlock::chaos::runner_internal
