// The report's SVG timeline: lane backgrounds, the time axis, validity
// windows, faults, client events, heals, the checker's findings and the
// legend, each drawn by one of Chart's members over the lanes and the time
// scale. Every string from the history is HTML-escaped on its way in.
#include <algorithm>
#include <array>
#include <tuple>

#include "report.hpp"
#include "report_internal.hpp"

namespace redlock::chaos::report_internal {

void Chart::lane_backgrounds() {
  bool even = true;
  const Lane* previous = nullptr;
  for (const Lane& lane : lanes_.lanes()) {
    *out_ += "<rect class=\"lane ";
    *out_ += even ? "even" : "odd";
    *out_ += "\" data-lane=\"";
    append_html_escaped(*out_, lane.name);
    *out_ += "\" x=\"0\" y=\"" + px(lane.top) + "\" width=\"" + px(kViewWidth) + "\" height=\"" +
             px(lane.height) + "\"/><text class=\"lane-label\" x=\"" + px(kPlotLeft - 8) +
             "\" y=\"" + px(lane.top + lane.height / 2 + 4) + "\">";
    append_html_escaped(*out_, lane.name);
    *out_ += "</text>";
    if (previous != nullptr && previous->kind != lane.kind) {
      *out_ += "<line class=\"group-edge\" x1=\"0\" x2=\"" + px(kViewWidth) + "\" y1=\"" +
               px(lane.top) + "\" y2=\"" + px(lane.top) + "\"/>";
    }
    previous = &lane;
    even = !even;
  }
}

// Grid lines through the lanes and the labelled axis under them.
void Chart::axis() {
  const std::int64_t step = tick_step(scale_.span());
  const std::int64_t unit = scale_.span() >= 2 * kNsPerSecond ? kNsPerSecond : kNsPerMs;
  const int decimals = decimals_of(step, unit);
  const std::string_view unit_name = unit == kNsPerSecond ? " s" : " ms";
  const double axis_y = lanes_.bottom();
  *out_ += "<line class=\"axis\" x1=\"" + px(kPlotLeft) + "\" x2=\"" + px(kPlotRight) + "\" y1=\"" +
           px(axis_y) + "\" y2=\"" + px(axis_y) + "\"/>";
  // The origin is the run event's time, so ticks start at 0.
  for (std::int64_t offset = 0; offset <= scale_.span(); offset += step) {
    const double x = kPlotLeft + static_cast<double>(offset) / static_cast<double>(scale_.span()) *
                                     (kPlotRight - kPlotLeft);
    *out_ += "<line class=\"grid\" x1=\"" + px(x) + "\" x2=\"" + px(x) + "\" y1=\"" +
             px(kLanesTop) + "\" y2=\"" + px(axis_y + 5) + "\"/><text class=\"tick-label\" x=\"" +
             px(x) + "\" y=\"" + px(axis_y + 18) + "\">" +
             fixed(static_cast<double>(offset) / static_cast<double>(unit), decimals) +
             std::string(unit_name) + "</text>";
  }
}

void Chart::window(const Window& window) {
  const Lane* lane = lanes_.find(window.acquired->proc);
  if (lane == nullptr) return;
  const double x1 = scale_.x(window.acquired->t);
  const double width = std::max(scale_.x(window.end()) - x1, 1.0);
  *out_ += "<rect class=\"window\"";
  event_attributes(*window.acquired);
  *out_ += " data-end-ms=\"" + scale_.ms(window.end()) + "\"";
  if (window.acquired->token) {
    *out_ += " data-token=\"" + std::to_string(*window.acquired->token) + "\"";
  }
  *out_ += " x=\"" + px(x1) + "\" y=\"" + px(lane->top + 16) + "\" width=\"" + px(width) +
           "\" height=\"16\"/>";
  // What the holding holds when it is not the run's one mutex (a permit,
  // a set of resources), then its token.
  const Event& acquired = *window.acquired;
  std::string text;
  if (acquired.permit) {
    text = "p" + std::to_string(*acquired.permit);
  } else {
    for (const std::string& resource : acquired.resources) {
      text += (text.empty() ? "" : ",") + resource;
    }
  }
  if (acquired.token) text += (text.empty() ? "#" : " #") + std::to_string(*acquired.token);
  if (!text.empty()) label(x1 + 3, lane->top + 28, width - 4, text, "bar-label");
}

void Chart::fault(const FaultSpan& span, const FaultPlacement& placement) {
  const Lane* lane = lanes_.find(placement.lane);
  if (lane == nullptr) return;
  const Event& started = *span.started;
  const bool band = placement.style != "node";
  const double x1 = scale_.x(started.t);
  const double width = std::max(scale_.x(span.end) - x1, 2.0);
  const double top = band && lane->kind != LaneKind::other ? lane->top + 2 : lane->top + 3;
  const double height = band && lane->kind != LaneKind::other ? 11 : lane->height - 6;
  *out_ += "<rect class=\"fault ";
  *out_ += placement.style;
  if (span.ended_by == FaultEnd::run_end) *out_ += " open";
  *out_ += "\"";
  event_attributes(started);
  *out_ += " data-end-ms=\"" + scale_.ms(span.end) + "\" data-fault=\"";
  append_html_escaped(*out_, started.fault);
  *out_ += "\" data-target=\"";
  append_html_escaped(*out_, started.target);
  *out_ += "\" x=\"" + px(x1) + "\" y=\"" + px(top) + "\" width=\"" + px(width) + "\" height=\"" +
           px(height) + "\"/>";
  if (band) {
    label(x1 + 3, top + 9, width - 4, placement.label, "band-label", 9);
  } else {
    label(x1 + 4, top + height / 2 + 4, width - 6, placement.label, "fault-label");
  }
}

// Ticks for acquire / extend oks, dots for resource writes and appends.
void Chart::event_mark(const Event& event) {
  const Lane* lane = lanes_.find(event.proc);
  if (lane == nullptr || (lane->kind != LaneKind::client && lane->kind != LaneKind::probe)) {
    return;
  }
  const double x = scale_.x(event.t);
  if ((event.kind == EventKind::acquire || event.kind == EventKind::extend) &&
      event.phase == Phase::ok) {
    *out_ += event.kind == EventKind::acquire ? "<line class=\"tick acquire\""
                                              : "<line class=\"tick extend\"";
    event_attributes(event);
    *out_ += " x1=\"" + px(x) + "\" x2=\"" + px(x) + "\" y1=\"" + px(lane->top + 13) + "\" y2=\"" +
             px(lane->top + 35) + "\"/>";
    return;
  }
  if ((event.kind != EventKind::write && event.kind != EventKind::append) ||
      event.phase == Phase::invoke) {
    return;
  }
  const double y = lane->top + 40;
  const bool write = event.kind == EventKind::write;
  *out_ += write ? "<circle class=\"write " : "<rect class=\"append ";
  *out_ += stale_.count(&event) != 0 ? std::string_view("stale") : outcome_class(event);
  *out_ += "\"";
  event_attributes(event);
  if (event.token) *out_ += " data-token=\"" + std::to_string(*event.token) + "\"";
  if (write) {
    *out_ += " cx=\"" + px(x) + "\" cy=\"" + px(y) + "\" r=\"3.5\"/>";
  } else {
    *out_ += " x=\"" + px(x - 3) + "\" y=\"" + px(y - 3) + "\" width=\"6\" height=\"6\"/>";
  }
}

void Chart::heal(const Event& event) {
  const double x = scale_.x(event.t);
  *out_ += "<line class=\"heal\"";
  event_attributes(event);
  *out_ += " x1=\"" + px(x) + "\" x2=\"" + px(x) + "\" y1=\"" + px(kLanesTop - 12) + "\" y2=\"" +
           px(lanes_.bottom()) + "\"/>";
  label(x + 3, kLanesTop - 4, kPlotRight + 20 - x, "heal", "heal-label");
}

// Findings within kFindingGroupPx of a group's first one, on one lane and of
// one invariant, are one marker: 25 C3 findings in a few milliseconds read
// "C3 ×25", not "C3C3C3...". The <title> lists the first messages; the
// findings section lists them all.
void Chart::findings(const std::vector<Finding>& findings) {
  constexpr double kFindingGroupPx = 30;
  std::vector<const Finding*> sorted;
  sorted.reserve(findings.size());
  for (const Finding& finding : findings) sorted.push_back(&finding);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Finding* a, const Finding* b) {
    return std::tie(a->proc, a->invariant, a->t) < std::tie(b->proc, b->invariant, b->t);
  });
  std::vector<const Finding*> group;
  for (const Finding* finding : sorted) {
    if (!group.empty() &&
        (group.front()->proc != finding->proc || group.front()->invariant != finding->invariant ||
         scale_.x(finding->t) - scale_.x(group.front()->t) > kFindingGroupPx)) {
      finding_group(group);
      group.clear();
    }
    group.push_back(finding);
  }
  if (!group.empty()) finding_group(group);
}

