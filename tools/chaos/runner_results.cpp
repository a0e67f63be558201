// What a run leaves for the checker and how it is checked: the liveness
// probe after everything healed, the snapshots of the nodes' lock keys and
// of the resource, and check_recorded(), which merges the histories,
// checks them against the scenario's expectations and writes the report.
#include <chrono>
#include <fstream>
#include <utility>

#include "lock_target.hpp"
#include "protocol/validity.hpp"
#include "report.hpp"
#include "runner_internal.hpp"

namespace redlock::chaos {
namespace runner_internal {

// C11: once everything is healed and the clients are gone, one
// uncontended acquire must succeed within the TTL plus a retry budget: of
// the mutex, a permit of the semaphore, or every resource of the run at once.
void Run::probe() {
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
  const LockTarget target = lock_target(scenario_, -1);
  record_target(target, invoke);
  history_->write(invoke);
  AcquireOptions acquire;
  acquire.wait = budget;
  acquire.fenced = variant_ == Variant::fenced;
  const AcquireResult result = chaos::acquire(client, target, acquire);
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
                                SteadyClock::now() - result.lock->started)
                                .count();
    done.deadline_t = done.t + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   result.lock->valid_until - SteadyClock::now())
                                   .count();
    const LockConfig& lock = client.config().lock;
    done.drift_ms =
        detail::drift_allowance(result.lock->ttl, lock.drift_factor, lock.drift_ms).count();
    record_lock(target, *result.lock, done);
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

void Run::snapshot() {
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
  // The protected resource: one snapshot per storage (counter and log).
  for (const ResourceKeys& keys : resource_keys(scenario_)) {
    long long counter = 0;
    std::vector<std::string> log;
    Event resource;
    resource.proc = "harness";
    resource.kind = EventKind::snapshot;
    resource.phase = Phase::info;
    resource.target = "resource";
    resource.key = keys.counter;
    resource.log_key = keys.log;
    if (nodes_->resource_state(keys.counter, keys.log, counter, log)) {
      resource.count = counter;
      resource.entries = std::move(log);
    } else {
      resource.detail = "resource not readable";
    }
    resource.t = reference_now_ns();
    history_->write(resource);
  }
}

}  // namespace runner_internal

namespace {

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

}  // namespace redlock::chaos
