// The HTML report of one chaos run (report.hpp).
//
// Rendering happens in two steps: a model is derived from the history
// (validity windows per holding, fault spans, the lanes), then drawn. Every
// string that comes from the history or the scenario goes through
// append_html_escaped() on its way into the page, in text and attributes alike,
// so a lock value or an error message can never become markup.
#include "report.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace redlock::chaos {
namespace {

constexpr std::int64_t kNsPerMs = 1'000'000;
constexpr std::int64_t kNsPerSecond = 1'000'000'000;
// A span used when the run has no length yet (only the run event).
constexpr std::int64_t kEmptyRunSpanNs = kNsPerSecond;
// Lane indices above this are taken as garbage, not as 10^9 empty lanes.
constexpr int kMaxLaneIndex = 1024;

// ------------------------------------------------------------------ text

std::string fixed(double value, int decimals) {
  std::array<char, 48> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                    std::chars_format::fixed, decimals);
  if (result.ec != std::errc{}) return "0";
  return {buffer.data(), result.ptr};
}

// Without trailing zeros: a page with 10 000 elements repeats these a lot.
std::string compact(double value, int decimals) {
  std::string text = fixed(value, decimals);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  return text;
}

double to_ms(std::int64_t ns) { return static_cast<double>(ns) / static_cast<double>(kNsPerMs); }

// For people: "850.0 ms", "12.345 s".
std::string format_duration(std::int64_t ns) {
  if (ns >= kNsPerSecond || ns <= -kNsPerSecond) {
    return fixed(static_cast<double>(ns) / static_cast<double>(kNsPerSecond), 3) + " s";
  }
  return fixed(to_ms(ns), 1) + " ms";
}

// ------------------------------------------------------------- processes

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

bool is_client(std::string_view proc) { return numbered_name(proc, 'c').has_value(); }
bool is_worker(std::string_view proc) { return is_client(proc) || proc == "probe"; }

// ----------------------------------------------------------------- model

struct RunFacts {
  std::int64_t origin = 0;  // the run event's t: x = 0
  std::int64_t end = 0;     // the last event's t: the end of the run
  std::int64_t node_count = 0;
  std::int64_t ttl_ms = 0;
};

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