// A red line over the group's lane (or every lane when it names none) with
// a triangle on top and the invariant (and count) beside it.
void Chart::finding_group(const std::vector<const Finding*>& group) {
  const OnTop on_top(*this);
  constexpr std::size_t kTitleMessages = 5;
  const Finding& first = *group.front();
  const Lane* lane = lanes_.find(first.proc);
  const double top = lane != nullptr ? lane->top : kLanesTop;
  const double bottom = lane != nullptr ? lane->bottom() : lanes_.bottom();
  const double x = scale_.x(first.t);
  const std::string id(checked_invariant_id(first.invariant));
  *out_ += "<g class=\"finding\" data-proc=\"";
  append_html_escaped(*out_, first.proc);
  *out_ += "\" data-t-ms=\"" + scale_.ms(first.t) + "\" data-invariant=\"" + id +
           "\" data-count=\"" + std::to_string(group.size()) + "\"><title>";
  if (group.size() > 1) {
    *out_ += std::to_string(group.size()) + " " + id + " findings from " + scale_.ms(first.t) +
             " ms to " + scale_.ms(group.back()->t) + " ms, the first:";
  }
  for (std::size_t index = 0; index < std::min(group.size(), kTitleMessages); ++index) {
    *out_ += index == 0 && group.size() == 1 ? "" : "\n";
    *out_ += id + ": ";
    append_html_escaped(*out_, group[index]->message);
  }
  *out_ += "</title><line x1=\"" + px(x) + "\" x2=\"" + px(x) + "\" y1=\"" + px(top) + "\" y2=\"" +
           px(bottom) + "\"/><path d=\"M" + px(x - 5) + " " + px(top) + "h10l-5 8z\"/>";
  const std::string text = group.size() > 1 ? id + " \u00d7" + std::to_string(group.size()) : id;
  label(x + 6, top + 9, kPlotRight + 20 - x, text, "finding-label", 10);
  *out_ += "</g>";
}

