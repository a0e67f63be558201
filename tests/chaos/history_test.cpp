#include "history.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace redlock::chaos {
namespace {

namespace fs = std::filesystem;

// Every key of history.hpp's table set to a non-default value.
Event fully_populated_event() {
  Event e;
  e.t = 9'000'000'000'123;
  e.proc = "c3";
  e.kind = EventKind::acquire;
  e.phase = Phase::ok;
  e.op = 17;
  e.value = "v\"al\\ue\n";
  e.token = 0;  // a present token of 0 is not the same as no token
  e.ttl_ms = 10'000;
  e.validity_ms = 9'870;
  e.drift_ms = 102;
  e.start_t = 8'999'999'000'000;
  e.deadline_t = 9'009'870'000'000;
  e.max_renewals = 3;
  e.nodes = {{0, "granted", 41}, {1, "busy", 0}, {4, "timeout", 0}};
  e.error = "err";
  e.key = "resource-1";
  e.read = -5;
  e.wrote = 6;
  e.entry = "c3:17:4:x";
  e.fault = "pause-client";
  e.target = "c0->n3";
  e.detail = "seconds=2 \xE2\x82\xAC";
  e.pttl_ms = -1;
  e.count = 5;
  e.budget_ms = 12'000;
  e.fenced = true;
  e.entries = {"a", "b:c"};
  e.log_key = "chaos:log:p1";
  e.resources = {"a", "b"};
  e.tokens = {7, 0};
  e.permit = 0;  // a present permit 0 is not the same as no permit
  e.permits = 3;
  e.nested = 2;
  e.attempts = 1;
  e.renewals = 4;
  return e;
}

void expect_same(const Event& a, const Event& b) {
  EXPECT_EQ(a.t, b.t);
  EXPECT_EQ(a.proc, b.proc);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.phase, b.phase);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.token, b.token);
  EXPECT_EQ(a.ttl_ms, b.ttl_ms);
  EXPECT_EQ(a.validity_ms, b.validity_ms);
  EXPECT_EQ(a.drift_ms, b.drift_ms);
  EXPECT_EQ(a.start_t, b.start_t);
  EXPECT_EQ(a.deadline_t, b.deadline_t);
  EXPECT_EQ(a.max_renewals, b.max_renewals);
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    EXPECT_EQ(a.nodes[i].node, b.nodes[i].node);
    EXPECT_EQ(a.nodes[i].status, b.nodes[i].status);
    EXPECT_EQ(a.nodes[i].fence_counter, b.nodes[i].fence_counter);
  }
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.read, b.read);
  EXPECT_EQ(a.wrote, b.wrote);
  EXPECT_EQ(a.entry, b.entry);
  EXPECT_EQ(a.fault, b.fault);
  EXPECT_EQ(a.target, b.target);
  EXPECT_EQ(a.detail, b.detail);
  EXPECT_EQ(a.pttl_ms, b.pttl_ms);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.budget_ms, b.budget_ms);
  EXPECT_EQ(a.fenced, b.fenced);
  EXPECT_EQ(a.entries, b.entries);
  EXPECT_EQ(a.log_key, b.log_key);
  EXPECT_EQ(a.resources, b.resources);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.permit, b.permit);
  EXPECT_EQ(a.permits, b.permits);
  EXPECT_EQ(a.nested, b.nested);
  EXPECT_EQ(a.attempts, b.attempts);
  EXPECT_EQ(a.renewals, b.renewals);
}

Event simple_event(std::int64_t t, std::string proc, std::int64_t op) {
  Event e;
  e.t = t;
  e.proc = std::move(proc);
  e.kind = EventKind::write;
  e.phase = Phase::invoke;
  e.op = op;
  return e;
}

// A fresh directory per test, removed afterwards.
class HistoryFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("redlock-history-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write_file(const std::string& name, const std::string& content) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  fs::path dir_;
};

std::string line_of(const Event& e) { return to_json_line(e) + "\n"; }

