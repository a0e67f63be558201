// The HTML report of one chaos run: a self-contained page (inline CSS and
// SVG, no scripts, nothing fetched) with
//   - a header: PASS / FAIL (as the scenario expects or not), the
//     scenario's description, the run's facts, the expected and the seen
//     violations in one line, and a two-line narrative (what ran, what
//     happened);
//   - the invariant table: C1-C17 with verdict, expectation and outcome;
//   - an SVG timeline over the run's reference time:
//       one lane per client: validity windows (acquire ok .. deadline or
//       release) as bars, acquisitions and renewals as ticks, resource
//       writes as dots (accepted / fenced out / failed), a stale write
//       ringed and linked to the read it was based on, the probe;
//       a shade where two clients' windows overlap;
//       one lane per node: whose value it holds (from the replies), faults
//       on that node (kill, pause, clock) as spans from the nemesis
//       events, and link faults on the client lane they concern;
//       the checker's findings as red markers, those close together on a
//       lane grouped into one counted marker, messages as <title>s;
//   - the resource counter over time (a lost update is a drop);
//   - the findings: a summary per invariant, then the list.
// Pure: builds a string; the caller writes the file.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "checker.hpp"
#include "history.hpp"

namespace redlock::chaos {

enum class Expectation {
  holds,     // must hold (regression mode fails if violated)
  violated,  // must be violated (demonstration mode fails if it holds)
  may,       // either
};

struct ReportInput {
  std::string scenario;     // scenario name, e.g. "s07-pause-after-acquire"
  std::string description;  // one line from the scenario file
  std::string variant;      // "fenced" or "unfenced"
  std::uint64_t seed = 0;
  const History* history = nullptr;
  const CheckResult* check = nullptr;
  std::array<Expectation, kInvariantCount> expectations{};
  // Whether the run met its expectations, as the runner decided.
  bool passed = false;
};

[[nodiscard]] std::string render_report_html(const ReportInput& input);

// Appends `text` HTML-escaped (& < > " '), for text and attributes alike.
void append_html_escaped(std::string& out, std::string_view text);

}  // namespace redlock::chaos