// Where two holders' windows overlap: a red shade over the worker lanes.
void Chart::overlap(const Overlap& overlap) {
  double top = -1;
  double bottom = -1;
  for (const Lane& lane : lanes_.lanes()) {
    if (lane.kind != LaneKind::client && lane.kind != LaneKind::probe) continue;
    if (top < 0) top = lane.top;
    bottom = lane.bottom();
  }
  if (top < 0) return;
  const double x1 = scale_.x(overlap.from);
  const double width = std::max(scale_.x(overlap.to) - x1, 1.5);
  *out_ += "<rect class=\"overlap\" data-t-ms=\"" + scale_.ms(overlap.from) + "\" data-end-ms=\"" +
           scale_.ms(overlap.to) + "\" data-holders=\"";
  append_html_escaped(*out_, overlap.first);
  *out_ += ",";
  append_html_escaped(*out_, overlap.second);
  *out_ += "\" x=\"" + px(x1) + "\" y=\"" + px(top) + "\" width=\"" + px(width) + "\" height=\"" +
           px(bottom - top) + "\"><title>";
  append_html_escaped(*out_, overlap.first);
  *out_ += " and ";
  append_html_escaped(*out_, overlap.second);
  *out_ += " both hold the lock</title></rect>";
}

// What a node holds: a bar in the holder's colour, its name when it fits;
// hatched where the node lost it before its TTL.
void Chart::node_holding(const NodeHolding& holding) {
  constexpr int kHolderColours = 6;
  const Lane* lane = lanes_.find("n" + std::to_string(holding.node));
  if (lane == nullptr) return;
  const Event& acquired = *holding.acquired;
  const auto client = numbered_name(acquired.proc, 'c');
  const std::string colour =
      client ? "h" + std::to_string(*client % kHolderColours) : std::string("hp");
  const double x1 = scale_.x(holding.from);
  const double width = std::max(scale_.x(holding.to) - x1, 1.0);
  *out_ += "<rect class=\"hold " + colour + (holding.lost ? " lost" : "") + "\" data-node=\"n" +
           std::to_string(holding.node) + "\" data-proc=\"";
  append_html_escaped(*out_, acquired.proc);
  *out_ += "\" data-t-ms=\"" + scale_.ms(holding.from) + "\" data-end-ms=\"" +
           scale_.ms(holding.to) + "\" x=\"" + px(x1) + "\" y=\"" + px(lane->top + 6) +
           "\" width=\"" + px(width) + "\" height=\"" + px(lane->height - 12) + "\"><title>n" +
           std::to_string(holding.node) + " holds ";
  append_html_escaped(*out_, acquired.proc);
  *out_ += "'s value " + std::string(holding.lost ? "(lost by the node)" : "") + "</title></rect>";
  std::string text = acquired.proc;
  if (acquired.token) text += " #" + std::to_string(*acquired.token);
  if (!label(x1 + 3, lane->top + lane->height / 2 + 4, width - 4, text, "hold-label")) {
    label(x1 + 3, lane->top + lane->height / 2 + 4, width - 4, acquired.proc, "hold-label");
  }
}