TEST(HistoryTest, NamesRoundTrip) {
  for (const EventKind kind :
       {EventKind::run, EventKind::acquire, EventKind::extend, EventKind::release, EventKind::read,
        EventKind::write, EventKind::append, EventKind::nemesis, EventKind::snapshot,
        EventKind::heal, EventKind::nest, EventKind::unnest, EventKind::lost}) {
    EXPECT_EQ(parse_event_kind(to_string(kind)), kind);
  }
  for (const Phase phase : {Phase::invoke, Phase::ok, Phase::fail, Phase::info}) {
    EXPECT_EQ(parse_phase(to_string(phase)), phase);
  }
  EXPECT_EQ(to_string(EventKind::snapshot), "snapshot");
  EXPECT_EQ(to_string(EventKind::nest), "nest");
  EXPECT_EQ(to_string(EventKind::unnest), "unnest");
  EXPECT_EQ(to_string(EventKind::lost), "lost");
  EXPECT_EQ(to_string(Phase::info), "info");
  EXPECT_FALSE(parse_event_kind("Acquire"));
  EXPECT_FALSE(parse_phase(""));
}

TEST(HistoryTest, FullyPopulatedEventRoundTripsThroughOneLine) {
  const Event original = fully_populated_event();
  const std::string line = to_json_line(original);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  std::string error;
  const std::optional<Event> parsed = parse_event_line(line, error);
  ASSERT_TRUE(parsed) << error;
  expect_same(original, *parsed);
}

TEST(HistoryTest, DefaultValuedKeysAreOmitted) {
  Event e;
  e.t = 5;
  e.proc = "harness";
  e.kind = EventKind::heal;
  EXPECT_EQ(to_json_line(e), R"({"kind":"heal","proc":"harness","t":5})");
  e.phase = Phase::ok;
  e.token = 0;
  e.nodes = {{2, "", 0}};
  EXPECT_EQ(
      to_json_line(e),
      R"({"kind":"heal","nodes":[{"node":2}],"phase":"ok","proc":"harness","t":5,"token":0})");
}

TEST(HistoryTest, MissingOptionalKeysReadAsDefaults) {
  std::string error;
  const std::optional<Event> e = parse_event_line(R"({"t":1,"proc":"c0","kind":"read"})", error);
  ASSERT_TRUE(e) << error;
  expect_same(*e, [] {
    Event d;
    d.t = 1;
    d.proc = "c0";
    d.kind = EventKind::read;
    return d;
  }());
}

TEST(HistoryTest, MalformedLinesAreRejectedWithAReason) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"({"t":1,"proc":"c0"})", "missing key \"kind\""},
      {R"({"t":1.5,"proc":"c0","kind":"read"})", "\"t\""},
      {R"({"t":1,"proc":"c0","kind":"lock"})", "\"kind\""},
      {R"({"t":1,"proc":"c0","kind":"read","phase":"done"})", "\"phase\""},
      {R"({"t":1,"proc":"c0","kind":"read","token":"7"})", "\"token\""},
      {R"({"t":1,"proc":"c0","kind":"read","nodes":[{"status":"granted"}]})", "\"nodes\""},
      {R"({"t":1,"proc":"c0","kind":"read","entries":[1]})", "\"entries\""},
      {R"({"t":1,"proc":"c0","kind":"acquire","resources":"a"})", "\"resources\""},
      {R"({"t":1,"proc":"c0","kind":"acquire","resources":[2]})", "\"resources\""},
      {R"({"t":1,"proc":"c0","kind":"acquire","tokens":["1"]})", "\"tokens\""},
      {R"({"t":1,"proc":"c0","kind":"acquire","permit":"1"})", "\"permit\""},
      {R"([1,2])", "object"},
      {R"({"t":1,)", "offset 7"},
  };
  for (const auto& [line, reason] : cases) {
    std::string error;
    EXPECT_FALSE(parse_event_line(line, error)) << line;
    EXPECT_NE(error.find(reason), std::string::npos) << line << " -> " << error;
  }
}

