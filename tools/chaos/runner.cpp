// One chaos run from start to verdict (runner.hpp): a Run's phases in
// order (nodes, warm-up, proxy, clients, the workload under the nemesis,
// heal and stop, probe, snapshot, check) and the workload loop itself.
#include "runner.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <system_error>

#include "protocol/hash_slot.hpp"
#include "runner_internal.hpp"

namespace redlock::chaos {
namespace runner_internal {

Run::Run(const Scenario& scenario, Variant variant, const RunOptions& options)
    : scenario_(scenario),
      variant_(variant),
      options_(options),
      duration_(options.duration.value_or(scenario.duration)),
      dir_(options.out_dir / (scenario.name + "-" + std::string(to_string(variant)))) {}

VariantOutcome Run::execute() {
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

void Run::phase(const std::string& text) const {
  if (options_.on_phase) options_.on_phase(text);
}

VariantOutcome Run::run_and_check() {
  std::error_code error;
  std::filesystem::remove_all(dir_, error);
  std::filesystem::create_directories(dir_, error);
  if (error) throw std::runtime_error("cannot create " + dir_.string() + ": " + error.message());

  phase("starting nodes");
  // A fault on a cluster member acts on the shard that serves the lock.
  const std::uint16_t lock_slot = detail::hash_slot(scenario_.all_resources().front());
  nodes_ =
      std::make_unique<NodeSupervisor>(scenario_.nodes, kKeyPrefix, lock_slot, options_.faketime);
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

void Run::play() {
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

}  // namespace runner_internal

VariantOutcome run_variant(const Scenario& scenario, Variant variant, const RunOptions& options) {
  return runner_internal::Run(scenario, variant, options).execute();
}

}  // namespace redlock::chaos
