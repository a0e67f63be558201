// The report's counter chart: the resource counter after each accepted
// write, on the timeline's time scale (same width and plot edges, so a
// drop lines up with the write on the timeline above it). A lost update is
// a drop: a write that set the counter back to what its writer had read.
#include <set>

#include "report.hpp"
#include "report_internal.hpp"

namespace redlock::chaos::report_internal {
namespace {

constexpr double kTop = 16;
constexpr double kPlotHeight = 150;
constexpr double kBottom = kTop + kPlotHeight;

}  // namespace

void append_counter_chart(std::string& out, const CounterSeries& series, const TimeScale& scale) {
  if (series.points.empty()) return;
  std::int64_t highest = 1;
  for (const CounterPoint& point : series.points) highest = std::max(highest, point.value);
  if (series.final_value) highest = std::max(highest, *series.final_value);
  const auto y = [&](std::int64_t value) {
    return kBottom - static_cast<double>(std::max<std::int64_t>(value, 0)) /
                         static_cast<double>(highest) * kPlotHeight;
  };

  out += "<section><h2>Resource counter</h2><p class=\"hint\">The value of <code>";
  append_html_escaped(out, series.key);
  out += "</code> after each accepted write (" + std::to_string(series.accepted) +
         "), on the timeline's time scale. Each write adds one to what its writer read, so the "
         "line only climbs unless a write was based on a stale read: then it drops (";
  out += series.stale.empty() ? std::string("none here")
                              : std::to_string(series.stale.size()) + " here, in red";
  out += ").</p><div class=\"chart\"><svg class=\"counter\" viewBox=\"0 0 " + px(kViewWidth) + " " +
         px(kBottom + 26) + "\" role=\"img\" aria-label=\"resource counter over the run\">";

  // The value axis: 0, the middle and the top.
  // A set: with a top of 1 the middle is 0 again.
  for (const std::int64_t value : std::set<std::int64_t>{0, highest / 2, highest}) {
    out += "<line class=\"grid\" x1=\"" + px(kPlotLeft) + "\" x2=\"" + px(kPlotRight) + "\" y1=\"" +
           px(y(value)) + "\" y2=\"" + px(y(value)) + "\"/><text class=\"value-label\" x=\"" +
           px(kPlotLeft - 6) + "\" y=\"" + px(y(value) + 4) + "\">" + std::to_string(value) +
           "</text>";
  }

  // The counter as a step line: flat until the next write sets it.
  std::string path = "M" + px(scale.x(series.points.front().t)) + " " + px(y(0));
  for (const CounterPoint& point : series.points) {
    path += "H" + px(scale.x(point.t)) + "V" + px(y(point.value));
  }
  path += "H" + px(kPlotRight);
  out += "<path class=\"counter-line\" d=\"" + path + "\"/>";

  if (series.final_value) {
    const double final_y = y(*series.final_value);
    out += "<line class=\"counter-final\" x1=\"" + px(kPlotLeft) + "\" x2=\"" + px(kPlotRight) +
           "\" y1=\"" + px(final_y) + "\" y2=\"" + px(final_y) +
           "\"/><text class=\"counter-final-label\" x=\"" + px(kPlotRight - 4) + "\" y=\"" +
           px(final_y < kTop + 30 ? final_y + 14 : final_y - 5) + "\">final " +
           std::to_string(*series.final_value) + ", " + std::to_string(series.accepted) +
           " writes accepted</text>";
  }

  // Each stale write: a red drop with what it wrote over what. Labels go
  // on alternate rows near the bottom and are left out where they would
  // run into the previous one.
  double last_label_end = -1;
  for (const StaleWrite& stale : series.stale) {
    const double x = scale.x(stale.write->t);
    const std::int64_t wrote = stale.write->wrote.value_or(0);
    out += "<g class=\"counter-drop\" data-t-ms=\"" + scale.ms(stale.write->t) + "\" data-proc=\"";
    append_html_escaped(out, stale.write->proc);
    out += "\"><line x1=\"" + px(x) + "\" x2=\"" + px(x) + "\" y1=\"" + px(y(stale.overwrote)) +
           "\" y2=\"" + px(y(wrote)) + "\"/><circle cx=\"" + px(x) + "\" cy=\"" + px(y(wrote)) +
           "\" r=\"4\"/>";
    std::string text = stale.write->proc + " wrote " + std::to_string(wrote) + " over " +
                       std::to_string(stale.overwrote);
    const double width = text_width(text, kLabelFontSize);
    double left = x + 6;
    if (left + width > kPlotRight) left = x - 6 - width;
    if (left > last_label_end + 4) {
      out += "<text class=\"drop-label\" x=\"" + px(left) + "\" y=\"" + px(kBottom + 18) + "\">";
      append_html_escaped(out, text);
      out += "</text>";
      last_label_end = left + width;
    }
    out += "</g>";
  }
  out += "</svg></div></section>";
}

}  // namespace redlock::chaos::report_internal
