#include "runner.hpp"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "fault_proxy.hpp"
#include "history.hpp"
#include "node_supervisor.hpp"
#include "redlock/redlock.hpp"
#include "report.hpp"
#include "validity.hpp"
#include "worker_process.hpp"

namespace redlock::chaos {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kKeyPrefix = "redlock:";
constexpr milliseconds kReadyTimeout{15000};
constexpr milliseconds kDefaultPause{1000};
constexpr milliseconds kRetryBudget{2000};

std::string node_name(int index) { return "n" + std::to_string(index); }
std::string client_name(int index) { return "c" + std::to_string(index); }

// A fault in effect and how it ends.
struct ActiveFault {
  Clock::time_point ends;
  std::function<void()> end;
};

// A nemesis step scheduled at an absolute time (a long run repeats the
// schedule every scenario duration).
struct PlannedStep {
  Clock::time_point at;
  const NemesisStep* step = nullptr;
  int op = 0;
  bool waiting_logged = false;
};

class Run {
 public:
  Run(const Scenario& scenario, Variant variant, const RunOptions& options)
      : scenario_(scenario),
        variant_(variant),
        options_(options),
        duration_(options.duration.value_or(scenario.duration)),
        dir_(options.out_dir / (scenario.name + "-" + std::string(to_string(variant)))) {}

  VariantOutcome execute() {
    const auto started = Clock::now();
    VariantOutcome outcome;
    outcome.scenario = scenario_.name;
    outcome.variant = variant_;
    try {
      outcome = run_and_check();
    } catch (const std::exception& error) {
      outcome.error = error.what();
    }
    outcome.scenario = scenario_.name;
    outcome.variant = variant_;
    outcome.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return outcome;
  }

 private:
  void phase(const std::string& text) const {
    if (options_.on_phase) options_.on_phase(text);
  }

  VariantOutcome run_and_check() {
    std::error_code error;
    std::filesystem::remove_all(dir_, error);
    std::filesystem::create_directories(dir_, error);
    if (error) throw std::runtime_error("cannot create " + dir_.string() + ": " + error.message());

    phase("starting nodes");
    nodes_ = std::make_unique<NodeSupervisor>(scenario_.nodes, kKeyPrefix, options_.faketime);
    history_ = std::make_unique<HistoryWriter>(dir_ / "harness.jsonl");
    if (!history_->ok())
      throw std::runtime_error("cannot write " + (dir_ / "harness.jsonl").string());
    warm_up();
    start_proxy();
    start_workers();
    play();
    heal_and_stop();
    probe();
    snapshot();
    phase("checking");
    std::vector<std::filesystem::path> files{dir_ / "harness.jsonl"};
    for (int c = 0; c < client_count(); ++c) files.push_back(dir_ / (client_name(c) + ".jsonl"));
    history_.reset();
    VariantOutcome outcome = check_recorded(files, &scenario_, variant_, dir_ / "report.html",
                                            options_.seed, dir_ / "history.jsonl");
    for (const std::string& problem : problems_) {
      outcome.error += (outcome.error.empty() ? "" : "; ") + problem;
    }
    return outcome;
  }

  // A quorum in service has been used before: one lock taken and released
  // on every node marks them all (DESIGN 2.5), so a partition set up at the
  // barrier does not leave nodes that one side can never recover.
  void warm_up() {
    phase("warming up the quorum");
    BlockingClient client(direct_config());
    const auto deadline = Clock::now() + milliseconds(10000);
    std::string last;
    while (Clock::now() < deadline) {
      AcquireOptions acquire;
      acquire.wait = milliseconds(2000);
      const AcquireResult result = client.acquire(redlock::Resource("chaos-warm-up"), acquire);
      if (result.ok()) {
        // The acquire decides at a majority; the release, which waits for
        // every node, proves that each one had granted it.
        const ReleaseResult released = client.release(*result.lock);
        if (released.released == static_cast<std::size_t>(node_count())) return;
        last = std::to_string(released.released) + " of " + std::to_string(node_count()) +
               " nodes held the warm-up lock";
      } else {
        last = result.error.message();
      }
    }
    throw std::runtime_error("warm-up: not every node granted and released a lock (" + last + ")");
  }

