// What the runner's files share (runner.hpp is the interface): the Run
// that takes one scenario variant from start to verdict, its timing
// constants, and the names it gives nodes and clients. Run's members are
// defined by concern: runner.cpp the phases in order and the workload loop,
// runner_cluster.cpp the nodes, the proxy links and the quorum files,
// runner_workers.cpp the client processes, runner_nemesis.cpp the fault
// schedule, runner_results.cpp the probe, the snapshots and the check of
// the recorded history. Not for use outside the runner.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fault_proxy.hpp"
#include "history.hpp"
#include "node_supervisor.hpp"
#include "redlock/redlock.hpp"
#include "runner.hpp"
#include "scenario.hpp"
#include "worker_process.hpp"

namespace redlock::chaos::runner_internal {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline constexpr const char* kKeyPrefix = "redlock:";
inline constexpr milliseconds kReadyTimeout{15000};
inline constexpr milliseconds kDefaultPause{1000};
inline constexpr milliseconds kRetryBudget{2000};

inline std::string node_name(int index) { return "n" + std::to_string(index); }
inline std::string client_name(int index) { return "c" + std::to_string(index); }

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
};

class Run {
 public:
  Run(const Scenario& scenario, Variant variant, const RunOptions& options);

  VariantOutcome execute();

 private:
  int client_count() const { return scenario_.clients.count; }
  int node_count() const { return scenario_.nodes.count; }

  // runner.cpp: the phases in order and the workload between them.
  void phase(const std::string& text) const;
  VariantOutcome run_and_check();
  void play();

  // runner_cluster.cpp: the nodes, the proxy links, the quorum files.
  void warm_up();
  void warm_up(BlockingClient& client, const std::string& name);
  void start_proxy();
  std::string quorum_file(const std::vector<std::uint16_t>& ports) const;
  void write_file(const std::filesystem::path& file, const std::string& text) const;
  QuorumConfig direct_config() const;

  // runner_workers.cpp: the client processes, from start to exit.
  void start_workers();
  void read_worker_lines(milliseconds wait);
  void on_worker_line(int c, const std::string& line);
  void heal_and_stop();

  // runner_nemesis.cpp: the fault schedule and the faults in effect.
  Event nemesis_event(Phase phase, int op, const NemesisStep& step, std::string detail) const;
  void plan();
  void run_due_steps();
  bool holding_long_enough(const NemesisStep& step, Clock::time_point now) const;
  void schedule_end(const NemesisStep& step, int op, milliseconds length,
                    std::function<std::string()> undo);
  void start_step(const NemesisStep& step, int op);
  template <typename Record>
  void start_pause(const NemesisStep& step, int op, Record& record);
  void set_links(const LinkSelection& selection, Direction direction, LinkMode mode,
                 milliseconds delay);
  void end_due_faults(bool all);
  std::string heal_everything();

  // runner_results.cpp: what the run leaves for the checker.
  void probe();
  void snapshot();

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
  // The lagged failovers (by step op) whose replica stopped replicating,
  // waiting for their condition to promote it.
  std::set<int> lagging_;
  std::vector<PlannedStep> planned_;
  std::vector<ActiveFault> active_;
  // What went wrong in the harness itself; any of it fails the run.
  std::vector<std::string> problems_;
  Clock::time_point start_;
};

}  // namespace redlock::chaos::runner_internal