// Found by fuzz/fuzz_history (corpus entry regress-ttl-overflow.jsonl): a
// TTL of 10^13 ms read fine, and the checker's start_t + (ttl - drift) ns
// overflowed (undefined behaviour) computing the grant's expiry.
TEST(HistoryTest, ValuesOutsideTheCheckersArithmeticAreRejected) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"({"t":0,"proc":"","kind":"acquire","phase":"ok","value":"0","ttl_ms":10999999999992,"start_t":2})",
       "\"ttl_ms\""},
      {R"({"t":-1,"proc":"c0","kind":"read"})", "\"t\""},
      {R"({"t":2305843009213693953,"proc":"c0","kind":"read"})", "\"t\""},
      {R"({"t":1,"proc":"c0","kind":"acquire","start_t":-5})", "\"start_t\""},
      {R"({"t":1,"proc":"c0","kind":"acquire","deadline_t":9223372036854775807})",
       "\"deadline_t\""},
      {R"({"t":1,"proc":"c0","kind":"acquire","validity_ms":-1099511627777})", "\"validity_ms\""},
      {R"({"t":1,"proc":"c0","kind":"acquire","drift_ms":1099511627777})", "\"drift_ms\""},
      {R"({"t":1,"proc":"probe","kind":"acquire","budget_ms":9223372036854775807})",
       "\"budget_ms\""},
      {R"({"t":1,"proc":"harness","kind":"snapshot","pttl_ms":-9223372036854775808})",
       "\"pttl_ms\""},
      {R"({"t":1,"proc":"c0","kind":"acquire","nodes":[{"node":2147483647}]})", "\"nodes\""},
      {R"({"t":1,"proc":"c0","kind":"acquire","nodes":[{"node":-1}]})", "\"nodes\""},
      {R"({"t":1,"proc":"c0","kind":"acquire","permit":-1})", "\"permit\""},
      {R"({"t":1,"proc":"c0","kind":"acquire","permit":65536})", "\"permit\""},
      {R"({"t":1,"proc":"c0","kind":"acquire","permits":65536})", "\"permits\""},
      {R"({"t":1,"proc":"c0","kind":"nest","nested":-1})", "\"nested\""},
      {R"({"t":1,"proc":"c0","kind":"nest","attempts":2147483648})", "\"attempts\""},
      {R"({"t":1,"proc":"c0","kind":"extend","renewals":-3})", "\"renewals\""},
  };
  for (const auto& [line, reason] : cases) {
    std::string error;
    EXPECT_FALSE(parse_event_line(line, error)) << line;
    EXPECT_NE(error.find(reason), std::string::npos) << line << " -> " << error;
  }
  // The bounds themselves are fine.
  std::string error;
  const std::optional<Event> edge = parse_event_line(
      R"({"t":2305843009213693952,"proc":"c0","kind":"acquire","ttl_ms":1099511627776,)"
      R"("validity_ms":-1099511627776,"pttl_ms":-2,"nodes":[{"node":65535}]})",
      error);
  ASSERT_TRUE(edge) << error;
  EXPECT_EQ(edge->t, std::int64_t{1} << 61);
  EXPECT_EQ(edge->ttl_ms, std::int64_t{1} << 40);
  EXPECT_EQ(edge->nodes.at(0).node, 65535);
}

TEST_F(HistoryFileTest, LoadMergesFilesByTimeStably) {
  const fs::path a = write_file("c0.jsonl", line_of(simple_event(10, "c0", 1)) +
                                                line_of(simple_event(30, "c0", 2)) +
                                                line_of(simple_event(30, "c0", 3)));
  const fs::path b = write_file("c1.jsonl", line_of(simple_event(20, "c1", 1)) +
                                                line_of(simple_event(30, "c1", 2)) +
                                                line_of(simple_event(40, "c1", 3)));
  const HistoryLoadResult result = load_history({a, b});
  ASSERT_TRUE(result.history) << result.error;
  std::vector<std::string> order;
  for (const Event& e : result.history->events) {
    order.push_back(e.proc + "/" + std::to_string(e.op));
  }
  // Equal times keep file order, then line order.
  EXPECT_EQ(order, (std::vector<std::string>{"c0/1", "c1/1", "c0/2", "c0/3", "c1/2", "c1/3"}));
}