void Chart::mark_stale(const std::vector<StaleWrite>& stale) {
  for (const StaleWrite& write : stale) stale_.insert(write.write);
}

// A stale write: the read it was based on (a diamond), an arc from that
// read to the write, and what it did to the counter.
void Chart::stale_write(const StaleWrite& stale) {
  const OnTop on_top(*this);
  const Event& write = *stale.write;
  const Lane* lane = lanes_.find(write.proc);
  if (lane == nullptr) return;
  const double x = scale_.x(write.t);
  const double y = lane->top + 40;
  *out_ += "<g class=\"stale-write\"";
  event_attributes(write);
  *out_ += " data-wrote=\"" + std::to_string(write.wrote.value_or(0)) + "\" data-overwrote=\"" +
           std::to_string(stale.overwrote) + "\">";
  if (stale.read != nullptr) {
    const double read_x = scale_.x(stale.read->t);
    *out_ += "<path class=\"stale-link\" d=\"M" + px(read_x) + " " + px(y) + "Q" +
             px((read_x + x) / 2) + " " + px(lane->top + 6) + " " + px(x) + " " + px(y) +
             "\"/><path class=\"stale-read\" d=\"M" + px(read_x) + " " + px(y - 5) +
             "l5 5-5 5-5-5z\"" + " data-t-ms=\"" + scale_.ms(stale.read->t) + "\" data-read=\"" +
             std::to_string(stale.read->read.value_or(0)) + "\"/>";
  }
  *out_ += "<circle class=\"stale-ring\" cx=\"" + px(x) + "\" cy=\"" + px(y) + "\" r=\"6\"/>";
  std::string text = "stale write " + std::to_string(write.wrote.value_or(0)) + " over " +
                     std::to_string(stale.overwrote);
  if (stale.read != nullptr) {
    text += " (read " + std::to_string(stale.read->read.value_or(0)) + " at " +
            scale_.ms(stale.read->t) + " ms)";
  }
  // Under the row of write dots, in the lane's last line.
  const double text_y = lane->top + 54;
  if (!label(x + 4, text_y, kViewWidth - x - 4, text, "stale-label", 10)) {
    label(x + 4, text_y, kViewWidth - x - 4, "stale write", "stale-label", 10);
  }
  *out_ += "</g>";
}

std::string_view Chart::checked_invariant_id(int index) {
  return index >= 0 && index < kInvariantCount ? invariant_id(index) : std::string_view("C?");
}

// One row (wrapping) of swatches under the axis; returns the bottom.
double Chart::legend() {
  struct Item {
    std::string_view swatch;
    std::string_view text;
  };
  static constexpr std::array<Item, 15> kItems{{
      {"window", "validity window (permit or resources, #token)"},
      {"acquire", "acquire ok"},
      {"extend", "extend ok"},
      {"ok", "write (circle) / append (square) accepted"},
      {"fenced", "fenced out"},
      {"failed", "failed or unknown"},
      {"node", "node fault"},
      {"band", "client / link fault"},
      {"heal", "heal"},
      {"finding", "checker finding (C3 \u00d725: 25 close together; listed below)"},
      {"open", "fault never ended"},
      {"overlap", "two holders at once"},
      {"stale", "stale write (lost update) and the read it was based on"},
      {"hold", "node holds a client's value (name, #token)"},
      {"lost", "node lost it (restart) or granted another"},
  }};
  double x = kPlotLeft;
  double y = lanes_.bottom() + 36;
  for (const Item& item : kItems) {
    const double width = 24 + text_width(item.text, kLabelFontSize) + 18;
    if (x + width > kPlotRight) {
      x = kPlotLeft;
      y += 20;
    }
    swatch(item.swatch, x, y);
    *out_ += "<text class=\"legend-label\" x=\"" + px(x + 22) + "\" y=\"" + px(y + 4) + "\">" +
             std::string(item.text) + "</text>";
    x += width;
  }
  return y + 14;
}

void Chart::event_attributes(const Event& event) {
  *out_ += " data-proc=\"";
  append_html_escaped(*out_, event.proc);
  *out_ += "\" data-t-ms=\"" + scale_.ms(event.t) + "\"";
}