  int client_count() const { return scenario_.clients.count; }
  int node_count() const { return scenario_.nodes.count; }

  void start_proxy() {
    proxy_ = std::make_unique<FaultProxy>();
    links_.assign(static_cast<std::size_t>(client_count()), {});
    link_ports_.assign(static_cast<std::size_t>(client_count()), {});
    for (int c = 0; c < client_count(); ++c) {
      for (int n = 0; n < node_count(); ++n) {
        FaultProxy::LinkId id = 0;
        std::uint16_t port = 0;
        const std::error_code error = proxy_->add_link(client_name(c) + "->" + node_name(n),
                                                       "127.0.0.1", nodes_->port(n), id, port);
        if (error) throw std::runtime_error("proxy link: " + error.message());
        links_[static_cast<std::size_t>(c)].push_back(id);
        link_ports_[static_cast<std::size_t>(c)].push_back(port);
      }
      // The last link of each client goes to the protected resource.
      FaultProxy::LinkId id = 0;
      std::uint16_t port = 0;
      const std::error_code error =
          proxy_->add_link(client_name(c) + "->r", "127.0.0.1", nodes_->resource_port(), id, port);
      if (error) throw std::runtime_error("proxy link: " + error.message());
      resource_links_.push_back(id);
      resource_ports_.push_back(port);
    }
  }

  std::string quorum_file(const std::vector<std::uint16_t>& ports) const {
    const LockSpec& lock = scenario_.lock;
    std::ostringstream out;
    for (std::size_t n = 0; n < ports.size(); ++n) {
      out << "[[node]]\nname = \"" << node_name(static_cast<int>(n))
          << "\"\naddress = \"127.0.0.1:" << ports[n] << "\"\n";
    }
    out << "[lock]\nttl_ms = " << lock.ttl.count()
        << "\nretry_delay_ms = " << lock.retry_delay.count()
        << "\ndrift_factor = " << lock.drift_factor
        << "\namnesia_defence = " << (lock.amnesia_defence ? "true" : "false")
        << "\nrelease_at_majority = " << (lock.release_at_majority ? "true" : "false")
        << "\nreconnect_min_ms = 10\nreconnect_max_ms = 200\nconnect_timeout_ms = 500\n";
    if (lock.node_timeout.count() > 0)
      out << "node_timeout_ms = " << lock.node_timeout.count() << "\n";
    if (lock.max_ttl.count() > 0) out << "max_ttl_ms = " << lock.max_ttl.count() << "\n";
    return out.str();
  }

  void write_file(const std::filesystem::path& file, const std::string& text) const {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + file.string());
  }

