// render_report_html: the page's structure on a synthetic run (lanes,
// windows, writes by outcome, faults, heal, findings), escaping, that it
// fetches nothing, and that degenerate and large histories render.
//
// With CHAOS_REPORT_SAMPLE=<file> set, ReportSample writes the synthetic
// run's page there, for looking at it in a browser.
#include "report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checker.hpp"
#include "history.hpp"

namespace redlock::chaos {
namespace {

constexpr std::int64_t kOrigin = 5'000'000'000;  // the run event's reference time
constexpr std::string_view kHostile = "<script>&\"'";
constexpr std::string_view kHostileEscaped = "&lt;script&gt;&amp;&quot;&#39;";

// Reference time `ms` milliseconds after the run event.
std::int64_t report_at(std::int64_t ms) { return kOrigin + ms * 1'000'000; }

Event event(std::int64_t ms, std::string proc, EventKind kind, Phase phase) {
  Event result;
  result.t = report_at(ms);
  result.proc = std::move(proc);
  result.kind = kind;
  result.phase = phase;
  return result;
}

Event acquired(std::int64_t ms, std::string proc, std::string value, std::int64_t token,
               std::int64_t deadline_ms) {
  Event result = event(ms, std::move(proc), EventKind::acquire, Phase::ok);
  result.value = std::move(value);
  result.token = token;
  result.deadline_t = report_at(deadline_ms);
  return result;
}

Event extended(std::int64_t ms, std::string proc, std::string value, std::int64_t deadline_ms) {
  Event result = event(ms, std::move(proc), EventKind::extend, Phase::ok);
  result.value = std::move(value);
  result.deadline_t = report_at(deadline_ms);
  return result;
}

Event released(std::int64_t ms, std::string proc, std::string value) {
  Event result = event(ms, std::move(proc), EventKind::release, Phase::invoke);
  result.value = std::move(value);
  return result;
}

Event resource_op(std::int64_t ms, std::string proc, EventKind kind, Phase phase,
                  std::string error = {}) {
  Event result = event(ms, std::move(proc), kind, phase);
  result.error = std::move(error);
  return result;
}

Event nemesis(std::int64_t ms, Phase phase, std::int64_t op, std::string fault,
              std::string target) {
  Event result = event(ms, "nemesis", EventKind::nemesis, phase);
  result.op = op;
  result.fault = std::move(fault);
  result.target = std::move(target);
  return result;
}

Event run_event() {
  Event result = event(0, "harness", EventKind::run, Phase::info);
  result.count = 5;
  result.fenced = true;
  result.ttl_ms = 1000;
  result.detail = "s99-synthetic";
  return result;
}

// Two clients handing a lock over, a stale write fenced out, a node killed
// and restarted, a link fault, a client pause ended only by the heal, and a
// probe after the heal.
History synthetic_history() {
  History history;
  std::vector<Event>& events = history.events;
  events.push_back(run_event());
  events.push_back(acquired(10, "c0", "v-a", 7, 1010));
  events.push_back(resource_op(50, "c0", EventKind::write, Phase::invoke));
  events.push_back(resource_op(55, "c0", EventKind::write, Phase::ok));
  events.push_back(resource_op(60, "c0", EventKind::append, Phase::ok));
  events.push_back(nemesis(300, Phase::invoke, 1, "kill", "n2"));
  events.push_back(nemesis(400, Phase::invoke, 2, "link", "c0->n3"));
  events.push_back(nemesis(450, Phase::invoke, 3, std::string(kHostile), "n4"));
  events.push_back(extended(500, "c0", "v-a", 1500));
  events.push_back(nemesis(700, Phase::ok, 1, "kill", "n2"));
  // Ends the link fault by fault and target: its op differs.
  events.push_back(nemesis(800, Phase::ok, 0, "link", "c0->n3"));
  events.push_back(nemesis(850, Phase::ok, 3, std::string(kHostile), "n4"));
  events.push_back(released(900, "c0", "v-a"));
  events.push_back(acquired(950, "c1", "v-b", 8, 1950));
  events.push_back(resource_op(1000, "c1", EventKind::write, Phase::ok));
  events.push_back(resource_op(1100, "c0", EventKind::write, Phase::fail, "fenced_out"));
  events.push_back(resource_op(1200, "c1", EventKind::write, Phase::info, "timeout"));
  events.push_back(extended(1250, "c1", "v-b", 2400));
  events.push_back(nemesis(1300, Phase::invoke, 4, "pause-client", "c1"));
  events.push_back(event(1600, "harness", EventKind::heal, Phase::ok));
  events.push_back(event(1650, "probe", EventKind::acquire, Phase::invoke));
  events.push_back(acquired(1700, "probe", "v-p", 9, 2700));
  events.push_back(released(1750, "probe", "v-p"));
  events.push_back(event(3000, "harness", EventKind::snapshot, Phase::info));
  return history;
}

CheckResult synthetic_check() {
  CheckResult check;
  check.verdicts.fill(Verdict::holds);
  check.verdicts.at(2) = Verdict::violated;
  check.findings.push_back(
      Finding{2, report_at(960), "c1", "windows of v-a and v-b overlap " + std::string(kHostile)});
  return check;
}

std::string render(const History& history, const CheckResult& check, bool passed = false) {
  ReportInput input;
  input.scenario = "s99-synthetic";
  input.description = "a hand-made run " + std::string(kHostile);
  input.variant = "fenced";
  input.seed = 42;
  input.history = &history;
  input.check = &check;
  input.passed = passed;
  return render_report_html(input);
}

std::size_t count(std::string_view text, std::string_view needle) {
  std::size_t found = 0;
  for (std::size_t at_pos = text.find(needle); at_pos != std::string_view::npos;
       at_pos = text.find(needle, at_pos + needle.size())) {
    ++found;
  }
  return found;
}

// The start tag that begins with `start` (through its closing '>'), or "".
std::string element(std::string_view page, std::string_view start) {
  const std::size_t begin = page.find(start);
  if (begin == std::string_view::npos) return {};
  const std::size_t end = page.find('>', begin);
  return std::string(page.substr(begin, end - begin + 1));
}

// The value of attribute `name` in one start tag, or "<missing>".
std::string attribute(std::string_view tag, std::string_view name) {
  const std::string needle = " " + std::string(name) + "=\"";
  const std::size_t begin = tag.find(needle);
  if (begin == std::string_view::npos) return "<missing>";
  const std::size_t value = begin + needle.size();
  return std::string(tag.substr(value, tag.find('"', value) - value));
}

class ReportSynthetic : public testing::Test {
 protected:
  History history_ = synthetic_history();
  CheckResult check_ = synthetic_check();
  std::string page_ = render(history_, check_);
};

TEST_F(ReportSynthetic, IsOneHtmlPageWithOneSvg) {
  EXPECT_TRUE(page_.starts_with("<!DOCTYPE html>"));
  EXPECT_EQ(count(page_, "<svg"), 1U);
  EXPECT_EQ(count(page_, "</svg>"), 1U);
  EXPECT_TRUE(page_.ends_with("</html>\n"));
}

TEST_F(ReportSynthetic, FetchesNothing) {
  EXPECT_EQ(page_.find("http://"), std::string::npos);
  EXPECT_EQ(page_.find("https://"), std::string::npos);
  EXPECT_EQ(page_.find("src="), std::string::npos);
  EXPECT_EQ(page_.find("url("), std::string::npos);
  EXPECT_EQ(page_.find("<script"), std::string::npos);
  EXPECT_EQ(page_.find("<link"), std::string::npos);
}

TEST_F(ReportSynthetic, EscapesEveryHistoryString) {
  // In the description, the finding's tooltip and row, and a fault's label
  // and data-fault attribute.
  EXPECT_GE(count(page_, kHostileEscaped), 5U);
  EXPECT_EQ(page_.find(kHostile), std::string::npos);
  EXPECT_EQ(attribute(element(page_,
                              "<rect class=\"fault node\" data-proc=\"nemesis\" data-t-ms=\"450\""),
                      "data-fault"),
            kHostileEscaped);
}

TEST_F(ReportSynthetic, LabelsLanesClientsThenProbeThenNodes) {
  const std::vector<std::string> order{"c0", "c1", "probe", "n0", "n1", "n2", "n3", "n4"};
  std::size_t previous = 0;
  for (const std::string& lane : order) {
    const std::size_t position = page_.find("data-lane=\"" + lane + "\"");
    ASSERT_NE(position, std::string::npos) << lane;
    EXPECT_GT(position, previous) << lane;
    previous = position;
    EXPECT_NE(page_.find(">" + lane + "</text>"), std::string::npos) << lane;
  }
  EXPECT_EQ(count(page_, "class=\"lane-label\""), order.size());
  EXPECT_EQ(page_.find("data-lane=\"n5\""), std::string::npos);
  EXPECT_EQ(page_.find("data-lane=\"nemesis\""), std::string::npos);
}

TEST_F(ReportSynthetic, DrawsOneWindowPerHoldingLabelledWithItsToken) {
  EXPECT_EQ(count(page_, "class=\"window\""), 3U);
  EXPECT_NE(page_.find(">#7</text>"), std::string::npos);
  EXPECT_NE(page_.find(">#8</text>"), std::string::npos);
}

TEST(ReportLockKinds, LabelsAWindowWithItsPermitOrResources) {
  History history;
  history.events.push_back(run_event());
  Event permit = acquired(10, "c0", "v-p", 3, 500);
  permit.resources = {"chaos"};
  permit.permit = 1;
  permit.permits = 2;
  history.events.push_back(permit);
  Event set = acquired(20, "c1", "v-s", 4, 500);
  set.resources = {"a", "b"};
  set.tokens = {4, 4};
  history.events.push_back(set);
  // On its own lane: a label never overlaps another, and c1's is there.
  Event plain = acquired(30, "c2", "v-q", 0, 500);
  plain.token.reset();
  plain.resources = {"c"};
  history.events.push_back(plain);
  history.events.push_back(event(1000, "harness", EventKind::heal, Phase::ok));  // the chart's end
  const std::string page = render(history, CheckResult{});
  EXPECT_NE(page.find(">p1 #3</text>"), std::string::npos);
  EXPECT_NE(page.find(">a,b #4</text>"), std::string::npos);
  EXPECT_NE(page.find(">c</text>"), std::string::npos);
}

TEST_F(ReportSynthetic, CutsWindowAtReleaseAndRaisesItByExtend) {
  const std::string c0 = element(page_, "<rect class=\"window\" data-proc=\"c0\"");
  EXPECT_EQ(attribute(c0, "data-t-ms"), "10");
  EXPECT_EQ(attribute(c0, "data-end-ms"), "900");  // released before its deadline
  EXPECT_EQ(attribute(c0, "data-token"), "7");
  const std::string c1 = element(page_, "<rect class=\"window\" data-proc=\"c1\"");
  EXPECT_EQ(attribute(c1, "data-end-ms"), "2400");  // the extend's deadline
}

TEST_F(ReportSynthetic, MarksAcquisitionsAndRenewalsWithTicks) {
  EXPECT_EQ(count(page_, "class=\"tick acquire\""), 3U);
  EXPECT_EQ(count(page_, "class=\"tick extend\""), 2U);
}

TEST_F(ReportSynthetic, ColoursResourceOpsByOutcome) {
  EXPECT_EQ(count(page_, "class=\"write ok\""), 2U);  // the invoke draws nothing
  EXPECT_EQ(count(page_, "class=\"append ok\""), 1U);
  EXPECT_EQ(count(page_, "class=\"write fenced\""), 1U);
  EXPECT_EQ(count(page_, "class=\"write failed\""), 1U);
  EXPECT_EQ(attribute(element(page_, "<circle class=\"write fenced\""), "data-proc"), "c0");
}

TEST_F(ReportSynthetic, DrawsNodeFaultsFromInvokeToTheirEnd) {
  EXPECT_EQ(count(page_, "class=\"fault node\""), 2U);
  const std::string kill =
      element(page_, "<rect class=\"fault node\" data-proc=\"nemesis\" data-t-ms=\"300\"");
  EXPECT_EQ(attribute(kill, "data-target"), "n2");
  EXPECT_EQ(attribute(kill, "data-end-ms"), "700");
  EXPECT_NE(page_.find(">kill</text>"), std::string::npos);
}

TEST_F(ReportSynthetic, DrawsClientAndLinkFaultsOnTheClientLane) {
  const std::string link = element(page_, "<rect class=\"fault link\"");
  EXPECT_EQ(attribute(link, "data-target"), "c0-&gt;n3");
  EXPECT_EQ(attribute(link, "data-end-ms"), "800");  // matched by fault and target
  const std::string pause = element(page_, "<rect class=\"fault client\"");
  EXPECT_EQ(attribute(pause, "data-target"), "c1");
  EXPECT_EQ(attribute(pause, "data-end-ms"), "1600");  // ended by the heal
  EXPECT_EQ(count(page_, "class=\"fault "), 4U);
}

TEST_F(ReportSynthetic, DrawsHealAsDashedLine) {
  EXPECT_EQ(count(page_, "<line class=\"heal\""), 1U);
  EXPECT_EQ(attribute(element(page_, "<line class=\"heal\""), "data-t-ms"), "1600");
}

TEST_F(ReportSynthetic, MarksFindingWithTooltipOnItsLane) {
  EXPECT_EQ(count(page_, "<g class=\"finding\""), 1U);
  const std::string marker = element(page_, "<g class=\"finding\"");
  EXPECT_EQ(attribute(marker, "data-proc"), "c1");
  EXPECT_EQ(attribute(marker, "data-t-ms"), "960");
  EXPECT_NE(page_.find("<title>C3: windows of v-a and v-b overlap " + std::string(kHostileEscaped) +
                       "</title>"),
            std::string::npos);
}

TEST_F(ReportSynthetic, ListsFindings) {
  EXPECT_EQ(count(page_, "<tr class=\"finding-row\">"), 1U);
  EXPECT_NE(page_.find("<td class=\"time\">960.0 ms</td><td class=\"id\">C3</td><td>c1</td>"),
            std::string::npos);
}

TEST_F(ReportSynthetic, HasAnInvariantRowEach) {
  EXPECT_EQ(count(page_, "<tr class=\"inv"), static_cast<std::size_t>(kInvariantCount));
  for (int index = 0; index < kInvariantCount; ++index) {
    EXPECT_NE(page_.find("<td class=\"id\">" + std::string(invariant_id(index)) + "</td>"),
              std::string::npos)
        << index;
  }
}

TEST_F(ReportSynthetic, FlagsRowsThatMissTheirExpectation) {
  // Every expectation defaults to "holds": only C3 (violated) misses it.
  EXPECT_EQ(count(page_, "<tr class=\"inv unexpected\"><td class=\"id\">C3</td>"), 1U);
  EXPECT_EQ(count(page_, "<tr class=\"inv unexpected\">"), 1U);

  ReportInput input;
  input.history = &history_;
  input.check = &check_;
  input.expectations.at(2) = Expectation::violated;
  input.expectations.at(4) = Expectation::violated;  // C5 holds: a demonstration that failed
  const std::string page = render_report_html(input);
  EXPECT_EQ(count(page, "<tr class=\"inv unexpected\"><td class=\"id\">C5</td>"), 1U);
  EXPECT_EQ(count(page, "<tr class=\"inv unexpected\">"), 1U);
}

TEST_F(ReportSynthetic, ShowsTheRunnersOutcome) {
  EXPECT_NE(page_.find(">FAIL</span>"), std::string::npos);
  EXPECT_EQ(page_.find("PASS"), std::string::npos);
  const std::string passed = render(history_, check_, true);
  EXPECT_NE(passed.find(">PASS</span>"), std::string::npos);
  EXPECT_EQ(passed.find("FAIL"), std::string::npos);
}

TEST_F(ReportSynthetic, ShowsRunFactsInTheHeader) {
  EXPECT_NE(page_.find("<dt>seed</dt><dd>42</dd>"), std::string::npos);
  EXPECT_NE(page_.find("<dt>variant</dt><dd>fenced</dd>"), std::string::npos);
  EXPECT_NE(page_.find("<dt>run length</dt><dd>3.000 s</dd>"), std::string::npos);
  EXPECT_NE(page_.find("<dt>nodes</dt><dd>5</dd>"), std::string::npos);
}

TEST(ReportDegenerate, RendersRunEventOnly) {
  History history;
  history.events.push_back(run_event());
  const CheckResult check;
  const std::string page = render(history, check);
  EXPECT_EQ(count(page, "<svg"), 1U);
  EXPECT_EQ(count(page, "data-lane=\"n"), 5U);
  EXPECT_EQ(page.find("data-lane=\"c"), std::string::npos);
  EXPECT_EQ(count(page, "class=\"window\""), 0U);
  EXPECT_NE(page.find("No findings."), std::string::npos);
}

TEST(ReportDegenerate, RendersWithoutHistoryOrCheck) {
  const std::string page = render_report_html(ReportInput{});
  EXPECT_TRUE(page.starts_with("<!DOCTYPE html>"));
  EXPECT_EQ(count(page, "<tr class=\"inv unexpected\">"),
            static_cast<std::size_t>(kInvariantCount));  // nothing was checked
  EXPECT_EQ(count(page, "<td class=\"verdict unchecked\">"),
            static_cast<std::size_t>(kInvariantCount));
}

TEST(ReportDegenerate, DrawsFaultNeverEndedToTheEndOfTheRun) {
  History history;
  history.events.push_back(run_event());
  history.events.push_back(nemesis(100, Phase::invoke, 1, "pause", "n1"));
  history.events.push_back(event(2500, "harness", EventKind::snapshot, Phase::info));
  const std::string page = render(history, CheckResult{});
  const std::string fault = element(page, "<rect class=\"fault node open\"");
  EXPECT_EQ(attribute(fault, "data-end-ms"), "2500");
}

TEST(ReportLarge, DrawsEveryOneOfTenThousandWrites) {
  constexpr int kWrites = 10'000;
  History history;
  history.events.push_back(run_event());
  for (int index = 0; index < kWrites; ++index) {
    history.events.push_back(
        resource_op(index, "c" + std::to_string(index % 4), EventKind::write, Phase::ok));
  }
  const std::string page = render(history, CheckResult{});
  EXPECT_EQ(count(page, "class=\"write ok\""), static_cast<std::size_t>(kWrites));
  // Small per-element markup: well under 200 bytes a write.
  EXPECT_LT(page.size(), static_cast<std::size_t>(kWrites) * 200);
}

// Read-modify-write: a read ok and a write ok of one operation.
void add_rmw(History& history, std::int64_t read_ms, std::int64_t write_ms, const std::string& proc,
             std::int64_t op, std::int64_t read, const std::string& value) {
  Event read_ok = event(read_ms, proc, EventKind::read, Phase::ok);
  read_ok.op = op;
  read_ok.key = "chaos:counter";
  read_ok.read = read;
  read_ok.value = value;
  history.events.push_back(read_ok);
  Event write_ok = event(write_ms, proc, EventKind::write, Phase::ok);
  write_ok.op = op;
  write_ok.key = "chaos:counter";
  write_ok.wrote = read + 1;
  write_ok.value = value;
  history.events.push_back(write_ok);
}

// c0 writes 1, then reads 0 and stalls; c1 writes 2, 3; c0 writes 1 over 3: lost updates.
History lost_update_history() {
  History history;
  history.events.push_back(run_event());
  Event a = acquired(10, "c0", "v-a", 0, 300);
  a.token.reset();
  history.events.push_back(a);
  Event b = acquired(100, "c1", "v-b", 0, 600);
  b.token.reset();
  history.events.push_back(b);
  add_rmw(history, 20, 20, "c0", 1, 0, "v-a");
  add_rmw(history, 110, 120, "c1", 1, 1, "v-b");
  add_rmw(history, 130, 140, "c1", 2, 2, "v-b");
  // c0's second operation read 0 at 25 ms and writes 1 at 500 ms, over 3.
  add_rmw(history, 25, 500, "c0", 2, 0, "v-a");
  std::stable_sort(history.events.begin(), history.events.end(),
                   [](const Event& x, const Event& y) { return x.t < y.t; });
  Event snapshot = event(900, "harness", EventKind::snapshot, Phase::info);
  snapshot.target = "resource";
  snapshot.key = "chaos:counter";
  snapshot.count = 1;
  history.events.push_back(snapshot);
  return history;
}

TEST(ReportLostUpdate, MarksTheStaleWriteAndLinksItToItsRead) {
  const History history = lost_update_history();
  const std::string page = render(history, CheckResult{});
  EXPECT_EQ(count(page, "<g class=\"stale-write\""), 1U);
  const std::string stale = element(page, "<g class=\"stale-write\"");
  EXPECT_EQ(attribute(stale, "data-proc"), "c0");
  EXPECT_EQ(attribute(stale, "data-t-ms"), "500");
  EXPECT_EQ(attribute(stale, "data-wrote"), "1");
  EXPECT_EQ(attribute(stale, "data-overwrote"), "3");
  const std::string read = element(page, "<path class=\"stale-read\"");
  EXPECT_EQ(attribute(read, "data-t-ms"), "25");  // the read of its own operation
  EXPECT_NE(page.find("class=\"stale-link\""), std::string::npos);
  EXPECT_EQ(count(page, "<circle class=\"write stale\""), 1U);
  EXPECT_EQ(count(page, "<circle class=\"write ok\""), 3U);
}

TEST(ReportLostUpdate, ChartsTheCounterWithTheDrop) {
  const History history = lost_update_history();
  const std::string page = render(history, CheckResult{});
  EXPECT_EQ(count(page, "<svg class=\"counter\""), 1U);
  EXPECT_EQ(count(page, "<g class=\"counter-drop\""), 1U);
  EXPECT_NE(page.find(">c0 wrote 1 over 3</text>"), std::string::npos);
  EXPECT_NE(page.find(">final 1, 4 writes accepted</text>"), std::string::npos);
  EXPECT_NE(page.find("the counter ends at 1 (3 updates lost)"), std::string::npos);
}

TEST(ReportLostUpdate, LabelsEachCounterValueOnce) {
  History history;
  history.events.push_back(run_event());
  add_rmw(history, 10, 20, "c0", 1, 0, "v-a");  // the counter reaches 1 only
  const std::string page = render(history, CheckResult{});
  EXPECT_EQ(count(page, "class=\"value-label\""), 2U);  // 0 and 1
}

TEST(ReportLostUpdate, NoCounterChartWithoutWrites) {
  History history;
  history.events.push_back(run_event());
  EXPECT_EQ(render(history, CheckResult{}).find("<svg class=\"counter\""), std::string::npos);
}

TEST(ReportOverlap, ShadesWhereTwoHoldersWindowsOverlap) {
  History history;
  history.events.push_back(run_event());
  history.events.push_back(acquired(10, "c0", "v-a", 1, 500));
  history.events.push_back(acquired(300, "c1", "v-b", 1, 800));
  history.events.push_back(acquired(900, "c0", "v-c", 2, 1000));  // after both: no overlap
  const std::string page = render(history, CheckResult{});
  ASSERT_EQ(count(page, "<rect class=\"overlap\""), 1U);
  const std::string overlap = element(page, "<rect class=\"overlap\"");
  EXPECT_EQ(attribute(overlap, "data-t-ms"), "300");
  EXPECT_EQ(attribute(overlap, "data-end-ms"), "500");
  EXPECT_EQ(attribute(overlap, "data-holders"), "c0,c1");
}

Event with_replies(Event event, const std::vector<std::pair<int, std::string>>& replies) {
  for (const auto& [node, status] : replies) event.nodes.push_back(NodeReply{node, status, 0});
  return event;
}

TEST(ReportNodes, DrawsWhatEachNodeHoldsFromTheReplies) {
  History history;
  history.events.push_back(run_event());  // TTL 1000 ms
  history.events.push_back(
      with_replies(acquired(10, "c0", "v-a", 1, 1000),
                   {{0, "granted"}, {1, "granted"}, {2, "granted"}, {3, "busy"}}));
  history.events.push_back(nemesis(100, Phase::invoke, 1, "kill", "n2"));
  history.events.push_back(nemesis(120, Phase::ok, 1, "kill", "n2"));
  // n2 forgot c0's value: it grants c1 while c0 holds.
  history.events.push_back(with_replies(acquired(200, "c1", "v-b", 1, 1200),
                                        {{2, "granted"}, {3, "granted"}, {4, "granted"}}));
  history.events.push_back(released(350, "c0", "v-a"));  // sent at 350, answered at 400
  Event release = event(400, "c0", EventKind::release, Phase::ok);
  release.value = "v-a";
  history.events.push_back(
      with_replies(release, {{0, "released"}, {1, "released"}, {2, "not_held"}}));
  history.events.push_back(event(2000, "harness", EventKind::heal, Phase::ok));
  const std::string page = render(history, CheckResult{});
  EXPECT_EQ(count(page, "<rect class=\"hold h0"), 3U);  // c0 on n0-n2
  EXPECT_EQ(count(page, "<rect class=\"hold h1"), 3U);  // c1 on n2-n4
  const std::string n0 = element(page, "<rect class=\"hold h0\" data-node=\"n0\"");
  EXPECT_EQ(attribute(n0, "data-t-ms"), "10");
  EXPECT_EQ(attribute(n0, "data-end-ms"), "350");  // its release, when sent
  // n2 lost c0's value at the kill, before it granted c1.
  const std::string n2 = element(page, "<rect class=\"hold h0 lost\" data-node=\"n2\"");
  EXPECT_EQ(attribute(n2, "data-end-ms"), "100");
  const std::string n3 = element(page, "<rect class=\"hold h1\" data-node=\"n3\"");
  EXPECT_EQ(attribute(n3, "data-end-ms"), "1200");  // its TTL: never released
}

// A release waiting on a silent node returns late; the node that answered
// deleted the value when the release reached it, before it granted c1.
TEST(ReportNodes, EndsAHoldingWhenItsReleaseWasSentEvenIfItsReplyComesLater) {
  History history;
  history.events.push_back(run_event());
  history.events.push_back(with_replies(acquired(10, "c0", "v-a", 1, 1000), {{0, "granted"}}));
  history.events.push_back(released(50, "c0", "v-a"));
  history.events.push_back(with_replies(acquired(100, "c1", "v-b", 2, 1100), {{0, "granted"}}));
  Event release = event(900, "c0", EventKind::release, Phase::ok);
  release.value = "v-a";
  history.events.push_back(with_replies(release, {{0, "released"}}));
  history.events.push_back(event(2000, "harness", EventKind::heal, Phase::ok));
  const std::string page = render(history, CheckResult{});
  const std::string c0 = element(page, "<rect class=\"hold h0\" data-node=\"n0\"");
  EXPECT_EQ(attribute(c0, "data-end-ms"), "50");
  EXPECT_EQ(page.find("hold h0 lost"), std::string::npos);
}

TEST(ReportFindings, GroupsFindingsCloseTogetherIntoOneCountedMarker) {
  History history;
  history.events.push_back(run_event());
  history.events.push_back(acquired(10, "c0", "v-a", 1, 500));
  history.events.push_back(event(10000, "harness", EventKind::heal, Phase::ok));
  CheckResult check;
  for (int index = 0; index < 25; ++index) {
    check.findings.push_back(
        Finding{2, report_at(5000 + index), "c0", "overlap " + std::to_string(index)});
  }
  check.findings.push_back(Finding{2, report_at(9000), "c0", "a later one"});
  const std::string page = render(history, check);
  EXPECT_EQ(count(page, "<g class=\"finding\""), 2U);
  EXPECT_NE(page.find("data-count=\"25\""), std::string::npos);
  EXPECT_NE(page.find(">C3 \u00d725</text>"), std::string::npos);
  EXPECT_EQ(page.find("C3</text><text"), std::string::npos);
  EXPECT_EQ(count(page, "<tr class=\"summary-row\""), 1U);
  EXPECT_EQ(count(page, "<tr class=\"finding-row\""), 26U);
}

TEST(ReportNarrative, SaysWhatWasExpectedWhatRanAndWhatHappened) {
  const History history = lost_update_history();
  CheckResult check;
  check.verdicts.fill(Verdict::holds);
  check.verdicts.at(7) = Verdict::violated;
  ReportInput input;
  input.scenario = "s99";
  input.variant = "unfenced";
  input.history = &history;
  input.check = &check;
  input.expectations.at(7) = Expectation::violated;
  input.expectations.at(3) = Expectation::may;
  input.passed = true;
  const std::string page = render_report_html(input);
  EXPECT_NE(page.find("Expected violated: <span class=\"expected\">C8</span> (may be violated: "
                      "C4). Seen violated: <span class=\"seen\">C8</span>. As expected."),
            std::string::npos);
  EXPECT_NE(page.find("<p class=\"ran\"><b>Ran</b> 2 clients took turns on one lock over 5 Redis "
                      "nodes"),
            std::string::npos);
  EXPECT_NE(page.find("<p class=\"saw\"><b>Saw</b> 2 acquisitions; 4 writes accepted, 0 refused"),
            std::string::npos);
  EXPECT_NE(page.find("1 stale write (first: c0 wrote 1 over 3 at 500.0 ms)"), std::string::npos);
}

TEST(ReportSample, WritesThePageWhenAsked) {
  const char* path = std::getenv("CHAOS_REPORT_SAMPLE");
  if (path == nullptr) GTEST_SKIP() << "set CHAOS_REPORT_SAMPLE=<file> to write a sample page";
  const History history = synthetic_history();
  const CheckResult check = synthetic_check();
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << render(history, check);
  file.close();
  EXPECT_TRUE(file.good()) << path;
}

}  // namespace
}  // namespace redlock::chaos