// Labels are drawn only where they fit and overlap no other label: 10 000
// tiny bars stay bars, and 25 markers at one spot do not print over each
// other.
bool Chart::label(double x, double y, double room, std::string_view text,
                  std::string_view css_class, double font_size) {
  const double width = text_width(text, font_size);
  if (width > room) return false;
  if (!reserve(Box{x, y - font_size, x + width, y + font_size * 0.3})) return false;
  *out_ += "<text class=\"";
  *out_ += css_class;
  *out_ += "\" x=\"" + px(x) + "\" y=\"" + px(y) + "\">";
  append_html_escaped(*out_, text);
  *out_ += "</text>";
  return true;
}

bool Chart::reserve(const Box& box) {
  for (const Box& taken : labels_) {
    if (box.left < taken.right && taken.left < box.right && box.top < taken.bottom &&
        taken.top < box.bottom) {
      return false;
    }
  }
  labels_.push_back(box);
  return true;
}

std::string_view Chart::outcome_class(const Event& event) {
  if (event.phase == Phase::ok) return "ok";
  if (event.phase == Phase::fail && event.error.find("fenced") != std::string::npos) {
    return "fenced";
  }
  return "failed";
}

// Legend swatches use their own classes so that counting the chart's
// elements by class never counts the legend.
void Chart::swatch(std::string_view kind, double x, double y) {
  const std::string left = px(x);
  const std::string mid = px(x + 8);
  if (kind == "window") {
    *out_ += "<rect class=\"lg-window\" x=\"" + left + "\" y=\"" + px(y - 5) +
             "\" width=\"16\" height=\"10\"/>";
  } else if (kind == "acquire" || kind == "extend") {
    *out_ += "<line class=\"lg-" + std::string(kind) + "\" x1=\"" + mid + "\" x2=\"" + mid +
             "\" y1=\"" + px(y - 7) + "\" y2=\"" + px(y + 7) + "\"/>";
  } else if (kind == "ok" || kind == "fenced" || kind == "failed") {
    *out_ += "<circle class=\"lg-" + std::string(kind) + "\" cx=\"" + px(x + 4) + "\" cy=\"" +
             px(y) + "\" r=\"3.5\"/><rect class=\"lg-" + std::string(kind) + "\" x=\"" +
             px(x + 10) + "\" y=\"" + px(y - 3) + "\" width=\"6\" height=\"6\"/>";
  } else if (kind == "node" || kind == "band" || kind == "open") {
    *out_ += "<rect class=\"lg-" + std::string(kind) + "\" x=\"" + left + "\" y=\"" +
             px(kind == "band" ? y - 3 : y - 6) + "\" width=\"16\" height=\"" +
             (kind == "band" ? "7" : "12") + "\"/>";
  } else if (kind == "overlap" || kind == "hold" || kind == "lost") {
    *out_ += "<rect class=\"lg-" + std::string(kind) + "\" x=\"" + left + "\" y=\"" + px(y - 6) +
             "\" width=\"16\" height=\"12\"/>";
  } else if (kind == "stale") {
    *out_ += "<path class=\"lg-stale-read\" d=\"M" + px(x + 3) + " " + px(y - 5) +
             "l5 5-5 5-5-5z\"/><circle class=\"lg-stale\" cx=\"" + px(x + 14) + "\" cy=\"" + px(y) +
             "\" r=\"5\"/>";
  } else if (kind == "heal") {
    *out_ += "<line class=\"lg-heal\" x1=\"" + mid + "\" x2=\"" + mid + "\" y1=\"" + px(y - 8) +
             "\" y2=\"" + px(y + 8) + "\"/>";
  } else {
    *out_ += "<g class=\"lg-finding\"><line x1=\"" + mid + "\" x2=\"" + mid + "\" y1=\"" +
             px(y - 8) + "\" y2=\"" + px(y + 8) + "\"/><path d=\"M" + left + " " + px(y - 8) +
             "h16l-8 9z\"/></g>";
  }
}

// 1, 2 or 5 times a power of ten, for about ten ticks.
std::int64_t Chart::tick_step(std::int64_t span) {
  const std::int64_t wanted = std::max<std::int64_t>(span / 10, 1);
  std::int64_t magnitude = 1;
  while (magnitude <= wanted / 10) magnitude *= 10;
  for (const std::int64_t factor : {1, 2, 5}) {
    if (factor * magnitude >= wanted) return factor * magnitude;
  }
  return 10 * magnitude;
}

// Decimals needed to print multiples of `step` in `unit`.
int Chart::decimals_of(std::int64_t step, std::int64_t unit) {
  int decimals = 0;
  for (std::int64_t divisor = unit; divisor > 1 && step % divisor != 0; divisor /= 10) {
    ++decimals;
  }
  return decimals;
}

}  // namespace redlock::chaos::report_internal