// The claimed deadline of an acquire / extend ok; from the validity when the
// event does not carry one.
std::int64_t claimed_deadline(const Event& event) {
  return event.deadline_t != 0 ? event.deadline_t : event.t + event.validity_ms * kNsPerMs;
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

enum class FaultEnd { own_event, heal, run_end };

struct FaultSpan {
  const Event* started = nullptr;  // the nemesis invoke
  std::int64_t end = 0;
  FaultEnd ended_by = FaultEnd::run_end;
};

bool ends_fault(const Event& ending, const Event& started, bool by_op) {
  if (by_op) return ending.op != 0 && ending.op == started.op && ending.proc == started.proc;
  return ending.fault == started.fault && ending.target == started.target;
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

// Where a fault is drawn: node faults fill the node's lane; faults on a
// client or on a client's link are a thin band on that client's lane.
struct FaultPlacement {
  std::string lane;
  std::string_view style;  // "node", "client", "link", "other"
  std::string label;
};

constexpr std::string_view kOtherLane = "other";

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
constexpr double kViewWidth = 1200;
constexpr double kPlotLeft = 56;
constexpr double kPlotRight = 1176;
constexpr double kLanesTop = 30;
constexpr double kWorkerLaneHeight = 46;
constexpr double kNodeLaneHeight = 28;
constexpr double kCharWidth = 6.2;  // of the 11 px labels, to decide whether one fits

class LaneMap {
 public:
  LaneMap(const History& history, const RunFacts& run,
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
    for (int index = 0; index < clients; ++index)
      add("c" + std::to_string(index), LaneKind::client);
    if (probe) add("probe", LaneKind::probe);
    for (std::int64_t index = 0; index < nodes; ++index)
      add("n" + std::to_string(index), LaneKind::node);
    if (other) add(std::string(kOtherLane), LaneKind::other);
  }

  [[nodiscard]] const std::vector<Lane>& lanes() const { return lanes_; }
  [[nodiscard]] double bottom() const {
    return lanes_.empty() ? kLanesTop : lanes_.back().bottom();
  }
  [[nodiscard]] const Lane* find(std::string_view name) const {
    const auto found = by_name_.find(name);
    return found == by_name_.end() ? nullptr : &lanes_[found->second];
  }

 private:
  void add(std::string name, LaneKind kind) {
    const bool worker = kind == LaneKind::client || kind == LaneKind::probe;
    Lane lane{std::move(name), kind, bottom(), worker ? kWorkerLaneHeight : kNodeLaneHeight};
    by_name_.emplace(lane.name, lanes_.size());
    lanes_.push_back(std::move(lane));
  }

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

std::string px(double value) { return compact(value, 1); }

// --------------------------------------------------------------- drawing

class Chart {
 public:
  Chart(std::string& out, const LaneMap& lanes, const TimeScale& scale)
      : out_(out), lanes_(lanes), scale_(scale) {}

  void lane_backgrounds() {
    bool even = true;
    const Lane* previous = nullptr;
    for (const Lane& lane : lanes_.lanes()) {
      out_ += "<rect class=\"lane ";
      out_ += even ? "even" : "odd";
      out_ += "\" data-lane=\"";
      append_html_escaped(out_, lane.name);
      out_ += "\" x=\"0\" y=\"" + px(lane.top) + "\" width=\"" + px(kViewWidth) + "\" height=\"" +
              px(lane.height) + "\"/><text class=\"lane-label\" x=\"" + px(kPlotLeft - 8) +
              "\" y=\"" + px(lane.top + lane.height / 2 + 4) + "\">";
      append_html_escaped(out_, lane.name);
      out_ += "</text>";
      if (previous != nullptr && previous->kind != lane.kind) {
        out_ += "<line class=\"group-edge\" x1=\"0\" x2=\"" + px(kViewWidth) + "\" y1=\"" +
                px(lane.top) + "\" y2=\"" + px(lane.top) + "\"/>";
      }
      previous = &lane;
      even = !even;
    }
  }

  // Grid lines through the lanes and the labelled axis under them.
  void axis() {
    const std::int64_t step = tick_step(scale_.span());
    const std::int64_t unit = scale_.span() >= 2 * kNsPerSecond ? kNsPerSecond : kNsPerMs;
    const int decimals = decimals_of(step, unit);
    const std::string_view unit_name = unit == kNsPerSecond ? " s" : " ms";
    const double axis_y = lanes_.bottom();
    out_ += "<line class=\"axis\" x1=\"" + px(kPlotLeft) + "\" x2=\"" + px(kPlotRight) +
            "\" y1=\"" + px(axis_y) + "\" y2=\"" + px(axis_y) + "\"/>";
    // The origin is the run event's time, so ticks start at 0.
    for (std::int64_t offset = 0; offset <= scale_.span(); offset += step) {
      const double x = kPlotLeft + static_cast<double>(offset) /
                                       static_cast<double>(scale_.span()) *
                                       (kPlotRight - kPlotLeft);
      out_ += "<line class=\"grid\" x1=\"" + px(x) + "\" x2=\"" + px(x) + "\" y1=\"" +
              px(kLanesTop) + "\" y2=\"" + px(axis_y + 5) + "\"/><text class=\"tick-label\" x=\"" +
              px(x) + "\" y=\"" + px(axis_y + 18) + "\">" +
              fixed(static_cast<double>(offset) / static_cast<double>(unit), decimals) +
              std::string(unit_name) + "</text>";
    }
  }

  void window(const Window& window) {
    const Lane* lane = lanes_.find(window.acquired->proc);
    if (lane == nullptr) return;
    const double x1 = scale_.x(window.acquired->t);
    const double width = std::max(scale_.x(window.end()) - x1, 1.0);
    out_ += "<rect class=\"window\"";
    event_attributes(*window.acquired);
    out_ += " data-end-ms=\"" + scale_.ms(window.end()) + "\"";
    if (window.acquired->token) {
      out_ += " data-token=\"" + std::to_string(*window.acquired->token) + "\"";
    }
    out_ += " x=\"" + px(x1) + "\" y=\"" + px(lane->top + 16) + "\" width=\"" + px(width) +
            "\" height=\"16\"/>";
    if (window.acquired->token) {
      label(x1 + 3, lane->top + 28, width - 4, "#" + std::to_string(*window.acquired->token),
            "bar-label");
    }
  }

  void fault(const FaultSpan& span, const FaultPlacement& placement) {
    const Lane* lane = lanes_.find(placement.lane);
    if (lane == nullptr) return;
    const Event& started = *span.started;
    const bool band = placement.style != "node";
    const double x1 = scale_.x(started.t);
    const double width = std::max(scale_.x(span.end) - x1, 2.0);
    const double top = band && lane->kind != LaneKind::other ? lane->top + 2 : lane->top + 3;
    const double height = band && lane->kind != LaneKind::other ? 11 : lane->height - 6;
    out_ += "<rect class=\"fault ";
    out_ += placement.style;
    if (span.ended_by == FaultEnd::run_end) out_ += " open";
    out_ += "\"";
    event_attributes(started);
    out_ += " data-end-ms=\"" + scale_.ms(span.end) + "\" data-fault=\"";
    append_html_escaped(out_, started.fault);
    out_ += "\" data-target=\"";
    append_html_escaped(out_, started.target);
    out_ += "\" x=\"" + px(x1) + "\" y=\"" + px(top) + "\" width=\"" + px(width) + "\" height=\"" +
            px(height) + "\"/>";
    if (band) {
      label(x1 + 3, top + 9, width - 4, placement.label, "band-label");
    } else {
      label(x1 + 4, top + height / 2 + 4, width - 6, placement.label, "fault-label");
    }
  }

  // Ticks for acquire / extend oks, dots for resource writes and appends.
  void event_mark(const Event& event) {
    const Lane* lane = lanes_.find(event.proc);
    if (lane == nullptr || (lane->kind != LaneKind::client && lane->kind != LaneKind::probe)) {
      return;
    }
    const double x = scale_.x(event.t);
    if ((event.kind == EventKind::acquire || event.kind == EventKind::extend) &&
        event.phase == Phase::ok) {
      out_ += event.kind == EventKind::acquire ? "<line class=\"tick acquire\""
                                               : "<line class=\"tick extend\"";
      event_attributes(event);
      out_ += " x1=\"" + px(x) + "\" x2=\"" + px(x) + "\" y1=\"" + px(lane->top + 13) + "\" y2=\"" +
              px(lane->top + 35) + "\"/>";
      return;
    }
    if ((event.kind != EventKind::write && event.kind != EventKind::append) ||
        event.phase == Phase::invoke) {
      return;
    }
    const double y = lane->top + 40;
    const bool write = event.kind == EventKind::write;
    out_ += write ? "<circle class=\"write " : "<rect class=\"append ";
    out_ += outcome_class(event);
    out_ += "\"";
    event_attributes(event);
    if (event.token) out_ += " data-token=\"" + std::to_string(*event.token) + "\"";
    if (write) {
      out_ += " cx=\"" + px(x) + "\" cy=\"" + px(y) + "\" r=\"3.5\"/>";
    } else {
      out_ += " x=\"" + px(x - 3) + "\" y=\"" + px(y - 3) + "\" width=\"6\" height=\"6\"/>";
    }
  }

  void heal(const Event& event) {
    const double x = scale_.x(event.t);
    out_ += "<line class=\"heal\"";
    event_attributes(event);
    out_ += " x1=\"" + px(x) + "\" x2=\"" + px(x) + "\" y1=\"" + px(kLanesTop - 12) + "\" y2=\"" +
            px(lanes_.bottom()) + "\"/><text class=\"heal-label\" x=\"" + px(x + 3) + "\" y=\"" +
            px(kLanesTop - 4) + "\">heal</text>";
  }

  // A red line over the finding's lane (or every lane when it names none)
  // with a triangle on top; the <title> is the tooltip.
  void finding(const Finding& finding) {
    const Lane* lane = lanes_.find(finding.proc);
    const double top = lane != nullptr ? lane->top : kLanesTop;
    const double bottom = lane != nullptr ? lane->bottom() : lanes_.bottom();
    const double x = scale_.x(finding.t);
    const std::string_view id = checked_invariant_id(finding.invariant);
    out_ += "<g class=\"finding\" data-proc=\"";
    append_html_escaped(out_, finding.proc);
    out_ += "\" data-t-ms=\"" + scale_.ms(finding.t) + "\" data-invariant=\"" + std::string(id) +
            "\"><title>" + std::string(id) + ": ";
    append_html_escaped(out_, finding.message);
    out_ += "</title><line x1=\"" + px(x) + "\" x2=\"" + px(x) + "\" y1=\"" + px(top) + "\" y2=\"" +
            px(bottom) + "\"/><path d=\"M" + px(x - 5) + " " + px(top) + "h10l-5 8z\"/><text x=\"" +
            px(x + 6) + "\" y=\"" + px(top + 9) + "\">" + std::string(id) + "</text></g>";
  }

  static std::string_view checked_invariant_id(int index) {
    return index >= 0 && index < kInvariantCount ? invariant_id(index) : std::string_view("C?");
  }

  // One row (wrapping) of swatches under the axis; returns the bottom.
  double legend() {
    struct Item {
      std::string_view swatch;
      std::string_view text;
    };
    static constexpr std::array<Item, 11> kItems{{
        {"window", "validity window (#token)"},
        {"acquire", "acquire ok"},
        {"extend", "extend ok"},
        {"ok", "write (circle) / append (square) accepted"},
        {"fenced", "fenced out"},
        {"failed", "failed or unknown"},
        {"node", "node fault"},
        {"band", "client / link fault"},
        {"heal", "heal"},
        {"finding", "checker finding (hover for message)"},
        {"open", "fault never ended"},
    }};
    double x = kPlotLeft;
    double y = lanes_.bottom() + 36;
    for (const Item& item : kItems) {
      const double width = 24 + static_cast<double>(item.text.size()) * kCharWidth + 18;
      if (x + width > kPlotRight) {
        x = kPlotLeft;
        y += 20;
      }
      swatch(item.swatch, x, y);
      out_ += "<text class=\"legend-label\" x=\"" + px(x + 22) + "\" y=\"" + px(y + 4) + "\">" +
              std::string(item.text) + "</text>";
      x += width;
    }
    return y + 14;
  }

 private:
  void event_attributes(const Event& event) {
    out_ += " data-proc=\"";
    append_html_escaped(out_, event.proc);
    out_ += "\" data-t-ms=\"" + scale_.ms(event.t) + "\"";
  }

  // Labels are drawn only where they fit: 10 000 tiny bars stay bars.
  void label(double x, double y, double room, std::string_view text, std::string_view css_class) {
    if (static_cast<double>(text.size()) * kCharWidth > room) return;
    out_ += "<text class=\"";
    out_ += css_class;
    out_ += "\" x=\"" + px(x) + "\" y=\"" + px(y) + "\">";
    append_html_escaped(out_, text);
    out_ += "</text>";
  }

  static std::string_view outcome_class(const Event& event) {
    if (event.phase == Phase::ok) return "ok";
    if (event.phase == Phase::fail && event.error.find("fenced") != std::string::npos) {
      return "fenced";
    }
    return "failed";
  }

  // Legend swatches use their own classes so that counting the chart's
  // elements by class never counts the legend.
  void swatch(std::string_view kind, double x, double y) {
    const std::string left = px(x);
    const std::string mid = px(x + 8);
    if (kind == "window") {
      out_ += "<rect class=\"lg-window\" x=\"" + left + "\" y=\"" + px(y - 5) +
              "\" width=\"16\" height=\"10\"/>";
    } else if (kind == "acquire" || kind == "extend") {
      out_ += "<line class=\"lg-" + std::string(kind) + "\" x1=\"" + mid + "\" x2=\"" + mid +
              "\" y1=\"" + px(y - 7) + "\" y2=\"" + px(y + 7) + "\"/>";
    } else if (kind == "ok" || kind == "fenced" || kind == "failed") {
      out_ += "<circle class=\"lg-" + std::string(kind) + "\" cx=\"" + px(x + 4) + "\" cy=\"" +
              px(y) + "\" r=\"3.5\"/><rect class=\"lg-" + std::string(kind) + "\" x=\"" +
              px(x + 10) + "\" y=\"" + px(y - 3) + "\" width=\"6\" height=\"6\"/>";
    } else if (kind == "node" || kind == "band" || kind == "open") {
      out_ += "<rect class=\"lg-" + std::string(kind) + "\" x=\"" + left + "\" y=\"" +
              px(kind == "band" ? y - 3 : y - 6) + "\" width=\"16\" height=\"" +
              (kind == "band" ? "7" : "12") + "\"/>";
    } else if (kind == "heal") {
      out_ += "<line class=\"lg-heal\" x1=\"" + mid + "\" x2=\"" + mid + "\" y1=\"" + px(y - 8) +
              "\" y2=\"" + px(y + 8) + "\"/>";
    } else {
      out_ += "<g class=\"lg-finding\"><line x1=\"" + mid + "\" x2=\"" + mid + "\" y1=\"" +
              px(y - 8) + "\" y2=\"" + px(y + 8) + "\"/><path d=\"M" + left + " " + px(y - 8) +
              "h16l-8 9z\"/></g>";
    }
  }

  // 1, 2 or 5 times a power of ten, for about ten ticks.
  static std::int64_t tick_step(std::int64_t span) {
    const std::int64_t wanted = std::max<std::int64_t>(span / 10, 1);
    std::int64_t magnitude = 1;
    while (magnitude <= wanted / 10) magnitude *= 10;
    for (const std::int64_t factor : {1, 2, 5}) {
      if (factor * magnitude >= wanted) return factor * magnitude;
    }
    return 10 * magnitude;
  }

  // Decimals needed to print multiples of `step` in `unit`.
  static int decimals_of(std::int64_t step, std::int64_t unit) {
    int decimals = 0;
    for (std::int64_t divisor = unit; divisor > 1 && step % divisor != 0; divisor /= 10) {
      ++decimals;
    }
    return decimals;
  }

  std::string& out_;
  const LaneMap& lanes_;
  const TimeScale& scale_;
};

// ------------------------------------------------------------------ page

constexpr std::string_view kStyle = R"css(
body{margin:0;background:#fff;color:#1f2328;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
main{max-width:1200px;margin:0 auto;padding:18px 20px 48px}
h1{font-size:22px;margin:0 0 4px;display:flex;align-items:center;gap:12px;word-break:break-all}
h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d8dee4;padding-bottom:4px}
.description{margin:0 0 10px;color:#424a53}
.result{font-size:14px;font-weight:700;padding:2px 10px;border-radius:12px;letter-spacing:.05em}
.result.pass{background:#dafbe1;color:#116329;border:1px solid #4ac26b}
.result.fail{background:#ffebe9;color:#a40e26;border:1px solid #ff8182}
.facts{display:flex;flex-wrap:wrap;gap:6px 26px;margin:0}
.facts div{display:flex;gap:6px}.facts dt{color:#656d76}.facts dd{margin:0;font-weight:600}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:4px 8px;border-bottom:1px solid #e4e8ec}
th{background:#f6f8fa;font-weight:600}
td.id,td.time{white-space:nowrap;font-variant-numeric:tabular-nums}
td.message{word-break:break-word}
.verdict.holds{color:#116329}.verdict.violated{color:#a40e26;font-weight:700}
.verdict.not_applicable,.verdict.unchecked{color:#656d76}
.outcome.yes{color:#116329}.outcome.no{color:#a40e26;font-weight:700}
tr.unexpected td{background:#fff5f4}
.hint{color:#656d76;margin:0 0 6px;font-size:13px}
.chart{border:1px solid #d8dee4;border-radius:6px;overflow:hidden}
svg.timeline{display:block;width:100%;height:auto;background:#fff}
svg text{font-size:11px;fill:#1f2328;font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
.lane.even{fill:#f4f6f8}.lane.odd{fill:#fff}
.lane-label{text-anchor:end;font-weight:600;font-size:12px}
.group-edge{stroke:#8c959f;stroke-width:1}
.grid{stroke:#d8dee4;stroke-width:1}.axis{stroke:#57606a;stroke-width:1}
.tick-label{text-anchor:middle;fill:#424a53}
.window,.lg-window{fill:#b6d4fe;stroke:#2f6fd0;stroke-width:1}
.bar-label{fill:#0b2f6b;font-weight:600}
.tick.acquire,.lg-acquire{stroke:#0b3d91;stroke-width:2}
.tick.extend,.lg-extend{stroke:#8250df;stroke-width:2}
.write.ok,.append.ok,.lg-ok{fill:#1f9d46}
.write.fenced,.append.fenced,.lg-fenced{fill:#d1242f}
.write.failed,.append.failed,.lg-failed{fill:#8c959f}
.fault.node,.lg-node{fill:#ffd8a8;stroke:#d9730d;stroke-width:1}
.fault.client,.fault.link,.fault.other,.lg-band{fill:#ffb35c;stroke:#c75e00;stroke-width:.5}
.fault.open,.lg-open{stroke-dasharray:4 3;stroke:#9a3412;stroke-width:1.5}
.lg-open{fill:#ffd8a8}
.fault-label{fill:#7a3300;font-weight:600}.band-label{fill:#5c2600;font-size:9px}
.heal,.lg-heal{stroke:#1a7f37;stroke-width:1.5;stroke-dasharray:6 4}
.heal-label{fill:#1a7f37;font-weight:600}
.finding line,.lg-finding line{stroke:#e5001a;stroke-width:1.5}
.finding path,.lg-finding path{fill:#e5001a}
.finding text{fill:#c0001a;font-weight:700;font-size:10px}
.legend-label{fill:#424a53}
.none{color:#656d76}
)css";

std::string_view expectation_text(Expectation expectation) {
  switch (expectation) {
    case Expectation::holds:
      return "must hold";
    case Expectation::violated:
      return "must be violated";
    case Expectation::may:
      return "either";
  }
  return "either";
}

bool meets(Expectation expectation, Verdict verdict) {
  switch (expectation) {
    case Expectation::holds:
      return verdict != Verdict::violated;
    case Expectation::violated:
      return verdict == Verdict::violated;
    case Expectation::may:
      return true;
  }
  return true;
}

void append_fact(std::string& out, std::string_view name, std::string_view value) {
  out += "<div><dt>";
  out += name;
  out += "</dt><dd>";
  append_html_escaped(out, value);
  out += "</dd></div>";
}

void append_header(std::string& out, const ReportInput& input, const History& history,
                   const RunFacts& run, const LaneMap& lanes, std::size_t finding_count) {
  std::size_t clients = 0;
  for (const Lane& lane : lanes.lanes()) clients += lane.kind == LaneKind::client ? 1 : 0;
  out += "<header><h1>";
  out += input.passed ? "<span class=\"result pass\">PASS</span>"
                      : "<span class=\"result fail\">FAIL</span>";
  out += "<span class=\"scenario\">";
  append_html_escaped(out, input.scenario);
  out += "</span></h1><p class=\"description\">";
  append_html_escaped(out, input.description);
  out += "</p><dl class=\"facts\">";
  append_fact(out, "variant", input.variant);
  append_fact(out, "seed", std::to_string(input.seed));
  append_fact(out, "run length", format_duration(run.end - run.origin));
  append_fact(out, "nodes", std::to_string(run.node_count));
  append_fact(out, "clients", std::to_string(clients));
  if (run.ttl_ms > 0) append_fact(out, "TTL", std::to_string(run.ttl_ms) + " ms");
  append_fact(out, "events", std::to_string(history.events.size()));
  append_fact(out, "findings", std::to_string(finding_count));
  out += "</dl></header>";
}

void append_invariants(std::string& out, const ReportInput& input) {
  std::array<std::size_t, kInvariantCount> finding_counts{};
  int as_expected = 0;
  if (input.check != nullptr) {
    for (const Finding& finding : input.check->findings) {
      if (finding.invariant >= 0 && finding.invariant < kInvariantCount) {
        ++finding_counts.at(static_cast<std::size_t>(finding.invariant));
      }
    }
  }
  std::string rows;
  for (int index = 0; index < kInvariantCount; ++index) {
    const auto slot = static_cast<std::size_t>(index);
    const Expectation expectation = input.expectations.at(slot);
    const bool checked = input.check != nullptr;
    const bool ok = checked && meets(expectation, input.check->verdicts.at(slot));
    as_expected += ok ? 1 : 0;
    const std::string verdict =
        checked ? std::string(to_string(input.check->verdicts.at(slot))) : std::string("unchecked");
    rows += ok ? "<tr class=\"inv\">" : "<tr class=\"inv unexpected\">";
    rows += "<td class=\"id\">" + std::string(invariant_id(index)) + "</td><td>";
    append_html_escaped(rows, invariant_title(index));
    rows += "</td><td class=\"verdict ";
    append_html_escaped(rows, verdict);
    rows += "\">";
    append_html_escaped(rows, verdict);
    rows += "</td><td>" + std::string(expectation_text(expectation)) + "</td><td>" +
            std::to_string(finding_counts.at(slot)) + "</td><td class=\"outcome " +
            (ok ? "yes\">yes" : "no\">no") + "</td></tr>";
  }
  out += "<section><h2>Invariants</h2><p class=\"hint\">" + std::to_string(as_expected) + " of " +
         std::to_string(kInvariantCount) +
         " as expected.</p><table class=\"invariants\"><thead><tr><th>Id</th><th>Invariant</th>"
         "<th>Verdict</th><th>Expected</th><th>Findings</th><th>As expected</th></tr></thead>"
         "<tbody>" +
         rows + "</tbody></table></section>";
}

void append_timeline(std::string& out, const History& history, const CheckResult* check,
                     const RunFacts& run, const std::vector<FaultSpan>& faults,
                     const std::vector<FaultPlacement>& placements, const LaneMap& lanes) {
  std::int64_t end = run.end;
  if (check != nullptr) {
    for (const Finding& finding : check->findings) end = std::max(end, finding.t);
  }
  const std::int64_t span = end > run.origin ? end - run.origin : kEmptyRunSpanNs;
  const TimeScale scale(run.origin, span);

  // The SVG goes into its own buffer first: its height is known at the end.
  std::string svg;
  svg.reserve(history.events.size() * 120 + 4096);
  Chart chart(svg, lanes, scale);
  chart.lane_backgrounds();
  chart.axis();
  for (std::size_t index = 0; index < faults.size(); ++index) {
    if (placements[index].style == "node") chart.fault(faults[index], placements[index]);
  }
  for (const Window& window : collect_windows(history)) chart.window(window);
  for (std::size_t index = 0; index < faults.size(); ++index) {
    if (placements[index].style != "node") chart.fault(faults[index], placements[index]);
  }
  for (const Event& event : history.events) chart.event_mark(event);
  for (const Event& event : history.events) {
    if (event.kind == EventKind::heal && event.phase == Phase::ok) chart.heal(event);
  }
  if (check != nullptr) {
    for (const Finding& finding : check->findings) chart.finding(finding);
  }
  const double height = chart.legend() + 8;

  out +=
      "<section><h2>Timeline</h2><p class=\"hint\">Time since the run event. Hover a red "
      "marker to read its finding.</p><div class=\"chart\"><svg class=\"timeline\" viewBox=\"0 0 " +
      px(kViewWidth) + " " + px(height) + "\" role=\"img\" aria-label=\"timeline of the run\">";
  out += svg;
  out += "</svg></div></section>";
}

void append_findings(std::string& out, const CheckResult* check, std::int64_t origin) {
  out += "<section><h2>Findings</h2>";
  if (check == nullptr || check->findings.empty()) {
    out += "<p class=\"none\">No findings.</p></section>";
    return;
  }
  out +=
      "<table class=\"findings\"><thead><tr><th>Time</th><th>Invariant</th><th>Process</th>"
      "<th>Message</th></tr></thead><tbody>";
  for (const Finding& finding : check->findings) {
    out += "<tr class=\"finding-row\"><td class=\"time\">" + format_duration(finding.t - origin) +
           "</td><td class=\"id\">" + std::string(Chart::checked_invariant_id(finding.invariant)) +
           "</td><td>";
    append_html_escaped(out, finding.proc);
    out += "</td><td class=\"message\">";
    append_html_escaped(out, finding.message);
    out += "</td></tr>";
  }
  out += "</tbody></table></section>";
}

}  // namespace

std::string render_report_html(const ReportInput& input) {
  static const History kNoHistory;
  const History& history = input.history != nullptr ? *input.history : kNoHistory;
  const RunFacts run = run_facts(history);
  const std::vector<FaultSpan> faults = collect_faults(history, run.end);
  std::vector<FaultPlacement> placements;
  placements.reserve(faults.size());
  for (const FaultSpan& span : faults) placements.push_back(place_fault(*span.started));
  const LaneMap lanes(history, run, placements, input.check);
  const std::size_t finding_count = input.check != nullptr ? input.check->findings.size() : 0;

  std::string out;
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>";
  out += input.passed ? "PASS " : "FAIL ";
  append_html_escaped(out, input.scenario);
  out += " (";
  append_html_escaped(out, input.variant);
  out += ")</title><style>";
  out += kStyle;
  out += "</style></head><body><main>";
  append_header(out, input, history, run, lanes, finding_count);
  append_invariants(out, input);
  append_timeline(out, history, input.check, run, faults, placements, lanes);
  append_findings(out, input.check, run.origin);
  out += "</main></body></html>\n";
  return out;
}

void append_html_escaped(std::string& out, std::string_view text) {
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
}

}  // namespace redlock::chaos
