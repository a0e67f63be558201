// The report's model, derived from the history before anything is drawn:
// which process a name is, the run's facts, each holding's validity window,
// each fault's span and the lane it is drawn on, and the lanes themselves.
#include <charconv>
#include <system_error>
#include <utility>

#include "report_internal.hpp"

namespace redlock::chaos::report_internal {

namespace {

bool is_client(std::string_view proc) { return numbered_name(proc, 'c').has_value(); }

// The claimed deadline of an acquire / extend ok; from the validity when the
// event does not carry one.
std::int64_t claimed_deadline(const Event& event) {
  return event.deadline_t != 0 ? event.deadline_t : event.t + event.validity_ms * kNsPerMs;
}

bool ends_fault(const Event& ending, const Event& started, bool by_op) {
  if (by_op) return ending.op != 0 && ending.op == started.op && ending.proc == started.proc;
  return ending.fault == started.fault && ending.target == started.target;
}

}  // namespace

// "c3" with prefix 'c' -> 3; nullopt for anything else ("c", "c-1", "nemesis").
std::optional<int> numbered_name(std::string_view name, char prefix) {
  if (name.size() < 2 || name.front() != prefix) return std::nullopt;
  int index = 0;
  const char* last = name.data() + name.size();
  const auto result = std::from_chars(name.data() + 1, last, index);
  if (result.ec != std::errc{} || result.ptr != last || index < 0 || index > kMaxLaneIndex) {
    return std::nullopt;
  }
  return index;
}

bool is_worker(std::string_view proc) { return is_client(proc) || proc == "probe"; }

RunFacts run_facts(const History& history) {
  RunFacts facts;
  if (history.events.empty()) return facts;
  facts.origin = history.events.front().t;
  for (const Event& event : history.events) {
    if (event.kind != EventKind::run) continue;
    facts.origin = event.t;
    facts.node_count = std::max<std::int64_t>(event.count, 0);
    facts.ttl_ms = event.ttl_ms;
    break;
  }
  for (const Event& event : history.events) facts.end = std::max(facts.end, event.t);
  facts.end = std::max(facts.end, facts.origin);
  return facts;
}

std::vector<Window> collect_windows(const History& history) {
  std::vector<Window> windows;
  // (proc, value) -> the latest window of that holding.
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> latest;
  for (const Event& event : history.events) {
    if (!is_worker(event.proc)) continue;
    const std::pair<std::string_view, std::string_view> holding{event.proc, event.value};
    if (event.kind == EventKind::acquire && event.phase == Phase::ok) {
      latest[holding] = windows.size();
      windows.push_back(Window{&event, claimed_deadline(event), std::nullopt});
      continue;
    }
    const auto found = latest.find(holding);
    if (found == latest.end()) continue;
    Window& window = windows[found->second];
    if (event.kind == EventKind::extend && event.phase == Phase::ok) {
      window.deadline = std::max(window.deadline, claimed_deadline(event));
    } else if (event.kind == EventKind::release && event.phase == Phase::invoke &&
               !window.released) {
      window.released = event.t;
    }
  }
  return windows;
}

// A fault lasts from its invoke to the nemesis event that ends it (same op,
// else same fault and target); a heal ends every fault still open, since it
// heals everything; a fault never ended lasts to the end of the run.
std::vector<FaultSpan> collect_faults(const History& history, std::int64_t run_end) {
  std::vector<FaultSpan> spans;
  std::vector<std::size_t> open;
  for (const Event& event : history.events) {
    if (event.kind == EventKind::heal && event.phase == Phase::ok) {
      for (const std::size_t index : open) {
        spans[index] = {spans[index].started, event.t, FaultEnd::heal};
      }
      open.clear();
    }
    if (event.kind != EventKind::nemesis) continue;
    if (event.phase == Phase::invoke) {
      open.push_back(spans.size());
      spans.push_back(FaultSpan{&event, std::max(run_end, event.t), FaultEnd::run_end});
      continue;
    }
    for (const bool by_op : {true, false}) {
      const auto match = std::find_if(open.begin(), open.end(), [&](std::size_t index) {
        return ends_fault(event, *spans[index].started, by_op);
      });
      if (match == open.end()) continue;
      spans[*match].end = std::max(event.t, spans[*match].started->t);
      spans[*match].ended_by = FaultEnd::own_event;
      open.erase(match);
      break;
    }
  }
  return spans;
}

FaultPlacement place_fault(const Event& started) {
  const std::string_view target = started.target;
  if (numbered_name(target, 'n')) return {started.target, "node", started.fault};
  if (is_worker(target)) return {started.target, "client", started.fault};
  const std::size_t arrow = target.find("->");
  if (arrow != std::string_view::npos) {
    const std::string_view from = target.substr(0, arrow);
    const std::string_view to = target.substr(arrow + 2);
    if (is_worker(from)) {
      return {std::string(from), "link", started.fault + " to " + std::string(to)};
    }
    if (is_worker(to)) {
      return {std::string(to), "link", started.fault + " from " + std::string(from)};
    }
    if (numbered_name(from, 'n')) {
      return {std::string(from), "link", started.fault + " to " + std::string(to)};
    }
  }
  return {std::string(kOtherLane), "other", started.fault + " " + started.target};
}

LaneMap::LaneMap(const History& history, const RunFacts& run,
                 const std::vector<FaultPlacement>& placements, const CheckResult* check) {
  int clients = 0;
  bool probe = false;
  bool other = false;
  std::int64_t nodes = run.node_count;
  const auto note = [&](std::string_view name) {
    if (const auto client = numbered_name(name, 'c')) clients = std::max(clients, *client + 1);
    if (const auto node = numbered_name(name, 'n')) {
      nodes = std::max<std::int64_t>(nodes, *node + 1);
    }
    probe = probe || name == "probe";
    other = other || name == kOtherLane;
  };
  for (const Event& event : history.events) note(event.proc);
  for (const FaultPlacement& placement : placements) note(placement.lane);
  if (check != nullptr) {
    for (const Finding& finding : check->findings) note(finding.proc);
  }
  for (int index = 0; index < clients; ++index) add("c" + std::to_string(index), LaneKind::client);
  if (probe) add("probe", LaneKind::probe);
  for (std::int64_t index = 0; index < nodes; ++index)
    add("n" + std::to_string(index), LaneKind::node);
  if (other) add(std::string(kOtherLane), LaneKind::other);
}

void LaneMap::add(std::string name, LaneKind kind) {
  const bool worker = kind == LaneKind::client || kind == LaneKind::probe;
  Lane lane{std::move(name), kind, bottom(), worker ? kWorkerLaneHeight : kNodeLaneHeight};
  by_name_.emplace(lane.name, lanes_.size());
  lanes_.push_back(std::move(lane));
}

}  // namespace redlock::chaos::report_internal
