// The nemesis: the schedule of fault steps (repeated every scenario
// duration over a longer run), starting each step when it is due and its
// condition holds, ending each fault after its length, and healing
// everything at once.
#include <signal.h>

#include <algorithm>
#include <utility>

#include "runner_internal.hpp"

namespace redlock::chaos::runner_internal {

Event Run::nemesis_event(Phase phase, int op, const NemesisStep& step, std::string detail) const {
  Event event;
  event.t = reference_now_ns();
  event.proc = "nemesis";
  event.kind = EventKind::nemesis;
  event.phase = phase;
  event.op = op;
  event.fault = std::string(to_string(step.action));
  event.target = step.target;
  event.detail = std::move(detail);
  // The end of a fault that asks for progress carries how long its clients
  // have, so the checker (C11) needs nothing but the history.
  if (phase == Phase::ok && step.progress_within) event.budget_ms = step.progress_within->count();
  return event;
}

void Run::plan() {
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

void Run::run_due_steps() {
  const auto now = Clock::now();
  for (auto it = planned_.begin(); it != planned_.end();) {
    if (it->at > now) break;  // planned_ is in time order
    const NemesisStep& step = *it->step;
    // A lagged failover's replica stops replicating when the step is due,
    // before its condition: the writes it then misses are the condition's.
    if (step.action == NemesisAction::failover && step.lag && !lagging_.contains(it->op)) {
      lagging_.insert(it->op);
      const int n = *parse_node_target(step.target, node_count());
      history_->write(nemesis_event(Phase::invoke, it->op, step, nodes_->begin_lag(n)));
    }
    if (step.when_holding >= 0 && !holding_long_enough(step, now)) {
      if (now < it->at + step.when_timeout) {
        ++it;
        continue;
      }
      std::string skipped =
          "skipped: " + client_name(step.when_holding) + " did not hold the lock in time";
      if (lagging_.erase(it->op) != 0) {
        skipped += "; " + nodes_->end_lag(*parse_node_target(step.target, node_count()));
      }
      history_->write(nemesis_event(Phase::info, it->op, step, skipped));
      it = planned_.erase(it);
      continue;
    }
    start_step(step, it->op);
    it = planned_.erase(it);
  }
}

bool Run::holding_long_enough(const NemesisStep& step, Clock::time_point now) const {
  const auto c = static_cast<std::size_t>(step.when_holding);
  return holding_[c] && now >= holding_since_[c] + step.after_holding;
}

// Schedules the end of a fault `length` from now, recording it.
void Run::schedule_end(const NemesisStep& step, int op, milliseconds length,
                       std::function<std::string()> undo) {
  active_.push_back(ActiveFault{Clock::now() + length, [this, &step, op, undo] {
                                  history_->write(nemesis_event(Phase::ok, op, step, undo()));
                                }});
}

void Run::start_step(const NemesisStep& step, int op) {
  // Instantaneous actions end where they start: their span is a point.
  const bool instant =
      step.action == NemesisAction::clock_jump || step.action == NemesisAction::restart ||
      step.action == NemesisAction::resume || step.action == NemesisAction::heal ||
      step.action == NemesisAction::failover || step.action == NemesisAction::migrate;
  // A lagged failover began when its replica stopped: its promotion ends it.
  const bool began = lagging_.erase(op) != 0;
  auto record = [&](const std::string& detail) {
    if (began) {
      history_->write(nemesis_event(Phase::ok, op, step, detail));
      return;
    }
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
      const LinkSelection selection = *parse_link_target(step.target, client_count(), node_count());
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
    case NemesisAction::failover:
      record(nodes_->fail_over(*parse_node_target(step.target, node_count())));
      break;
    case NemesisAction::migrate:
      record(nodes_->migrate(*parse_node_target(step.target, node_count())));
      break;
  }
}

template <typename Record>
void Run::start_pause(const NemesisStep& step, int op, Record& record) {
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

void Run::set_links(const LinkSelection& selection, Direction direction, LinkMode mode,
                    milliseconds delay) {
  for (int c : selection.clients) {
    for (int n : selection.nodes) {
      proxy_->set_mode(links_[static_cast<std::size_t>(c)][static_cast<std::size_t>(n)], direction,
                       mode, delay);
    }
    if (selection.resource) {
      proxy_->set_mode(resource_links_[static_cast<std::size_t>(c)], direction, mode, delay);
    }
  }
}

void Run::end_due_faults(bool all) {
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

std::string Run::heal_everything() {
  end_due_faults(true);
  for (int c = 0; c < client_count(); ++c) {
    for (int n = 0; n < node_count(); ++n) {
      if (nodes_->is_cluster(n)) continue;  // (no link)
      proxy_->set_mode(links_[static_cast<std::size_t>(c)][static_cast<std::size_t>(n)],
                       Direction::both, LinkMode::pass);
    }
    proxy_->set_mode(resource_links_[static_cast<std::size_t>(c)], Direction::both, LinkMode::pass);
    workers_[static_cast<std::size_t>(c)]->signal(SIGCONT);
  }
  const std::string nodes = nodes_->heal();
  return nodes.empty() ? "links pass, clients resumed" : "links pass, clients resumed; " + nodes;
}

}  // namespace redlock::chaos::runner_internal