TEST_F(HistoryFileTest, PartialLastLineIsDropped) {
  const std::string killed_mid_write = line_of(simple_event(3, "c0", 9)).substr(0, 12);
  const fs::path file =
      write_file("c0.jsonl", line_of(simple_event(1, "c0", 1)) + line_of(simple_event(2, "c0", 2)) +
                                 killed_mid_write);
  const HistoryLoadResult result = load_history({file});
  ASSERT_TRUE(result.history) << result.error;
  ASSERT_EQ(result.history->events.size(), 2U);
  EXPECT_EQ(result.history->events.back().op, 2);
}

TEST_F(HistoryFileTest, MalformedCompleteLineNamesFileAndLine) {
  const fs::path good = write_file("good.jsonl", line_of(simple_event(1, "c0", 1)));
  const fs::path bad = write_file("bad.jsonl", line_of(simple_event(1, "c1", 1)) + "\n" +
                                                   "{\"t\":2,\"proc\":\"c1\"}\n" +
                                                   line_of(simple_event(3, "c1", 3)));
  const HistoryLoadResult result = load_history({good, bad});
  EXPECT_FALSE(result.history);
  // Line 2 is blank and skipped; line 3 is the malformed one.
  EXPECT_EQ(result.error.rfind(bad.string() + ":3: ", 0), 0U) << result.error;
  EXPECT_NE(result.error.find("kind"), std::string::npos) << result.error;
}

TEST_F(HistoryFileTest, MissingFileIsAnError) {
  const HistoryLoadResult result = load_history({dir_ / "absent.jsonl"});
  EXPECT_FALSE(result.history);
  EXPECT_NE(result.error.find("absent.jsonl"), std::string::npos) << result.error;
}

TEST_F(HistoryFileTest, SavedHistoryLoadsBackTheSame) {
  History history;
  history.events = {simple_event(1, "c0", 1), fully_populated_event()};
  const fs::path file = dir_ / "merged.jsonl";
  std::string error;
  ASSERT_TRUE(save_history(history, file, error)) << error;
  const HistoryLoadResult loaded = load_history({file});
  ASSERT_TRUE(loaded.history) << loaded.error;
  ASSERT_EQ(loaded.history->events.size(), 2U);
  expect_same(loaded.history->events[1], history.events[1]);
}

TEST_F(HistoryFileTest, SaveIntoAMissingDirectoryFails) {
  std::string error;
  EXPECT_FALSE(save_history(History{}, dir_ / "no" / "such" / "file.jsonl", error));
  EXPECT_FALSE(error.empty());
}

TEST_F(HistoryFileTest, WriterAppendsWholeLines) {
  const fs::path file = write_file("c0.jsonl", line_of(simple_event(1, "c0", 1)));
  {
    HistoryWriter writer(file);
    ASSERT_TRUE(writer.ok());
    writer.write(simple_event(2, "c0", 2));
    writer.write(fully_populated_event());
  }
  const HistoryLoadResult loaded = load_history({file});
  ASSERT_TRUE(loaded.history) << loaded.error;
  ASSERT_EQ(loaded.history->events.size(), 3U);
  EXPECT_EQ(loaded.history->events[1].op, 2);
  expect_same(loaded.history->events[0], simple_event(1, "c0", 1));
}

TEST_F(HistoryFileTest, WriterReportsAFileItCannotOpen) {
  HistoryWriter writer(dir_ / "no" / "such" / "file.jsonl");
  EXPECT_FALSE(writer.ok());
  writer.write(simple_event(1, "c0", 1));  // a no-op, not a crash
}

TEST(HistoryTest, ReferenceClockIsMonotonic) {
  const std::int64_t first = reference_now_ns();
  const std::int64_t second = reference_now_ns();
  EXPECT_GT(first, 0);
  EXPECT_GE(second, first);
}

}  // namespace
}  // namespace redlock::chaos
