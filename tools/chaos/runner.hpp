// One chaos run: a scenario's variant from start to verdict.
//
// Starts the nodes and the resource store (NodeSupervisor), a fault proxy
// link per client and node, the client workers (separate processes), lets
// them go from one barrier, plays the nemesis schedule, heals, stops the
// workers, runs the liveness probe, snapshots the nodes and the resource,
// merges the histories, checks them and writes the report.
//
// Everything is bounded: the workload by the scenario's duration, every
// wait for a process or a node by a deadline; a worker that does not stop
// is killed (by pid) and the run says so.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "checker.hpp"
#include "node_clock.hpp"
#include "scenario.hpp"

namespace redlock::chaos {

struct RunOptions {
  // This program, started again as `worker` for each client.
  std::filesystem::path executable;
  // Each variant writes into out_dir/<scenario>-<variant>/.
  std::filesystem::path out_dir;
  std::uint64_t seed = 1;
  // Overrides the scenario's duration (the nemesis schedule repeats every scenario duration).
  std::optional<Milliseconds> duration;
  // Node clock faults through libfaketime (node_clock.hpp); emulated on
  // the keys when not set.
  std::optional<FaketimeLibraries> faketime;
  // Progress: the phase and elapsed time of the run, for a TTY line.
  std::function<void(const std::string& phase)> on_phase;
};

struct RunCounts {
  int acquired = 0;         // acquire ok events
  int acquire_failed = 0;   // acquire fail events
  int writes_accepted = 0;  // write ok
  int writes_refused = 0;   // write fail (fenced out or store error)
  int faults = 0;           // nemesis invoke events
};

struct VariantOutcome {
  std::string scenario;
  Variant variant = Variant::unfenced;
  std::string error;  // the harness could not run or check it (counts as a failure)
  CheckResult check;
  Verdicts verdicts;
  RunCounts counts;
  std::filesystem::path report;
  std::filesystem::path history;
  double seconds = 0;
  [[nodiscard]] bool passed() const noexcept {
    return error.empty() && verdicts.regression_ok && verdicts.demonstration_ok;
  }
};

[[nodiscard]] VariantOutcome run_variant(const Scenario& scenario, Variant variant,
                                         const RunOptions& options);

// Re-checks a recorded (merged or per-process) history against a scenario's
// expectations for one variant; `report` (optional) receives the HTML.
// `seed` is only shown in the report; `merged`, when not empty, receives
// the merged history.
[[nodiscard]] VariantOutcome check_recorded(const std::vector<std::filesystem::path>& files,
                                            const Scenario* scenario, Variant variant,
                                            const std::filesystem::path& report,
                                            std::uint64_t seed = 0,
                                            const std::filesystem::path& merged = {});

}  // namespace redlock::chaos
