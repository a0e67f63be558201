// What the report's files share (report.hpp is the interface): the
// model derived from the history (run facts, validity windows, fault spans
// and where they are drawn, the lanes), the time scale, the chart that
// draws the SVG timeline, and the number formats they all print with.
// report_format.cpp formats numbers, report_model.cpp derives the model,
// report_chart.cpp draws, report.cpp assembles the page. Not for use
// outside the report.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "checker.hpp"
#include "history.hpp"

namespace redlock::chaos::report_internal {

inline constexpr std::int64_t kNsPerMs = 1'000'000;
inline constexpr std::int64_t kNsPerSecond = 1'000'000'000;
// A span used when the run has no length yet (only the run event).
inline constexpr std::int64_t kEmptyRunSpanNs = kNsPerSecond;
// Lane indices above this are taken as garbage, not as 10^9 empty lanes.
inline constexpr int kMaxLaneIndex = 1024;

// ------------------------------------------------------------------ text
// (report_format.cpp)

[[nodiscard]] std::string fixed(double value, int decimals);
[[nodiscard]] std::string compact(double value, int decimals);
[[nodiscard]] double to_ms(std::int64_t ns);
[[nodiscard]] std::string format_duration(std::int64_t ns);
// An SVG coordinate or length, to 0.1 user unit.
[[nodiscard]] std::string px(double value);

// ----------------------------------------------------------------- model
// (report_model.cpp)

[[nodiscard]] std::optional<int> numbered_name(std::string_view name, char prefix);
// A client ("c<i>") or the probe: the processes that hold locks.
[[nodiscard]] bool is_worker(std::string_view proc);

struct RunFacts {
  std::int64_t origin = 0;  // the run event's t: x = 0
  std::int64_t end = 0;     // the last event's t: the end of the run
  std::int64_t node_count = 0;
  std::int64_t ttl_ms = 0;
};

[[nodiscard]] RunFacts run_facts(const History& history);

// One holding's validity window as its client saw it.
struct Window {
  const Event* acquired = nullptr;       // the acquire ok
  std::int64_t deadline = 0;             // raised by each extend ok
  std::optional<std::int64_t> released;  // the release invoke cuts the window
  [[nodiscard]] std::int64_t end() const {
    const std::int64_t cut = released ? std::min(deadline, *released) : deadline;
    return std::max(cut, acquired->t);
  }
};

// The windows of the clients' and the probe's holdings, in acquire order.
[[nodiscard]] std::vector<Window> collect_windows(const History& history);

enum class FaultEnd { own_event, heal, run_end };

struct FaultSpan {
  const Event* started = nullptr;  // the nemesis invoke
  std::int64_t end = 0;
  FaultEnd ended_by = FaultEnd::run_end;
};

// Every fault the nemesis started, from its invoke to what ended it.
[[nodiscard]] std::vector<FaultSpan> collect_faults(const History& history, std::int64_t run_end);

// Where a fault is drawn: node faults fill the node's lane; faults on a
// client or on a client's link are a thin band on that client's lane.
struct FaultPlacement {
  std::string lane;
  std::string_view style;  // "node", "client", "link", "other"
  std::string label;
};

inline constexpr std::string_view kOtherLane = "other";

[[nodiscard]] FaultPlacement place_fault(const Event& started);

// ---------------------------------------------------------------- series
// (report_series.cpp)

struct CounterPoint {
  std::int64_t t = 0;
  std::int64_t value = 0;
  const Event* write = nullptr;
};

// A write that did not move the counter forward: it wrote a value at or
// below the one already there, from a read made before the writes it
// overwrote (a lost update).
struct StaleWrite {
  const Event* write = nullptr;
  const Event* read = nullptr;  // the read ok it was based on, when recorded
  std::int64_t overwrote = 0;   // the counter's value just before it
};

// The counter of the run's resource (the first key written) after each
// accepted write, and the harness's final snapshot of it.
struct CounterSeries {
  std::string key;
  std::vector<CounterPoint> points;
  std::vector<StaleWrite> stale;
  std::int64_t accepted = 0;
  std::optional<std::int64_t> final_value;
};

[[nodiscard]] CounterSeries collect_counter(const History& history);

// One node's holding of one acquisition's value, as the replies show it.
struct NodeHolding {
  int node = 0;
  const Event* acquired = nullptr;  // the acquire ok the node granted
  std::int64_t from = 0;
  std::int64_t to = 0;
  std::int64_t expires = 0;  // its TTL after the last grant or extension
  bool lost = false;         // the node lost it (a restart, or another holder granted)
  bool closed = false;
};

[[nodiscard]] std::vector<NodeHolding> collect_node_holdings(const History& history,
                                                             const RunFacts& run);

// A stretch where two processes' windows over the same thing overlap.
struct Overlap {
  std::int64_t from = 0;
  std::int64_t to = 0;
  std::string_view first;
  std::string_view second;
};

inline constexpr std::size_t kMaxOverlaps = 2000;

[[nodiscard]] std::vector<Overlap> collect_overlaps(const std::vector<Window>& windows);

// ----------------------------------------------------------------- lanes

enum class LaneKind { client, probe, node, other };

struct Lane {
  std::string name;
  LaneKind kind = LaneKind::client;
  double top = 0;
  double height = 0;
  [[nodiscard]] double bottom() const { return top + height; }
};

// SVG user units; the viewBox scales the whole chart to the page width.
inline constexpr double kViewWidth = 1200;
inline constexpr double kPlotLeft = 56;
inline constexpr double kPlotRight = 1176;
inline constexpr double kLanesTop = 30;
inline constexpr double kWorkerLaneHeight = 58;
inline constexpr double kNodeLaneHeight = 28;
// An 11 px bold label's widest characters ('#', digits) in the font a
// browser picks for system-ui (DejaVu Sans on Debian), with the viewBox's
// scaling: to decide whether a label fits, erring on the wide side.
inline constexpr double kCharWidth = 8.0;
inline constexpr double kLabelFontSize = 11;
[[nodiscard]] inline double text_width(std::string_view text, double font_size) {
  return static_cast<double>(text.size()) * kCharWidth * font_size / kLabelFontSize;
}

// One lane per client, the probe, each node, and "other" when a fault has
// no lane of its own, top to bottom.
class LaneMap {
 public:
  LaneMap(const History& history, const RunFacts& run,
          const std::vector<FaultPlacement>& placements, const CheckResult* check);

