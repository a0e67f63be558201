// The HTML report of one chaos run (report.hpp).
//
// Rendering happens in two steps: a model is derived from the history
// (validity windows per holding, fault spans, the lanes), then drawn. Every
// string that comes from the history or the scenario goes through
// append_html_escaped() on its way into the page, in text and attributes alike,
// so a lock value or an error message can never become markup.
//
// This file assembles the page: its head and style, the header, the
// invariant table, the timeline section and the findings. The model is
// report_model.cpp's, the drawing report_chart.cpp's (report_internal.hpp).
#include "report.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report_internal.hpp"

namespace redlock::chaos {
namespace {

using report_internal::Chart;
using report_internal::collect_faults;
using report_internal::collect_windows;
using report_internal::FaultEnd;
using report_internal::FaultPlacement;
using report_internal::FaultSpan;
using report_internal::format_duration;
using report_internal::kEmptyRunSpanNs;
using report_internal::kViewWidth;
using report_internal::Lane;
using report_internal::LaneKind;
using report_internal::LaneMap;
using report_internal::place_fault;
using report_internal::px;
using report_internal::run_facts;
using report_internal::RunFacts;
using report_internal::TimeScale;
using report_internal::Window;

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
.fault-label{fill:#7a3300;font-weight:600}.band-label{fill:#5c2600}
.heal,.lg-heal{stroke:#1a7f37;stroke-width:1.5;stroke-dasharray:6 4}
.heal-label{fill:#1a7f37;font-weight:600}
.finding line,.lg-finding line{stroke:#e5001a;stroke-width:1.5}
.finding path,.lg-finding path{fill:#e5001a}
.legend-label{fill:#424a53}
.none{color:#656d76}
.narrative{margin:10px 0 6px;padding:8px 12px;background:#f6f8fa;border-left:4px solid #57606a;border-radius:4px}
.narrative p{margin:2px 0}.narrative b{display:inline-block;min-width:3.2em}
.expected-line{margin:4px 0 10px;font-weight:600}
.overlap{fill:#ff8182;fill-opacity:.35;stroke:#d1242f;stroke-width:.5}.lg-overlap{fill:#ff8182;fill-opacity:.5}
.hold{stroke:#24292f;stroke-width:.5;fill-opacity:.85}
.h0{fill:#6cb6ff}.h1{fill:#f69d50}.h2{fill:#8ddb8c}.h3{fill:#dcbdfb}.h4{fill:#f47067}.h5{fill:#e0c55b}.hp{fill:#adbac7}
.hold.lost{stroke:#d1242f;stroke-width:1.5;stroke-dasharray:3 2}
.lg-hold{fill:#6cb6ff;stroke:#24292f;stroke-width:.5}.lg-lost{fill:#f69d50;stroke:#d1242f;stroke-width:1.5;stroke-dasharray:3 2}
.hold-label{fill:#1f2328;font-weight:600}
.write.stale,.lg-stale{fill:#d1242f}
.stale-ring{fill:none;stroke:#d1242f;stroke-width:2}
.stale-link{fill:none;stroke:#d1242f;stroke-width:1.5;stroke-dasharray:4 2}
.stale-read,.lg-stale-read{fill:#fff;stroke:#d1242f;stroke-width:1.5}
.stale-label{fill:#a40e26;font-weight:700;font-size:10px}
.finding-label{fill:#c0001a;font-weight:700;font-size:10px}
svg text.band-label{font-size:9px}
svg.counter{display:block;width:100%;height:auto;background:#fff}
.value-label{text-anchor:end;fill:#424a53}
.counter-line{fill:none;stroke:#2f6fd0;stroke-width:2}
.counter-final{stroke:#57606a;stroke-width:1;stroke-dasharray:6 4}
.counter-final-label{text-anchor:end;fill:#424a53}
.counter-drop line{stroke:#d1242f;stroke-width:2.5}.counter-drop circle{fill:#d1242f}
.drop-label{fill:#a40e26;font-weight:700}
table.finding-summary{margin-bottom:12px}
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

// "C4, C8" from a predicate over the invariants; "none" when empty.
template <typename Predicate>
std::string invariant_list(Predicate&& selected) {
  std::string out;
  for (int index = 0; index < kInvariantCount; ++index) {
    if (selected(index)) out += (out.empty() ? "" : ", ") + std::string(invariant_id(index));
  }
  return out.empty() ? std::string("none") : out;
}

void append_header(std::string& out, const ReportInput& input, const History& history,
                   const RunFacts& run, const LaneMap& lanes, std::size_t finding_count) {
  std::size_t clients = 0;
  for (const Lane& lane : lanes.lanes()) clients += lane.kind == LaneKind::client ? 1 : 0;
  out += "<header><h1>";
  out += input.passed
             ? "<span class=\"result pass\" title=\"the run did what its scenario expects\">PASS"
               "</span>"
             : "<span class=\"result fail\" title=\"the run did not do what its scenario "
               "expects\">FAIL</span>";
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
  out += "</dl>";
}

// PASS means "as the scenario expects", which for a demonstration is a
// violation: the line says which ones were expected and which were seen.
void append_expected_line(std::string& out, const ReportInput& input) {
  const auto expects = [&](Expectation wanted) {
    return [&input, wanted](int index) {
      return input.expectations.at(static_cast<std::size_t>(index)) == wanted;
    };
  };
  const std::string expected = invariant_list(expects(Expectation::violated));
  const std::string may = invariant_list(expects(Expectation::may));
  const std::string seen =
      input.check == nullptr
          ? std::string("unchecked")
          : invariant_list([&](int index) { return input.check->violated(index); });
  out += "<p class=\"expected-line\">Expected violated: <span class=\"expected\">" + expected +
         "</span>" + (may != "none" ? " (may be violated: " + may + ")" : std::string()) +
         ". Seen violated: <span class=\"seen\">" + seen + "</span>. " +
         (input.passed ? "As expected." : "Not as expected.") + "</p>";
}

std::string fault_phrase(const FaultSpan& span, std::int64_t origin) {
  const Event& started = *span.started;
  std::string text =
      started.fault + " " + started.target + " at " + format_duration(started.t - origin);
  if (span.ended_by != FaultEnd::run_end) {
    text += " for " + format_duration(span.end - started.t);
  } else {
    text += " to the end";
  }
  return text;
}

// Two lines for someone who has not read the docs: what ran, what happened.
void append_narrative(std::string& out, const ReportInput& input, const History& history,
                      const RunFacts& run, const LaneMap& lanes,
                      const std::vector<FaultSpan>& faults,
                      const report_internal::CounterSeries& counter, std::size_t overlaps) {
  constexpr std::size_t kFaultsNamed = 4;
  std::size_t clients = 0;
  for (const Lane& lane : lanes.lanes()) clients += lane.kind == LaneKind::client ? 1 : 0;
  std::string ran = std::to_string(clients) + " clients took turns on one lock over " +
                    std::to_string(run.node_count) + " Redis nodes for " +
                    format_duration(run.end - run.origin) + ", " +
                    (input.variant == "fenced" ? "with fencing tokens checked by the resource"
                                               : "without fencing") +
                    "; faults: ";
  for (std::size_t index = 0; index < std::min(faults.size(), kFaultsNamed); ++index) {
    ran += (index == 0 ? "" : ", ") + fault_phrase(faults[index], run.origin);
  }
  if (faults.size() > kFaultsNamed) {
    ran += " and " + std::to_string(faults.size() - kFaultsNamed) + " more";
  }
  if (faults.empty()) ran += "none";
  ran += ".";

  std::size_t acquisitions = 0;
  std::size_t refused = 0;
  for (const Event& event : history.events) {
    if (!report_internal::is_worker(event.proc)) continue;
    if (event.kind == EventKind::acquire && event.phase == Phase::ok) ++acquisitions;
    if (event.kind == EventKind::write && event.phase == Phase::fail &&
        event.error.find("fenced") != std::string::npos) {
      ++refused;
    }
  }
  std::string saw = std::to_string(acquisitions) + " acquisitions; " +
                    std::to_string(counter.accepted) + " writes accepted, " +
                    std::to_string(refused) + " refused by fencing";
  if (counter.final_value) {
    const std::int64_t lost = static_cast<std::int64_t>(counter.accepted) - *counter.final_value;
    saw += "; the counter ends at " + std::to_string(*counter.final_value) +
           (lost > 0 ? " (" + std::to_string(lost) + " update" + (lost == 1 ? "" : "s") + " lost)"
                     : std::string(" (no update lost)"));
  }
  if (!counter.stale.empty()) {
    const auto& first = counter.stale.front();
    saw += "; " + std::to_string(counter.stale.size()) + " stale write" +
           (counter.stale.size() == 1 ? "" : "s") + " (first: " + first.write->proc + " wrote " +
           std::to_string(first.write->wrote.value_or(0)) + " over " +
           std::to_string(first.overwrote) + " at " + format_duration(first.write->t - run.origin) +
           ")";
  }
  if (overlaps > 0) {
    saw +=
        "; two holders at once " + std::to_string(overlaps) + " time" + (overlaps == 1 ? "" : "s");
  }
  saw += ".";
  out += "<div class=\"narrative\"><p class=\"ran\"><b>Ran</b> ";
  append_html_escaped(out, ran);
  out += "</p><p class=\"saw\"><b>Saw</b> ";
  append_html_escaped(out, saw);
  out += "</p></div>";
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

TimeScale timeline_scale(const RunFacts& run, const CheckResult* check) {
  std::int64_t end = run.end;
  if (check != nullptr) {
    for (const Finding& finding : check->findings) end = std::max(end, finding.t);
  }
  const std::int64_t span = end > run.origin ? end - run.origin : kEmptyRunSpanNs;
  return {run.origin, span};
}

struct TimelineParts {
  const std::vector<FaultSpan>& faults;
  const std::vector<FaultPlacement>& placements;
  const std::vector<Window>& windows;
  const std::vector<report_internal::Overlap>& overlaps;
  const std::vector<report_internal::NodeHolding>& holdings;
  const report_internal::CounterSeries& counter;
};

void append_timeline(std::string& out, const History& history, const CheckResult* check,
                     const TimeScale& scale, const TimelineParts& parts, const LaneMap& lanes) {
  // The SVG goes into its own buffer first: its height is known at the end.
  std::string svg;
  svg.reserve(history.events.size() * 120 + 4096);
  Chart chart(svg, lanes, scale);
  chart.lane_backgrounds();
  chart.axis();
  for (const report_internal::Overlap& overlap : parts.overlaps) chart.overlap(overlap);
  // Labels claim their place in order: findings and stale writes first,
  // then faults, then what nodes and windows hold.
  if (check != nullptr) chart.findings(check->findings);
  for (const report_internal::StaleWrite& stale : parts.counter.stale) chart.stale_write(stale);
  chart.mark_stale(parts.counter.stale);
  for (std::size_t index = 0; index < parts.faults.size(); ++index) {
    if (parts.placements[index].style == "node") {
      chart.fault(parts.faults[index], parts.placements[index]);
    }
  }
  for (const report_internal::NodeHolding& holding : parts.holdings) chart.node_holding(holding);
  for (const Window& window : parts.windows) chart.window(window);
  for (std::size_t index = 0; index < parts.faults.size(); ++index) {
    if (parts.placements[index].style != "node") {
      chart.fault(parts.faults[index], parts.placements[index]);
    }
  }
  for (const Event& event : history.events) chart.event_mark(event);
  for (const Event& event : history.events) {
    if (event.kind == EventKind::heal && event.phase == Phase::ok) chart.heal(event);
  }
  const double height = chart.legend() + 8;
  chart.finish();

  out +=
      "<section><h2>Timeline</h2><p class=\"hint\">Time runs left to right from the run's "
      "start (0: the harness's run event, when every node is up, the faults due at 0 ms are in "
      "place and the clients are told to go). Client rows show each holding's validity window "
      "and its writes; node rows show whose value each node holds, from the replies the clients "
      "got. Red shade: two holders at once. Markers are listed under Findings.</p><div "
      "class=\"chart\"><svg class=\"timeline\" viewBox=\"0 0 " +
      px(kViewWidth) + " " + px(height) + "\" role=\"img\" aria-label=\"timeline of the run\">";
  out += svg;
  out += "</svg></div></section>";
}

// Per invariant: how many findings, when, and the first message in full.
void append_finding_summary(std::string& out, const CheckResult& check, std::int64_t origin) {
  std::array<std::vector<const Finding*>, kInvariantCount + 1> by_invariant;
  for (const Finding& finding : check.findings) {
    const bool known = finding.invariant >= 0 && finding.invariant < kInvariantCount;
    by_invariant.at(known ? static_cast<std::size_t>(finding.invariant) : kInvariantCount)
        .push_back(&finding);
  }
  out +=
      "<table class=\"finding-summary\"><thead><tr><th>Invariant</th><th>Findings</th>"
      "<th>From</th><th>To</th><th>First finding</th></tr></thead><tbody>";
  for (std::size_t slot = 0; slot < by_invariant.size(); ++slot) {
    const auto& group = by_invariant.at(slot);
    if (group.empty()) continue;
    const Finding& first = *group.front();
    out += "<tr class=\"summary-row\"><td class=\"id\">" +
           std::string(Chart::checked_invariant_id(first.invariant));
    if (slot < kInvariantCount) {
      out += " ";
      append_html_escaped(out, invariant_title(static_cast<int>(slot)));
    }
    out += "</td><td>" + std::to_string(group.size()) + "</td><td class=\"time\">" +
           format_duration(first.t - origin) + "</td><td class=\"time\">" +
           format_duration(group.back()->t - origin) + "</td><td class=\"message\">";
    append_html_escaped(out, first.proc);
    out += ": ";
    append_html_escaped(out, first.message);
    out += "</td></tr>";
  }
  out += "</tbody></table>";
}

void append_findings(std::string& out, const CheckResult* check, std::int64_t origin) {
  out += "<section><h2>Findings</h2>";
  if (check == nullptr || check->findings.empty()) {
    out += "<p class=\"none\">No findings.</p></section>";
    return;
  }
  append_finding_summary(out, *check, origin);
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
  const std::vector<Window> windows = collect_windows(history);
  const std::vector<report_internal::Overlap> overlaps = report_internal::collect_overlaps(windows);
  const std::vector<report_internal::NodeHolding> holdings =
      report_internal::collect_node_holdings(history, run);
  const report_internal::CounterSeries counter = report_internal::collect_counter(history);
  const TimeScale scale = timeline_scale(run, input.check);

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
  append_expected_line(out, input);
  append_narrative(out, input, history, run, lanes, faults, counter, overlaps.size());
  out += "</header>";
  append_invariants(out, input);
  append_timeline(out, history, input.check, scale,
                  TimelineParts{faults, placements, windows, overlaps, holdings, counter}, lanes);
  report_internal::append_counter_chart(out, counter, scale);
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