  void start_workers() {
    phase("starting clients");
    const bool fenced = variant_ == Variant::fenced;
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
      if (fenced) args.emplace_back("--fenced");
      if (scenario_.lock.renew) args.emplace_back("--renew");
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
  void read_worker_lines(milliseconds wait) {
    std::vector<pollfd> fds;
    for (const auto& worker : workers_) fds.push_back(pollfd{worker->stdout_fd(), POLLIN, 0});
    ::poll(fds.data(), fds.size(), static_cast<int>(wait.count()));
    for (int c = 0; c < client_count(); ++c) {
      for (const std::string& line : workers_[static_cast<std::size_t>(c)]->poll_lines()) {
        on_worker_line(c, line);
      }
    }
  }

  void on_worker_line(int c, const std::string& line) {
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

  Event nemesis_event(Phase phase, int op, const NemesisStep& step, std::string detail) const {
    Event event;
    event.t = reference_now_ns();
    event.proc = "nemesis";
    event.kind = EventKind::nemesis;
    event.phase = phase;
    event.op = op;
    event.fault = std::string(to_string(step.action));
    event.target = step.target;
    event.detail = std::move(detail);
    return event;
  }

  void plan() {
    const milliseconds period = scenario_.duration;
    int op = 0;
    for (milliseconds offset{0}; offset < duration_; offset += period) {
      for (const NemesisStep& step : scenario_.nemesis) {
        if (offset + step.at >= duration_) continue;
        planned_.push_back(PlannedStep{start_ + offset + step.at, &step, ++op});
      }
      if (scenario_.nemesis.empty()) break;
    }
    std::stable_sort(planned_.begin(), planned_.end(),
                     [](const PlannedStep& a, const PlannedStep& b) { return a.at < b.at; });
  }

  void play() {
    start_ = Clock::now();
    Event run;
    run.t = reference_now_ns();
    run.proc = "harness";
    run.kind = EventKind::run;
    run.phase = Phase::info;
    run.count = node_count();
    run.fenced = variant_ == Variant::fenced;
    run.ttl_ms = scenario_.lock.ttl.count();
    run.detail = scenario_.name + " (" + std::string(to_string(variant_)) + "), seed " +
                 std::to_string(options_.seed) +
                 (options_.faketime ? ", node clocks under libfaketime" : "");
    history_->write(run);
    plan();
    nodes_->sync_now();
    run_due_steps();  // faults at 0 ms are in place before any client moves
    for (auto& worker : workers_) worker->send("go");
    const auto end = start_ + duration_;
    auto last_phase = Clock::now() - std::chrono::seconds(1);
    while (Clock::now() < end) {
      read_worker_lines(milliseconds(2));
      run_due_steps();
      end_due_faults(false);
      nodes_->tick();
      if (Clock::now() - last_phase >= milliseconds(250)) {
        last_phase = Clock::now();
        const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
        char text[64];
        std::snprintf(text, sizeof text, "workload %.1f/%.1f s", elapsed,
                      std::chrono::duration<double>(duration_).count());
        phase(text);
      }
    }
  }

  void run_due_steps() {
    const auto now = Clock::now();
    for (auto it = planned_.begin(); it != planned_.end();) {
      if (it->at > now) break;  // planned_ is in time order
      const NemesisStep& step = *it->step;
      if (step.when_holding >= 0 && !holding_long_enough(step, now)) {
        if (now < it->at + step.when_timeout) {
          ++it;
          continue;
        }
        history_->write(nemesis_event(
            Phase::info, it->op, step,
            "skipped: " + client_name(step.when_holding) + " did not hold the lock in time"));
        it = planned_.erase(it);
        continue;
      }
      start_step(step, it->op);
      it = planned_.erase(it);
    }
  }

  bool holding_long_enough(const NemesisStep& step, Clock::time_point now) const {
    const auto c = static_cast<std::size_t>(step.when_holding);
    return holding_[c] && now >= holding_since_[c] + step.after_holding;
  }

  // Schedules the end of a fault `length` from now, recording it.
  void schedule_end(const NemesisStep& step, int op, milliseconds length,
                    std::function<std::string()> undo) {
    active_.push_back(ActiveFault{Clock::now() + length, [this, &step, op, undo] {
                                    history_->write(nemesis_event(Phase::ok, op, step, undo()));
                                  }});
  }

  void start_step(const NemesisStep& step, int op) {
    // Instantaneous actions end where they start: their span is a point.
    const bool instant = step.action == NemesisAction::clock_jump ||
                         step.action == NemesisAction::restart ||
                         step.action == NemesisAction::resume || step.action == NemesisAction::heal;
    auto record = [&](const std::string& detail) {
      history_->write(nemesis_event(Phase::invoke, op, step, detail));
      if (instant) history_->write(nemesis_event(Phase::ok, op, step, "done"));
    };
    switch (step.action) {
      case NemesisAction::kill:
      case NemesisAction::power_loss: {
        const int n = *parse_node_target(step.target, node_count());
        record(step.action == NemesisAction::kill ? nodes_->kill(n) : nodes_->power_loss(n));
        if (step.duration)
          schedule_end(step, op, *step.duration, [this, n] { return nodes_->restart(n); });
        break;
      }
      case NemesisAction::restart: {
        const int n = *parse_node_target(step.target, node_count());
        record(nodes_->restart(n));
        break;
      }
      case NemesisAction::pause:
        start_pause(step, op, record);
        break;
      case NemesisAction::resume:
        if (auto n = parse_node_target(step.target, node_count())) {
          record(nodes_->resume(*n));
        } else if (auto c = parse_client_target(step.target, client_count())) {
          workers_[static_cast<std::size_t>(*c)]->signal(SIGCONT);
          record("SIGCONT");
        }
        break;
      case NemesisAction::link: {
        const LinkSelection selection =
            *parse_link_target(step.target, client_count(), node_count());
        set_links(selection, step.direction, step.mode, step.delay);
        record(
            std::string(to_string(step.mode)) + " " + std::string(to_string(step.direction)) +
            (step.mode == LinkMode::delay ? " " + std::to_string(step.delay.count()) + " ms" : ""));
        if (step.duration) {
          schedule_end(step, op, *step.duration, [this, selection, &step] {
            set_links(selection, step.direction, LinkMode::pass, milliseconds(0));
            return std::string("pass");
          });
        }
        break;
      }
      case NemesisAction::clock_jump: {
        const int n = *parse_node_target(step.target, node_count());
        record(nodes_->clock_jump(n, step.delta));
        break;
      }
      case NemesisAction::clock_rate: {
        const int n = *parse_node_target(step.target, node_count());
        nodes_->set_clock_rate(n, step.rate);
        record("clock rate " + std::to_string(step.rate));
        if (step.duration) {
          schedule_end(step, op, *step.duration, [this, n] {
            nodes_->set_clock_rate(n, 1.0);
            return std::string("clock rate 1");
          });
        }
        break;
      }
      case NemesisAction::heal:
        record(heal_everything());
        break;
    }
  }

  template <typename Record>
  void start_pause(const NemesisStep& step, int op, Record& record) {
    const milliseconds length = step.duration.value_or(kDefaultPause);
    if (auto n = parse_node_target(step.target, node_count())) {
      record(nodes_->pause(*n));
      schedule_end(step, op, length, [this, n] { return nodes_->resume(*n); });
      return;
    }
    const int c = *parse_client_target(step.target, client_count());
    WorkerProcess& worker = *workers_[static_cast<std::size_t>(c)];
    if (step.point == PausePoint::now) {
      worker.signal(SIGSTOP);
      record("SIGSTOP");
      schedule_end(step, op, length, [&worker] {
        worker.signal(SIGCONT);
        return std::string("SIGCONT");
      });
      return;
    }
    // The worker stops itself at the point and records it; the harness
    // resumes it `length` after it said so.
    pending_pause_[c] = length;
    worker.send("pause " + std::string(to_string(step.point)));
    // Not the fault itself: the worker records the pause when it stops.
    history_->write(nemesis_event(Phase::info, op, step,
                                  "armed: pause at " + std::string(to_string(step.point))));
  }

  void set_links(const LinkSelection& selection, Direction direction, LinkMode mode,
                 milliseconds delay) {
    for (int c : selection.clients) {
      for (int n : selection.nodes) {
        proxy_->set_mode(links_[static_cast<std::size_t>(c)][static_cast<std::size_t>(n)],
                         direction, mode, delay);
      }
      if (selection.resource) {
        proxy_->set_mode(resource_links_[static_cast<std::size_t>(c)], direction, mode, delay);
      }
    }
  }

  void end_due_faults(bool all) {
    const auto now = Clock::now();
    // Ending a fault may schedule nothing new, but copy out first anyway.
    std::vector<std::function<void()>> due;
    for (auto it = active_.begin(); it != active_.end();) {
      if (all || it->ends <= now) {
        due.push_back(std::move(it->end));
        it = active_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& end : due) end();
  }

  std::string heal_everything() {
    end_due_faults(true);
    for (int c = 0; c < client_count(); ++c) {
      for (int n = 0; n < node_count(); ++n) {
        proxy_->set_mode(links_[static_cast<std::size_t>(c)][static_cast<std::size_t>(n)],
                         Direction::both, LinkMode::pass);
      }
      proxy_->set_mode(resource_links_[static_cast<std::size_t>(c)], Direction::both,
                       LinkMode::pass);
      workers_[static_cast<std::size_t>(c)]->signal(SIGCONT);
    }
    const std::string nodes = nodes_->heal();
    return nodes.empty() ? "links pass, clients resumed" : "links pass, clients resumed; " + nodes;
  }

  void heal_and_stop() {
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
    const milliseconds grace = scenario_.lock.ttl * 3 + scenario_.lock.wait + longest_section * 2 +
                               std::chrono::seconds(20);
    const auto deadline = Clock::now() + grace;
    while (std::count(done_.begin(), done_.end(), true) < client_count() &&
           Clock::now() < deadline) {
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
        const std::string why =
            std::string(done_[static_cast<std::size_t>(c)] ? "after saying done"
                                                           : "never said done") +
            "; " + state;
        killed.detail = "client did not stop within the grace period (" + why + "); killed";
        history_->write(killed);
        problems_.push_back("client " + client_name(c) + " did not stop (" + why +
                            "); killed (see " + (dir_ / (client_name(c) + ".stderr")).string() +
                            ")");
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

  QuorumConfig direct_config() const {
    QuorumConfig config;
    for (int n = 0; n < node_count(); ++n) {
      NodeConfig node;
      node.name = node_name(n);
      node.host = "127.0.0.1";
      node.port = nodes_->port(n);
      config.nodes.push_back(node);
    }
    config.lock.ttl = scenario_.lock.ttl;
    config.lock.drift_factor = scenario_.lock.drift_factor;
    config.lock.retry_delay = milliseconds(20);
    config.lock.amnesia_defence = scenario_.lock.amnesia_defence;
    config.lock.max_ttl = scenario_.lock.max_ttl;
    config.lock.node_timeout = scenario_.lock.node_timeout;
    config.source = "chaos probe";
    return config;
  }

  // C11: once everything is healed and the clients are gone, one
  // uncontended acquire must succeed within the TTL plus a retry budget.
  void probe() {
    phase("liveness probe");
    BlockingClient client(direct_config());
    const milliseconds budget = effective_max_ttl(client.config().lock) + kRetryBudget;
    Event invoke;
    invoke.t = reference_now_ns();
    invoke.proc = "probe";
    invoke.kind = EventKind::acquire;
    invoke.phase = Phase::invoke;
    invoke.op = 1;
    invoke.ttl_ms = scenario_.lock.ttl.count();
    invoke.budget_ms = budget.count();
    history_->write(invoke);
    AcquireOptions acquire;
    acquire.wait = budget;
    acquire.fenced = variant_ == Variant::fenced;
    const AcquireResult result = client.acquire(redlock::Resource("chaos"), acquire);
    Event done = invoke;
    done.t = reference_now_ns();
    done.budget_ms = 0;
    done.phase = result.ok() ? Phase::ok : Phase::fail;
    done.nodes = node_replies(result.nodes);
    if (result.ok()) {
      done.value = result.lock->value.str();
      done.validity_ms = result.validity.count();
      if (result.lock->fence) done.token = static_cast<std::int64_t>(*result.lock->fence);
      done.start_t = done.t - std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  Clock::now() - result.lock->started)
                                  .count();
      done.deadline_t = done.t + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     result.lock->valid_until - Clock::now())
                                     .count();
      const LockConfig& lock = client.config().lock;
      done.drift_ms =
          detail::drift_allowance(result.lock->ttl, lock.drift_factor, lock.drift_ms).count();
    } else {
      done.error = result.error.message();
    }
    history_->write(done);
    if (!result.ok()) return;
    Event release;
    release.t = reference_now_ns();
    release.proc = "probe";
    release.kind = EventKind::release;
    release.phase = Phase::invoke;
    release.op = 2;
    release.value = result.lock->value.str();
    history_->write(release);
    const ReleaseResult released = client.release(*result.lock);
    release.t = reference_now_ns();
    release.phase = released.error ? Phase::info : Phase::ok;
    release.nodes = node_replies(released.nodes);
    history_->write(release);
  }

  void snapshot() {
    phase("snapshot");
    for (int n = 0; n < node_count(); ++n) {
      Event base;
      base.proc = "harness";
      base.kind = EventKind::snapshot;
      base.phase = Phase::info;
      base.target = node_name(n);
      const auto keys = nodes_->lock_keys(n);
      base.t = reference_now_ns();
      if (!keys) {
        base.detail = "not reachable";
        history_->write(base);
        continue;
      }
      base.count = static_cast<std::int64_t>(keys->size());
      if (keys->empty()) {
        base.detail = "no lock keys";
        history_->write(base);
      }
      for (const NodeKey& key : *keys) {
        Event entry = base;
        entry.key = key.key;
        entry.value = key.value;
        entry.pttl_ms = key.pttl_ms;
        history_->write(entry);
      }
    }
    long long counter = 0;
    std::vector<std::string> log;
    Event resource;
    resource.proc = "harness";
    resource.kind = EventKind::snapshot;
    resource.phase = Phase::info;
    resource.target = "resource";
    if (nodes_->resource_state(counter, log)) {
      resource.count = counter;
      resource.entries = std::move(log);
    } else {
      resource.detail = "resource not readable";
    }
    resource.t = reference_now_ns();
    history_->write(resource);
  }

  const Scenario& scenario_;
  Variant variant_;
  const RunOptions& options_;
  milliseconds duration_;
  std::filesystem::path dir_;
  std::unique_ptr<NodeSupervisor> nodes_;
  std::unique_ptr<HistoryWriter> history_;
  std::unique_ptr<FaultProxy> proxy_;
  std::vector<std::vector<FaultProxy::LinkId>> links_;
  std::vector<std::vector<std::uint16_t>> link_ports_;
  std::vector<FaultProxy::LinkId> resource_links_;
  std::vector<std::uint16_t> resource_ports_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
  std::vector<bool> holding_;
  std::vector<Clock::time_point> holding_since_;
  std::vector<bool> ready_;
  std::vector<bool> done_;
  std::map<int, milliseconds> pending_pause_;
  std::vector<PlannedStep> planned_;
  std::vector<ActiveFault> active_;
  // What went wrong in the harness itself; any of it fails the run.
  std::vector<std::string> problems_;
  Clock::time_point start_;
};

RunCounts count_events(const History& history) {
  RunCounts counts;
  for (const Event& event : history.events) {
    const bool client = !event.proc.empty() && event.proc[0] == 'c';
    if (event.kind == EventKind::acquire && client && event.phase == Phase::ok) ++counts.acquired;
    if (event.kind == EventKind::acquire && client && event.phase == Phase::fail) {
      ++counts.acquire_failed;
    }
    if (event.kind == EventKind::write && event.phase == Phase::ok) ++counts.writes_accepted;
    if (event.kind == EventKind::write && event.phase == Phase::fail) ++counts.writes_refused;
    if (event.kind == EventKind::nemesis && event.phase == Phase::invoke) ++counts.faults;
  }
  return counts;
}

}  // namespace

VariantOutcome check_recorded(const std::vector<std::filesystem::path>& files,
                              const Scenario* scenario, Variant variant,
                              const std::filesystem::path& report, std::uint64_t seed,
                              const std::filesystem::path& merged) {
  VariantOutcome outcome;
  outcome.variant = variant;
  if (scenario != nullptr) outcome.scenario = scenario->name;
  HistoryLoadResult loaded = load_history(files);
  if (!loaded.history) {
    outcome.error = loaded.error;
    return outcome;
  }
  const History& history = *loaded.history;
  outcome.check = check_history(history);
  Expectations expectations{};
  if (scenario != nullptr) {
    auto found = scenario->expectations.find(variant);
    if (found != scenario->expectations.end()) expectations = found->second;
  }
  outcome.verdicts = judge(outcome.check, expectations);
  outcome.counts = count_events(history);
  if (!merged.empty()) {
    std::string error;
    if (save_history(history, merged, error)) outcome.history = merged;
  }
  if (!report.empty()) {
    ReportInput input;
    input.scenario = scenario != nullptr ? scenario->name : std::string("recorded history");
    input.description = scenario != nullptr ? scenario->description : std::string();
    input.variant = std::string(to_string(variant));
    input.seed = seed;
    input.history = &history;
    input.check = &outcome.check;
    input.expectations = expectations;
    input.passed = outcome.passed();
    std::ofstream out(report, std::ios::binary | std::ios::trunc);
    out << render_report_html(input);
    if (out) outcome.report = report;
  }
  return outcome;
}

VariantOutcome run_variant(const Scenario& scenario, Variant variant, const RunOptions& options) {
  return Run(scenario, variant, options).execute();
}

}  // namespace redlock::chaos