  [[nodiscard]] const std::vector<Lane>& lanes() const { return lanes_; }
  [[nodiscard]] double bottom() const {
    return lanes_.empty() ? kLanesTop : lanes_.back().bottom();
  }
  [[nodiscard]] const Lane* find(std::string_view name) const {
    const auto found = by_name_.find(name);
    return found == by_name_.end() ? nullptr : &lanes_[found->second];
  }

 private:
  void add(std::string name, LaneKind kind);

  std::vector<Lane> lanes_;
  std::map<std::string, std::size_t, std::less<>> by_name_;
};

// Reference time -> x; times outside the run are pinned to its edges.
class TimeScale {
 public:
  TimeScale(std::int64_t origin, std::int64_t span)
      : origin_(origin), span_(std::max<std::int64_t>(span, 1)) {}
  [[nodiscard]] double x(std::int64_t t) const {
    const double fraction = static_cast<double>(t - origin_) / static_cast<double>(span_);
    return kPlotLeft + std::clamp(fraction, 0.0, 1.0) * (kPlotRight - kPlotLeft);
  }
  [[nodiscard]] std::string ms(std::int64_t t) const { return compact(to_ms(t - origin_), 3); }
  [[nodiscard]] std::int64_t span() const { return span_; }

 private:
  std::int64_t origin_;
  std::int64_t span_;
};

// --------------------------------------------------------------- drawing
// (report_chart.cpp)

// Draws the SVG timeline into `out`, one call per part of it.
class Chart {
 public:
  Chart(std::string& out, const LaneMap& lanes, const TimeScale& scale)
      : out_(&out), chart_(out), lanes_(lanes), scale_(scale) {}
  // Appends what is drawn on top (findings, stale writes): drawn first so
  // that their labels claim their place first, painted last so that no bar
  // covers them.
  void finish() { chart_ += on_top_; }

  void lane_backgrounds();
  void axis();
  void window(const Window& window);
  void fault(const FaultSpan& span, const FaultPlacement& placement);
  void event_mark(const Event& event);
  void heal(const Event& event);
  void overlap(const Overlap& overlap);
  void node_holding(const NodeHolding& holding);
  void mark_stale(const std::vector<StaleWrite>& stale);
  void stale_write(const StaleWrite& stale);
  // Findings close together on one lane and of one invariant share a
  // marker labelled with their count.
  void findings(const std::vector<Finding>& findings);
  static std::string_view checked_invariant_id(int index);
  double legend();

 private:
  struct Box {
    double left, top, right, bottom;
  };
  void event_attributes(const Event& event);
  // Draws `text` at (x, y) when it fits in `room` and overlaps no label
  // drawn before; returns whether it did.
  bool label(double x, double y, double room, std::string_view text, std::string_view css_class,
             double font_size = kLabelFontSize);
  [[nodiscard]] bool reserve(const Box& box);
  void finding_group(const std::vector<const Finding*>& group);
  // While alive, drawing goes to the layer on top.
  class OnTop {
   public:
    explicit OnTop(Chart& chart) : chart_(chart) { chart_.out_ = &chart_.on_top_; }
    ~OnTop() { chart_.out_ = &chart_.chart_; }
    OnTop(const OnTop&) = delete;
    OnTop& operator=(const OnTop&) = delete;

   private:
    Chart& chart_;
  };
  static std::string_view outcome_class(const Event& event);
  void swatch(std::string_view kind, double x, double y);
  static std::int64_t tick_step(std::int64_t span);
  static int decimals_of(std::int64_t step, std::int64_t unit);

  std::string* out_;  // where drawing goes: chart_ or on_top_
  std::string& chart_;
  std::string on_top_;
  const LaneMap& lanes_;
  const TimeScale& scale_;
  std::vector<Box> labels_;
  std::set<const Event*> stale_;
};

// The counter of the run's resource over the run, on the timeline's time
// scale: a step line, each stale write as a drop with its label, the final
// snapshot as a dashed line. Nothing when the run wrote nothing.
void append_counter_chart(std::string& out, const CounterSeries& series, const TimeScale& scale);

}  // namespace redlock::chaos::report_internal
