#include "checker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace redlock::chaos {
namespace {

// Synthetic histories: times are given in ms after the run event.
constexpr std::int64_t kRunStart = 5'000'000'000;
constexpr std::int64_t kNsPerMs = 1'000'000;
constexpr std::int64_t kTtlMs = 1000;
constexpr std::int64_t kDriftMs = 12;

std::int64_t at(double ms) { return kRunStart + std::llround(ms * kNsPerMs); }

std::vector<NodeReply> replies(std::vector<std::pair<int, std::string>> statuses) {
  std::vector<NodeReply> nodes;
  for (auto& [node, status] : statuses) nodes.push_back(NodeReply{node, std::move(status), 0});
  return nodes;
}

std::vector<NodeReply> all_say(std::string_view status, std::vector<int> nodes) {
  std::vector<std::pair<int, std::string>> statuses;
  for (int node : nodes) statuses.emplace_back(node, std::string(status));
  return replies(std::move(statuses));
}

class RunHistory {
 public:
  explicit RunHistory(int node_count = 5, bool fenced = false) {
    Event& run = add(0, "harness", EventKind::run, Phase::info);
    run.count = node_count;
    run.fenced = fenced;
    run.ttl_ms = kTtlMs;
  }

  Event& add(double at_ms, std::string proc, EventKind kind, Phase phase, std::int64_t op = 0) {
    Event& e = events_.emplace_back();
    e.t = at(at_ms);
    e.proc = std::move(proc);
    e.kind = kind;
    e.phase = phase;
    e.op = op;
    return e;
  }

  std::int64_t next_op() { return next_op_++; }

  // The events ordered by time, as load_history orders them.
  [[nodiscard]] History history() const {
    History history{events_};
    std::stable_sort(history.events.begin(), history.events.end(),
                     [](const Event& a, const Event& b) { return a.t < b.t; });
    return history;
  }

  [[nodiscard]] CheckResult check() const { return check_history(history()); }

 private:
  std::vector<Event> events_;
  std::int64_t next_op_ = 1;
};

// How an acquisition went; the defaults are an unfenced grant on nodes 0-2.
struct Acquisition {
  std::optional<std::int64_t> token;
  std::vector<NodeReply> nodes = all_say("granted", {0, 1, 2});
  std::optional<std::int64_t> validity_ms;  // default: TTL - drift - elapsed
  std::int64_t max_renewals = 0;
  std::vector<std::string> resources;  // history.hpp's resources, tokens, permit(s)
  std::vector<std::int64_t> tokens;
  std::optional<std::int64_t> permit;
  std::int64_t permits = 0;
  bool shared = false;
  bool leader = false;
  // A fair acquire that waited in line: its ticket and when it began
  // drawing it and when it was recorded (ms).
  std::optional<std::int64_t> ticket;
  double drawn_ms = 0;
  double recorded_ms = 0;
  // A set that waited for its members in their lines: per member, its
  // ticket there and when it was recorded (ms; drawn 5 ms before).
  std::vector<std::pair<std::string, std::pair<std::int64_t, double>>> places;

  Acquisition& fenced(std::int64_t fencing_token) {
    token = fencing_token;
    return *this;
  }
  Acquisition& answered(std::vector<NodeReply> replies) {
    nodes = std::move(replies);
    return *this;
  }
  Acquisition& reporting_validity(std::int64_t ms) {
    validity_ms = ms;
    return *this;
  }
  Acquisition& capped_at(std::int64_t renewals) {
    max_renewals = renewals;
    return *this;
  }
  // A lock over `names` (one name: a plain lock among such locks), with
  // each one's token when given.
  Acquisition& over(std::vector<std::string> names, std::vector<std::int64_t> own_tokens = {}) {
    resources = std::move(names);
    tokens = std::move(own_tokens);
    if (!tokens.empty()) token = tokens.front();
    return *this;
  }
  // A campaign in the run's election, elected with `term`.
  Acquisition& leading(std::int64_t term) {
    leader = true;
    token = term;
    return *this;
  }
  Acquisition& in_line(std::int64_t number, double drawn, double recorded) {
    ticket = number;
    drawn_ms = drawn;
    recorded_ms = recorded;
    return *this;
  }
  // A place in `member`'s line with `number`, recorded at `recorded` (ms).
  Acquisition& waited_for(std::string member, std::int64_t number, double recorded) {
    places.emplace_back(std::move(member), std::make_pair(number, recorded));
    return *this;
  }
  // The read side of the run's resource.
  Acquisition& reader() {
    shared = true;
    return *this;
  }
  // Permit `index` of semaphore `name` with `count` permits.
  Acquisition& permit_of(std::string name, std::int64_t index, std::int64_t count) {
    resources = {std::move(name)};
    permit = index;
    permits = count;
    return *this;
  }
};

Acquisition over(std::vector<std::string> names, std::vector<std::int64_t> own_tokens = {}) {
  return Acquisition().over(std::move(names), std::move(own_tokens));
}
Acquisition permit_of(std::string name, std::int64_t index, std::int64_t count) {
  return Acquisition().permit_of(std::move(name), index, count);
}

Acquisition fenced(std::int64_t token) { return Acquisition().fenced(token); }
Acquisition reader() { return Acquisition().reader(); }
Acquisition leading(std::int64_t term) { return Acquisition().leading(term); }
Acquisition in_line(std::int64_t number, double drawn, double recorded) {
  return Acquisition().in_line(number, drawn, recorded);
}
Acquisition answered(std::vector<NodeReply> replies) {
  return Acquisition().answered(std::move(replies));
}
Acquisition reporting_validity(std::int64_t ms) { return Acquisition().reporting_validity(ms); }
Acquisition capped_at(std::int64_t renewals) { return Acquisition().capped_at(renewals); }

// An acquire invoked at `invoke_ms` that reports ok at `ok_ms`, with the
// validity and deadline an honest library computes.
Event& acquire(RunHistory& run, const std::string& proc, const std::string& value, double invoke_ms,
               double ok_ms, const Acquisition& how = Acquisition()) {
  const std::int64_t op = run.next_op();
  run.add(invoke_ms, proc, EventKind::acquire, Phase::invoke, op).ttl_ms = kTtlMs;
  Event& ok = run.add(ok_ms, proc, EventKind::acquire, Phase::ok, op);
  ok.value = value;
  ok.token = how.token;
  ok.nodes = how.nodes;
  ok.ttl_ms = kTtlMs;
  ok.drift_ms = kDriftMs;
  ok.start_t = at(invoke_ms);
  const auto elapsed_ms = static_cast<std::int64_t>(std::ceil(ok_ms - invoke_ms));
  ok.validity_ms = how.validity_ms.value_or(kTtlMs - kDriftMs - elapsed_ms);
  ok.deadline_t = at(ok_ms) + ok.validity_ms * kNsPerMs;
  ok.max_renewals = how.max_renewals;
  ok.resources = how.resources;
  ok.tokens = how.tokens;
  ok.permit = how.permit;
  ok.permits = how.permits;
  ok.shared = how.shared;
  ok.leader = how.leader;
  ok.ticket = how.ticket;
  if (how.ticket) {
    ok.ticket_drawn_t = at(how.drawn_ms);
    ok.ticket_recorded_t = at(how.recorded_ms);
  }
  for (const auto& [member, ticket] : how.places) {
    ok.places.push_back(Place{member, ticket.first, at(ticket.second - 5), at(ticket.second)});
  }
  return ok;
}

// An acquire that failed: the nodes answered but no quorum formed.
void failed_acquire(RunHistory& run, const std::string& proc, const std::string& value,
                    double invoke_ms, double fail_ms, std::vector<NodeReply> nodes) {
  const std::int64_t op = run.next_op();
  run.add(invoke_ms, proc, EventKind::acquire, Phase::invoke, op);
  Event& fail = run.add(fail_ms, proc, EventKind::acquire, Phase::fail, op);
  fail.value = value;
  fail.nodes = std::move(nodes);
  fail.error = "no quorum";
}

// An extension that succeeds at `ok_ms` and moves the deadline to a full
// validity after its invoke.
Event& extend(RunHistory& run, const std::string& proc, const std::string& value, double invoke_ms,
              double ok_ms, std::vector<NodeReply> nodes = all_say("extended", {0, 1, 2})) {
  const std::int64_t op = run.next_op();
  Event& invoke = run.add(invoke_ms, proc, EventKind::extend, Phase::invoke, op);
  invoke.value = value;
  invoke.ttl_ms = kTtlMs;
  Event& ok = run.add(ok_ms, proc, EventKind::extend, Phase::ok, op);
  ok.value = value;
  ok.ttl_ms = kTtlMs;
  ok.nodes = std::move(nodes);
  ok.validity_ms = kTtlMs - kDriftMs;
  ok.deadline_t = at(invoke_ms) + ok.validity_ms * kNsPerMs;
  return ok;
}

Event& release(RunHistory& run, const std::string& proc, const std::string& value, double invoke_ms,
               double done_ms, std::vector<NodeReply> nodes = all_say("released", {0, 1, 2})) {
  const std::int64_t op = run.next_op();
  run.add(invoke_ms, proc, EventKind::release, Phase::invoke, op).value = value;
  Event& done = run.add(done_ms, proc, EventKind::release, Phase::ok, op);
  done.value = value;
  done.nodes = std::move(nodes);
  return done;
}

// How a resource operation went; the default is an unfenced accepted op.
struct ResourceUse {
  std::optional<std::int64_t> token;
  Phase outcome = Phase::ok;
  std::string entry;  // appends
  std::string key = "resource";

  ResourceUse& ending(Phase phase) {
    outcome = phase;
    return *this;
  }
  ResourceUse& at_key(std::string resource_key) {
    key = std::move(resource_key);
    return *this;
  }
};

ResourceUse with_token(std::int64_t token) {
  ResourceUse use;
  use.token = token;
  return use;
}
ResourceUse ending(Phase phase) { return ResourceUse().ending(phase); }
ResourceUse appending(std::string entry) {
  ResourceUse use;
  use.entry = std::move(entry);
  return use;
}

// A read, write or append under the holding `value`; its completion event.
Event& use_resource(RunHistory& run, EventKind kind, const std::string& proc,
                    const std::string& value, double invoke_ms, double done_ms,
                    const ResourceUse& how = ResourceUse()) {
  const std::int64_t op = run.next_op();
  Event& invoke = run.add(invoke_ms, proc, kind, Phase::invoke, op);
  invoke.value = value;
  invoke.token = how.token;
  invoke.key = how.key;
  invoke.entry = how.entry;
  Event& done = run.add(done_ms, proc, kind, how.outcome, op);
  done.value = value;
  done.token = how.token;
  done.key = how.key;
  done.entry = how.entry;
  if (how.outcome == Phase::fail) done.error = "stale token";
  return done;
}

Event& write(RunHistory& run, const std::string& proc, const std::string& value, double invoke_ms,
             double done_ms, const ResourceUse& how = ResourceUse()) {
  return use_resource(run, EventKind::write, proc, value, invoke_ms, done_ms, how);
}

void resource_snapshot(RunHistory& run, double at_ms, std::int64_t counter,
                       std::vector<std::string> entries = {}) {
  Event& snapshot = run.add(at_ms, "harness", EventKind::snapshot, Phase::ok);
  snapshot.target = "resource";
  snapshot.key = "resource";
  snapshot.count = counter;
  snapshot.entries = std::move(entries);
}

// What node `node` holds after the run: `value` ("" for nothing) with `pttl_ms`.
void node_snapshot(RunHistory& run, double at_ms, int node, const std::string& value,
                   std::int64_t pttl_ms) {
  Event& snapshot = run.add(at_ms, "harness", EventKind::snapshot, Phase::ok);
  snapshot.target = "n" + std::to_string(node);
  snapshot.key = "lock";
  snapshot.value = value;
  snapshot.pttl_ms = pttl_ms;
}

void heal(RunHistory& run, double at_ms) { run.add(at_ms, "harness", EventKind::heal, Phase::ok); }

// A probe acquire with its budget; no completion when `outcome` is empty.
void probe(RunHistory& run, double invoke_ms, std::int64_t budget_ms, std::optional<Phase> outcome,
           double done_ms = 0) {
  const std::int64_t op = run.next_op();
  run.add(invoke_ms, "probe", EventKind::acquire, Phase::invoke, op).budget_ms = budget_ms;
  if (!outcome) return;
  Event& done = run.add(done_ms, "probe", EventKind::acquire, *outcome, op);
  done.value = "probe-" + std::to_string(op);
  if (*outcome == Phase::ok) {
    done.nodes = all_say("granted", {0, 1, 2, 3, 4});
    done.ttl_ms = kTtlMs;
    done.drift_ms = kDriftMs;
    done.start_t = at(invoke_ms);
    done.validity_ms = kTtlMs - kDriftMs - static_cast<std::int64_t>(done_ms - invoke_ms) - 1;
    done.deadline_t = done.start_t + done.validity_ms * kNsPerMs;
  }
}

Verdict verdict_of(const CheckResult& result, std::string_view id) {
  return result.verdicts.at(static_cast<std::size_t>(invariant_index(id)));
}

std::vector<const Finding*> findings_of(const CheckResult& result, std::string_view id) {
  std::vector<const Finding*> found;
  for (const Finding& finding : result.findings) {
    if (finding.invariant == invariant_index(id)) found.push_back(&finding);
  }
  return found;
}

std::string describe(const CheckResult& result) {
  std::string text;
  for (std::size_t i = 0; i < result.verdicts.size(); ++i) {
    text += std::string(invariant_id(static_cast<int>(i))) + "=" +
            std::string(to_string(result.verdicts[i])) + " ";
  }
  for (const Finding& finding : result.findings) {
    text += "\n  " + std::string(invariant_id(finding.invariant)) + " " + finding.proc + ": " +
            finding.message;
  }
  return text;
}

// The first finding of `id`, after asserting the verdict and that it exists.
Finding expect_violated(const CheckResult& result, std::string_view id) {
  EXPECT_EQ(verdict_of(result, id), Verdict::violated) << id << ": " << describe(result);
  const auto found = findings_of(result, id);
  EXPECT_FALSE(found.empty()) << id << ": " << describe(result);
  return found.empty() ? Finding{} : *found.front();
}

void expect_holds(const CheckResult& result, std::string_view id) {
  EXPECT_EQ(verdict_of(result, id), Verdict::holds) << id << ": " << describe(result);
  EXPECT_TRUE(findings_of(result, id).empty()) << id << ": " << describe(result);
}

void expect_not_applicable(const CheckResult& result, std::string_view id) {
  EXPECT_EQ(verdict_of(result, id), Verdict::not_applicable) << id << ": " << describe(result);
}

bool mentions(const Finding& finding, std::string_view text) {
  return finding.message.find(text) != std::string::npos;
}

// --- names ---------------------------------------------------------------

TEST(CheckerNamesTest, IdsTitlesAndIndexesMatch) {
  for (int i = 0; i < kInvariantCount; ++i) {
    EXPECT_EQ(invariant_id(i), "C" + std::to_string(i + 1));
    EXPECT_EQ(invariant_index(invariant_id(i)), i);
    EXPECT_FALSE(invariant_title(i).empty());
  }
  EXPECT_EQ(invariant_index("C18"), -1);
  EXPECT_EQ(invariant_index("c1"), -1);
  EXPECT_EQ(to_string(Verdict::holds), "holds");
  EXPECT_EQ(to_string(Verdict::violated), "violated");
  EXPECT_EQ(to_string(Verdict::not_applicable), "not_applicable");
}

// --- whole histories -------------------------------------------------------

TEST(CheckerTest, EmptyRunHasNothingToCheck) {
  const CheckResult result = RunHistory().check();
  for (int i = 0; i < kInvariantCount; ++i) {
    expect_not_applicable(result, invariant_id(i));
  }
  EXPECT_TRUE(result.findings.empty());
}

TEST(CheckerTest, CleanFencedHandoffHoldsEverywhere) {
  RunHistory run(5, true);
  acquire(run, "c0", "a", 0, 5, fenced(1).capped_at(2));
  write(run, "c0", "a", 10, 12, with_token(1));
  extend(run, "c0", "a", 500, 505, all_say("extended", {0, 1, 2}));
  release(run, "c0", "a", 600, 602, all_say("released", {0, 1, 2}));
  acquire(run, "c1", "b", 601, 610, fenced(2));
  write(run, "c1", "b", 611, 613, with_token(2));
  release(run, "c1", "b", 620, 622, all_say("released", {0, 1, 2}));
  heal(run, 700);
  probe(run, 710, 3000, Phase::ok, 720);
  resource_snapshot(run, 800, 2);
  node_snapshot(run, 800, 0, "", 0);
  const CheckResult result = run.check();
  for (int i = 0; i < kInvariantCount; ++i) {
    // Every resource op is fenced; no semaphore; no nested hold; no election.
    if (i == invariant_index("C4") || i == invariant_index("C13") || i == invariant_index("C14") ||
        i == invariant_index("C15") || i == invariant_index("C16") || i == invariant_index("C17")) {
      continue;
    }
    expect_holds(result, invariant_id(i));
  }
  expect_not_applicable(result, "C4");
  expect_not_applicable(result, "C13");
  expect_not_applicable(result, "C14");
  expect_not_applicable(result, "C15");
  expect_not_applicable(result, "C16");
  expect_not_applicable(result, "C17");
}

TEST(CheckerTest, FindingsAreOrderedByTimeWithRunRelativeTimes) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5, answered(all_say("granted", {0})));
  acquire(run, "c1", "b", 2000, 2005, answered(all_say("granted", {1})));
  const CheckResult result = run.check();
  ASSERT_GE(result.findings.size(), 2U);
  EXPECT_TRUE(std::is_sorted(result.findings.begin(), result.findings.end(),
                             [](const Finding& a, const Finding& b) { return a.t < b.t; }));
  const auto quorum = findings_of(result, "C1");
  ASSERT_EQ(quorum.size(), 2U);
  EXPECT_EQ(quorum[1]->t, at(2005));
  EXPECT_EQ(quorum[1]->proc, "c1");
}

// --- C1 quorum ------------------------------------------------------------

TEST(CheckerQuorumTest, MajorityOfGrantsHolds) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5,
          answered(replies(
              {{0, "granted"}, {1, "busy"}, {2, "granted"}, {3, "timeout"}, {4, "granted"}})));
  expect_holds(run.check(), "C1");
}

TEST(CheckerQuorumTest, SuccessOnAMinorityIsAViolation) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5,
          answered(replies({{0, "granted"}, {1, "granted"}, {2, "busy"}, {3, "busy"}})));
  const Finding& finding = expect_violated(run.check(), "C1");
  EXPECT_EQ(finding.proc, "c0");
  EXPECT_EQ(finding.t, at(5));
  EXPECT_TRUE(mentions(finding, "2 of 5")) << finding.message;
}

TEST(CheckerQuorumTest, RepeatedRepliesOfOneNodeCountOnce) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5,
          answered(replies({{0, "granted"}, {0, "granted"}, {1, "granted"}})));
  expect_violated(run.check(), "C1");
}

TEST(CheckerQuorumTest, OnlyFailedAcquiresHaveNothingToCheck) {
  RunHistory run;
  failed_acquire(run, "c0", "a", 0, 5, all_say("busy", {0, 1, 2, 3, 4}));
  expect_not_applicable(run.check(), "C1");
}

// --- C2 validity ------------------------------------------------------------

TEST(CheckerValidityTest, HonestValidityHolds) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 200);
  expect_holds(run.check(), "C2");
}

TEST(CheckerValidityTest, ValidityIgnoringElapsedTimeIsAViolation) {
  // The client's clock ran slow: it saw almost no time pass in 200 ms.
  RunHistory run;
  acquire(run, "c0", "a", 0, 200, reporting_validity(kTtlMs - kDriftMs));
  const Finding& finding = expect_violated(run.check(), "C2");
  EXPECT_TRUE(mentions(finding, "validity 988 ms")) << finding.message;
  EXPECT_TRUE(mentions(finding, "until 1188.000 ms")) << finding.message;
}

TEST(CheckerValidityTest, ACallbackRunLateIsNotElapsedTimeIgnored) {
  // The library decided at 5 ms (validity 983 ms, deadline 988 ms) but the
  // client wrote its ok event only at 9 ms: nothing wrong with the lock.
  RunHistory run;
  Event& ok = acquire(run, "c0", "a", 0, 9, reporting_validity(kTtlMs - kDriftMs - 5));
  ok.deadline_t = ok.start_t + (kTtlMs - kDriftMs) * kNsPerMs;
  expect_holds(run.check(), "C2");
}

TEST(CheckerValidityTest, QuorumFormedAfterTheTtlIsAViolation) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 1500, reporting_validity(50));
  const CheckResult result = run.check();
  const auto findings = findings_of(result, "C2");
  const bool late = std::any_of(findings.begin(), findings.end(), [](const Finding* f) {
    return mentions(*f, "formed its quorum at 1500.000 ms");
  });
  EXPECT_TRUE(late) << describe(result);
}

TEST(CheckerValidityTest, NonPositiveValidityIsAViolation) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5, reporting_validity(0));
  expect_violated(run.check(), "C2");
}

TEST(CheckerValidityTest, NoAcquisitionHasNothingToCheck) {
  RunHistory run;
  failed_acquire(run, "c0", "a", 0, 5, all_say("timeout", {0, 1, 2, 3, 4}));
  expect_not_applicable(run.check(), "C2");
}

// --- C3 exclusion --------------------------------------------------------------

TEST(CheckerExclusionTest, HandoffAfterReleaseHolds) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  release(run, "c0", "a", 100, 102);
  acquire(run, "c1", "b", 90, 150);
  expect_holds(run.check(), "C3");
}

TEST(CheckerExclusionTest, SecondHolderBeforeTheFirstDeadlineIsAViolation) {
  // Kleppmann's first scenario: a node's clock jumps, B gets a quorum too.
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  acquire(run, "c1", "b", 400, 500);
  const Finding& finding = expect_violated(run.check(), "C3");
  EXPECT_EQ(finding.proc, "c1");
  EXPECT_EQ(finding.t, at(500));
  EXPECT_TRUE(mentions(finding, "value b")) << finding.message;
  EXPECT_TRUE(mentions(finding, "value a")) << finding.message;
}

TEST(CheckerExclusionTest, ExtensionRaisesTheDeadline) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  acquire(run, "c1", "b", 1100, 1200);  // after a's first deadline (983 ms) ...
  expect_holds(run.check(), "C3");
  extend(run, "c0", "a", 800, 805);  // ... but a was extended to 1788 ms
  expect_violated(run.check(), "C3");
}

TEST(CheckerExclusionTest, LocksSharingAResourceMayNotOverlap) {
  RunHistory run;
  acquire(run, "c0", "ab", 0, 5, over({"a", "b"}));
  acquire(run, "c1", "c", 100, 110, over({"c"}));  // a plain lock on another name
  expect_holds(run.check(), "C3");
  acquire(run, "c2", "bc", 400, 500, over({"b", "c"}));
  const CheckResult result = run.check();
  expect_violated(result, "C3");
  const auto found = findings_of(result, "C3");
  ASSERT_EQ(found.size(), 2U) << describe(result);
  EXPECT_EQ(found[0]->proc, "c2");
  EXPECT_TRUE(mentions(*found[0], "value ab (c0) on lock:b")) << found[0]->message;
  EXPECT_TRUE(mentions(*found[1], "value c (c1) on lock:c")) << found[1]->message;
}

TEST(CheckerExclusionTest, APlainLockOnANameOfASetMayNotOverlapIt) {
  RunHistory run;
  acquire(run, "c0", "ab", 0, 5, over({"a", "b"}));
  acquire(run, "c1", "a", 300, 310, over({"a"}));
  const Finding& finding = expect_violated(run.check(), "C3");
  EXPECT_TRUE(mentions(finding, "on lock:a")) << finding.message;
}

TEST(CheckerExclusionTest, PermitsOverlapButOnePermitIsHeldOnceAtATime) {
  RunHistory run;
  acquire(run, "c0", "p", 0, 5, permit_of("pool", 0, 2));
  acquire(run, "c1", "q", 10, 15, permit_of("pool", 1, 2));
  acquire(run, "c2", "r", 20, 25, permit_of("other", 0, 1));  // another semaphore
  expect_holds(run.check(), "C3");
  acquire(run, "c3", "s", 600, 610, permit_of("pool", 0, 2));
  const Finding& finding = expect_violated(run.check(), "C3");
  EXPECT_EQ(finding.proc, "c3");
  EXPECT_TRUE(mentions(finding, "value p (c0) on sem:pool:0")) << finding.message;
}

TEST(CheckerExclusionTest, ReadersOverlapEachOtherButNoWriter) {
  RunHistory run;
  acquire(run, "c0", "r1", 0, 5, reader());
  acquire(run, "c1", "r2", 10, 15, reader());
  acquire(run, "c2", "r3", 500, 505, reader());
  expect_holds(run.check(), "C3");
  // A writer while the readers' windows are open: a violation with the
  // reader that reaches furthest.
  acquire(run, "c3", "w", 600, 610);
  const Finding& finding = expect_violated(run.check(), "C3");
  EXPECT_EQ(finding.proc, "c3");
  EXPECT_TRUE(mentions(finding, "(c2, a reader)")) << finding.message;
}

TEST(CheckerExclusionTest, AReaderInsideAWritersWindowIsAViolation) {
  RunHistory run;
  acquire(run, "c0", "w", 0, 5);
  acquire(run, "c1", "r1", 100, 110, reader());
  const Finding& finding = expect_violated(run.check(), "C3");
  EXPECT_EQ(finding.proc, "c1");
  EXPECT_TRUE(mentions(finding, "value w (c0)")) << finding.message;
}

TEST(CheckerExclusionTest, AReaderIsComparedWithTheWritersNotWithTheReaderThatReachesFurthest) {
  // r1 reaches furthest of all; w overlaps it, and so does r2 overlap w:
  // both are found, though r2 never conflicts with r1.
  RunHistory run;
  acquire(run, "c0", "r1", 0, 5, reader());
  acquire(run, "c1", "w", 10, 15);
  release(run, "c1", "w", 300, 301);
  acquire(run, "c2", "r2", 100, 110, reader());
  const CheckResult result = run.check();
  const auto found = findings_of(result, "C3");
  ASSERT_EQ(found.size(), 2U) << describe(result);
  EXPECT_EQ(found[0]->proc, "c1");
  EXPECT_EQ(found[1]->proc, "c2");
  EXPECT_TRUE(mentions(*found[1], "value w (c1)")) << found[1]->message;
}

TEST(CheckerExclusionTest, NoAcquisitionHasNothingToCheck) {
  expect_not_applicable(RunHistory().check(), "C3");
}

// --- C4 in-window use ------------------------------------------------------

TEST(CheckerInWindowTest, UseInsideTheWindowHolds) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  write(run, "c0", "a", 10, 20);
  use_resource(run, EventKind::read, "c0", "a", 30, 40);
  expect_holds(run.check(), "C4");
}

TEST(CheckerInWindowTest, WriteAfterTheDeadlineIsAViolation) {
  // The holder paused after acquiring and wrote when it resumed.
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  write(run, "c0", "a", 20, 1500);
  const Finding& finding = expect_violated(run.check(), "C4");
  EXPECT_EQ(finding.t, at(1500));
  EXPECT_TRUE(mentions(finding, "completed at 1500.000 ms")) << finding.message;
}

TEST(CheckerInWindowTest, UseAfterReleaseIsAViolation) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  release(run, "c0", "a", 50, 55);
  write(run, "c0", "a", 60, 65);
  expect_violated(run.check(), "C4");
}

TEST(CheckerInWindowTest, UseUnderAValueNoAcquireGrantedIsAViolation) {
  RunHistory run;
  write(run, "c0", "never-granted", 10, 20);
  const Finding& finding = expect_violated(run.check(), "C4");
  EXPECT_TRUE(mentions(finding, "never-granted")) << finding.message;
}

TEST(CheckerInWindowTest, FailedUseChangedNothing) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  write(run, "c0", "a", 2000, 2010, ending(Phase::fail));
  expect_holds(run.check(), "C4");
}

TEST(CheckerInWindowTest, FencedUseIsNotItsConcern) {
  RunHistory run(5, true);
  acquire(run, "c0", "a", 0, 5, fenced(1));
  write(run, "c0", "a", 2000, 2010, with_token(1));
  expect_not_applicable(run.check(), "C4");
}

// --- C5 token uniqueness -------------------------------------------------------

TEST(CheckerTokenUniquenessTest, DistinctTokensHold) {
  RunHistory run(5, true);
  acquire(run, "c0", "a", 0, 5, fenced(1));
  acquire(run, "c1", "b", 1000, 1005, fenced(2));
  expect_holds(run.check(), "C5");
}

TEST(CheckerTokenUniquenessTest, SharedTokenIsAViolation) {
  RunHistory run(5, true);
  acquire(run, "c0", "a", 0, 5, fenced(7));
  acquire(run, "c1", "b", 1000, 1005, fenced(7));
  const Finding& finding = expect_violated(run.check(), "C5");
  EXPECT_EQ(finding.proc, "c1");
  EXPECT_TRUE(mentions(finding, "token 7")) << finding.message;
}

TEST(CheckerTokenUniquenessTest, EachPermitHasTokensOfItsOwn) {
  RunHistory run(5, true);
  acquire(run, "c0", "p", 0, 5, permit_of("pool", 0, 2).fenced(1));
  acquire(run, "c1", "q", 10, 15, permit_of("pool", 1, 2).fenced(1));
  expect_holds(run.check(), "C5");
  release(run, "c0", "p", 100, 102);
  acquire(run, "c2", "r", 200, 205, permit_of("pool", 0, 2).fenced(1));
  const Finding& finding = expect_violated(run.check(), "C5");
  EXPECT_EQ(finding.proc, "c2");
  EXPECT_TRUE(mentions(finding, "token 1 on sem:pool:0 granted to value r")) << finding.message;
}

TEST(CheckerTokenUniquenessTest, EachResourceOfASetHasItsOwnToken) {
  RunHistory run(5, true);
  acquire(run, "c0", "ab", 0, 5, over({"a", "b"}, {3, 7}));
  release(run, "c0", "ab", 50, 52);
  acquire(run, "c1", "b", 100, 105, over({"b"}, {3}));  // b's 3 is not a's 3
  expect_holds(run.check(), "C5");
  acquire(run, "c2", "a", 200, 205, over({"a"}, {3}));
  const Finding& finding = expect_violated(run.check(), "C5");
  EXPECT_TRUE(mentions(finding, "token 3 on lock:a")) << finding.message;
}

TEST(CheckerTokenUniquenessTest, UnfencedRunHasNothingToCheck) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  expect_not_applicable(run.check(), "C5");
}

// --- C6 token monotonicity ---------------------------------------------------------

TEST(CheckerTokenMonotonicityTest, LaterHoldingWithHigherTokenHolds) {
  RunHistory run(5, true);
  acquire(run, "c0", "a", 0, 5, fenced(3));
  acquire(run, "c1", "b", 1000, 1005, fenced(4));
  expect_holds(run.check(), "C6");
}

TEST(CheckerTokenMonotonicityTest, LaterHoldingWithLowerTokenIsAViolation) {
  // A node restarted without its counter: the next token went backwards.
  RunHistory run(5, true);
  acquire(run, "c0", "a", 0, 5, fenced(5));
  acquire(run, "c1", "b", 1000, 1005, fenced(2));
  const Finding& finding = expect_violated(run.check(), "C6");
  EXPECT_EQ(finding.proc, "c1");
  EXPECT_TRUE(mentions(finding, "token 2")) << finding.message;
  EXPECT_TRUE(mentions(finding, "token 5")) << finding.message;
}

TEST(CheckerTokenMonotonicityTest, ConcurrentInvokeMayGetALowerToken) {
  // b was invoked before a's ok: the two acquisitions overlap in time.
  RunHistory run(5, true);
  acquire(run, "c0", "a", 0, 50, fenced(5));
  acquire(run, "c1", "b", 10, 1005, fenced(2));
  expect_holds(run.check(), "C6");
}

TEST(CheckerTokenMonotonicityTest, TokensIncreasePerPermit) {
  RunHistory run(5, true);
  acquire(run, "c0", "p", 0, 5, permit_of("pool", 0, 2).fenced(5));
  acquire(run, "c1", "q", 10, 15, permit_of("pool", 1, 2).fenced(2));  // permit 1's own order
  release(run, "c0", "p", 100, 102);
  acquire(run, "c2", "r", 200, 205, permit_of("pool", 0, 2).fenced(6));
  expect_holds(run.check(), "C6");
  release(run, "c2", "r", 300, 302);
  acquire(run, "c3", "s", 400, 405, permit_of("pool", 0, 2).fenced(4));
  const Finding& finding = expect_violated(run.check(), "C6");
  EXPECT_EQ(finding.proc, "c3");
  EXPECT_TRUE(mentions(finding, "token 4 on sem:pool:0 of value s (c3)")) << finding.message;
  EXPECT_TRUE(mentions(finding, "not above token 6 of value r")) << finding.message;
}

TEST(CheckerTokenMonotonicityTest, TokensIncreasePerResourceAcrossSetsAndPlainLocks) {
  RunHistory run(5, true);
  acquire(run, "c0", "a", 0, 5, over({"a"}, {9}));
  release(run, "c0", "a", 50, 52);
  acquire(run, "c1", "ab", 100, 105, over({"a", "b"}, {10, 2}));
  release(run, "c1", "ab", 150, 152);
  acquire(run, "c2", "b", 200, 205, over({"b"}, {3}));
  expect_holds(run.check(), "C6");
  release(run, "c2", "b", 250, 252);
  acquire(run, "c3", "bc", 300, 305, over({"b", "c"}, {3, 1}));
  const Finding& finding = expect_violated(run.check(), "C6");
  EXPECT_TRUE(mentions(finding, "token 3 on lock:b of value bc")) << finding.message;
  EXPECT_EQ(findings_of(run.check(), "C6").size(), 1U) << "c's token is its first";
}

TEST(CheckerTokenMonotonicityTest, UnfencedRunHasNothingToCheck) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  acquire(run, "c1", "b", 1000, 1005);
  expect_not_applicable(run.check(), "C6");
}

// --- C7 fenced resource ---------------------------------------------------------

TEST(CheckerFencedResourceTest, IncreasingAcceptedTokensHold) {
  RunHistory run(5, true);
  write(run, "c0", "a", 0, 5, with_token(1));
  write(run, "c1", "b", 10, 15, with_token(2));
  write(run, "c0", "a", 20, 25, with_token(1).ending(Phase::fail));  // rejected: fine
  resource_snapshot(run, 100, 2, {"c0:1:1:x", "c1:2:2:y"});
  expect_holds(run.check(), "C7");
}

TEST(CheckerFencedResourceTest, AcceptingBelowTheHighWaterMarkIsAViolation) {
  RunHistory run(5, true);
  write(run, "c1", "b", 0, 5, with_token(2));
  write(run, "c0", "a", 10, 15, with_token(1));  // the resource forgot to check
  const Finding& finding = expect_violated(run.check(), "C7");
  EXPECT_EQ(finding.proc, "c0");
  EXPECT_TRUE(mentions(finding, "token 1 below the high-water mark 2")) << finding.message;
}

TEST(CheckerFencedResourceTest, OverlappingOpsAreNotOrdered) {
  // The token-1 write was invoked before the token-2 write was accepted.
  RunHistory run(5, true);
  write(run, "c1", "b", 0, 10, with_token(2));
  write(run, "c0", "a", 5, 15, with_token(1));
  expect_holds(run.check(), "C7");
}

TEST(CheckerFencedResourceTest, LogWithDecreasingTokensIsAViolation) {
  RunHistory run(5, true);
  write(run, "c0", "a", 0, 5, with_token(1));
  resource_snapshot(run, 100, 1, {"c1:4:2:y", "c0:1:1:x"});
  const Finding& finding = expect_violated(run.check(), "C7");
  EXPECT_TRUE(mentions(finding, "\"c0:1:1:x\" has token 1 after token 2")) << finding.message;
}

TEST(CheckerFencedResourceTest, UnfencedRunHasNothingToCheck) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  write(run, "c0", "a", 10, 15);
  expect_not_applicable(run.check(), "C7");
}

// --- C8 no lost update ---------------------------------------------------------------

TEST(CheckerNoLostUpdateTest, EveryAcceptedUpdateInTheFinalStateHolds) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  write(run, "c0", "a", 10, 15);
  write(run, "c0", "a", 20, 25);
  use_resource(run, EventKind::append, "c0", "a", 30, 35, appending("c0:9::x"));
  resource_snapshot(run, 100, 2, {"c0:9::x"});
  expect_holds(run.check(), "C8");
}

TEST(CheckerNoLostUpdateTest, CounterBelowAcceptedWritesIsAViolation) {
  // Two holders read 0 and both wrote 1.
  RunHistory run;
  write(run, "c0", "a", 10, 15);
  write(run, "c1", "b", 12, 16);
  resource_snapshot(run, 100, 1);
  const Finding& finding = expect_violated(run.check(), "C8");
  EXPECT_TRUE(mentions(finding, "counter is 1 but 2 writes were accepted")) << finding.message;
}

TEST(CheckerNoLostUpdateTest, MissingAcceptedAppendIsAViolation) {
  RunHistory run;
  use_resource(run, EventKind::append, "c0", "a", 30, 35, appending("c0:9::x"));
  resource_snapshot(run, 100, 0, {"c1:3::y"});
  const Finding& finding = expect_violated(run.check(), "C8");
  EXPECT_TRUE(mentions(finding, "\"c0:9::x\" is missing")) << finding.message;
}

TEST(CheckerNoLostUpdateTest, IndeterminateWriteMayHaveLanded) {
  RunHistory run;
  write(run, "c0", "a", 10, 15);
  write(run, "c0", "a", 20, 25, ending(Phase::info));
  resource_snapshot(run, 100, 2);
  expect_holds(run.check(), "C8");
}

TEST(CheckerNoLostUpdateTest, EachStorageIsCheckedOnItsOwn) {
  // A semaphore's two permits, each with its counter and log.
  RunHistory run;
  acquire(run, "c0", "p", 0, 5, permit_of("pool", 0, 2));
  acquire(run, "c1", "q", 1, 6, permit_of("pool", 1, 2));
  write(run, "c0", "p", 10, 15, ResourceUse().at_key("counter:0"));
  write(run, "c1", "q", 10, 15, ResourceUse().at_key("counter:1"));
  write(run, "c1", "q", 20, 25, ResourceUse().at_key("counter:1"));
  use_resource(run, EventKind::append, "c0", "p", 30, 35, appending("c0:2::1").at_key("log:0"));
  use_resource(run, EventKind::append, "c1", "q", 30, 35, appending("c1:2::2").at_key("log:1"));
  auto storage = [&](const std::string& index, std::int64_t counter,
                     std::vector<std::string> entries) {
    Event& snapshot = run.add(100, "harness", EventKind::snapshot, Phase::info);
    snapshot.target = "resource";
    snapshot.key = "counter:" + index;
    snapshot.log_key = "log:" + index;
    snapshot.count = counter;
    snapshot.entries = std::move(entries);
  };
  storage("0", 1, {"c0:2::1"});
  storage("1", 2, {"c1:2::2"});
  expect_holds(run.check(), "C8");
  // Permit 1's storage kept one write of two and lost its append.
  storage("1", 1, {"c0:2::1"});
  const CheckResult result = run.check();
  expect_violated(result, "C8");
  const auto found = findings_of(result, "C8");
  ASSERT_EQ(found.size(), 2U) << describe(result);
  EXPECT_TRUE(mentions(*found[0], "counter is 1 but 2 writes")) << found[0]->message;
  EXPECT_TRUE(mentions(*found[1], "\"c1:2::2\" is missing")) << found[1]->message;
}

TEST(CheckerNoLostUpdateTest, ASectionWritingTwoStoragesMakesTwoWrites) {
  // c0's one critical section (op 1) under a lock over a and b.
  RunHistory run;
  acquire(run, "c0", "ab", 0, 5, over({"a", "b"}));
  for (const std::string key : {"counter:a", "counter:b"}) {
    run.add(10, "c0", EventKind::write, Phase::invoke, 1).key = key;
    Event& done = run.add(12, "c0", EventKind::write, Phase::ok, 1);
    done.key = key;
    done.value = "ab";
  }
  for (const std::string key : {"counter:a", "counter:b"}) {
    Event& snapshot = run.add(100, "harness", EventKind::snapshot, Phase::info);
    snapshot.target = "resource";
    snapshot.key = key;
    snapshot.count = 1;
  }
  expect_holds(run.check(), "C8");
  Event& extra = run.add(100, "harness", EventKind::snapshot, Phase::info);
  extra.target = "resource";
  extra.key = "counter:b";
  extra.count = 0;  // b's write lost
  const Finding& finding = expect_violated(run.check(), "C8");
  EXPECT_TRUE(mentions(finding, "counter is 0 but 1 writes were accepted")) << finding.message;
}

TEST(CheckerNoLostUpdateTest, NoResourceSnapshotHasNothingToCheck) {
  RunHistory run;
  write(run, "c0", "a", 10, 15);
  expect_not_applicable(run.check(), "C8");
}

// --- C9 safe release ---------------------------------------------------------------

TEST(CheckerSafeReleaseTest, ReleasingWhereGrantedHolds) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5,
          answered(replies({{0, "granted"}, {1, "granted"}, {2, "granted"}, {3, "busy"}})));
  release(run, "c0", "a", 50, 55,
          replies({{0, "released"}, {1, "released"}, {2, "released"}, {3, "not_held"}}));
  expect_holds(run.check(), "C9");
}

TEST(CheckerSafeReleaseTest, ReleasingWhereAnotherHolderWasIsAViolation) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5,
          answered(replies({{0, "granted"}, {1, "granted"}, {2, "granted"}, {4, "busy"}})));
  release(run, "c0", "a", 50, 55, all_say("released", {0, 1, 2, 4}));
  const Finding& finding = expect_violated(run.check(), "C9");
  EXPECT_EQ(finding.t, at(55));
  EXPECT_TRUE(mentions(finding, "node 4")) << finding.message;
}

TEST(CheckerSafeReleaseTest, ExtendedNodeAndUnansweredGrantMayBeReleased) {
  // Node 3 timed out on the acquire (its SET landed late) and node 4 was
  // first reached by the extension.
  RunHistory run;
  acquire(run, "c0", "a", 0, 5,
          answered(replies({{0, "granted"}, {1, "granted"}, {2, "granted"}, {3, "timeout"}})));
  extend(run, "c0", "a", 400, 405, all_say("extended", {0, 1, 2, 4}));
  release(run, "c0", "a", 500, 505, all_say("released", {0, 1, 2, 3, 4}));
  expect_holds(run.check(), "C9");
}

TEST(CheckerSafeReleaseTest, NoReleaseHasNothingToCheck) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  expect_not_applicable(run.check(), "C9");
}

// --- C10 cleanup ------------------------------------------------------------------

TEST(CheckerCleanupTest, NodesEmptyOrExpiringWithinTheTtlHold) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  release(run, "c0", "a", 50, 55, replies({{0, "released"}, {1, "released"}, {2, "timeout"}}));
  node_snapshot(run, 100, 0, "", 0);
  node_snapshot(run, 100, 2, "a", 850);  // unreachable during the release: expires by itself
  expect_holds(run.check(), "C10");
}

TEST(CheckerCleanupTest, ValueWithoutExpiryIsAViolation) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  node_snapshot(run, 100, 1, "a", -1);
  const Finding& finding = expect_violated(run.check(), "C10");
  EXPECT_TRUE(mentions(finding, "node n1 keeps a without an expiry")) << finding.message;
}

TEST(CheckerCleanupTest, ExpiryLongerThanTheTtlIsAViolation) {
  // A node's clock jumped backwards: the key lives longer there.
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  node_snapshot(run, 100, 3, "a", 60'000);
  const Finding& finding = expect_violated(run.check(), "C10");
  EXPECT_TRUE(mentions(finding, "PTTL 60000 ms")) << finding.message;
}

TEST(CheckerCleanupTest, ValueBackAfterItsReleaseClearedTheNodeIsAViolation) {
  // The release found nothing on node 3; a delayed SET arrived after it.
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  release(run, "c0", "a", 50, 55,
          replies({{0, "released"}, {1, "released"}, {2, "released"}, {3, "not_held"}}));
  node_snapshot(run, 100, 3, "a", 900);
  const Finding& finding = expect_violated(run.check(), "C10");
  EXPECT_TRUE(mentions(finding, "node n3 still holds a")) << finding.message;
  EXPECT_TRUE(mentions(finding, "\"not_held\"")) << finding.message;
}

TEST(CheckerCleanupTest, NoNodeSnapshotHasNothingToCheck) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  resource_snapshot(run, 100, 0);
  expect_not_applicable(run.check(), "C10");
}

// --- C11 liveness --------------------------------------------------------------

TEST(CheckerLivenessTest, ProbeWithinBudgetAfterHealHolds) {
  RunHistory run;
  heal(run, 5000);
  probe(run, 5100, 2000, Phase::ok, 5400);
  expect_holds(run.check(), "C11");
}

TEST(CheckerLivenessTest, ProbeOverBudgetIsAViolation) {
  RunHistory run;
  heal(run, 5000);
  probe(run, 5100, 2000, Phase::ok, 8100);
  const Finding& finding = expect_violated(run.check(), "C11");
  EXPECT_EQ(finding.proc, "probe");
  EXPECT_TRUE(mentions(finding, "took 3000.000 ms, over its budget of 2000 ms")) << finding.message;
}

TEST(CheckerLivenessTest, FailedProbeIsAViolation) {
  RunHistory run;
  heal(run, 5000);
  probe(run, 5100, 2000, Phase::fail, 5300);
  expect_violated(run.check(), "C11");
}

TEST(CheckerLivenessTest, ProbeThatNeverCompletedIsAViolation) {
  RunHistory run;
  heal(run, 5000);
  probe(run, 5100, 2000, std::nullopt);
  const Finding& finding = expect_violated(run.check(), "C11");
  EXPECT_TRUE(mentions(finding, "never completed")) << finding.message;
}

TEST(CheckerLivenessTest, ProbesBeforeTheLastHealDoNotCount) {
  RunHistory run;
  probe(run, 100, 2000, Phase::fail, 200);
  heal(run, 5000);
  expect_not_applicable(run.check(), "C11");
}

TEST(CheckerLivenessTest, NoProbeHasNothingToCheck) {
  RunHistory run;
  heal(run, 5000);
  expect_not_applicable(run.check(), "C11");
}

// A link fault on `target` from `from_ms` to `to_ms` whose end asks its
// clients to acquire within `budget_ms` (0: asks nothing).
void link_fault(RunHistory& run, const std::string& target, double from_ms, double to_ms,
                std::int64_t budget_ms) {
  const std::int64_t op = run.next_op();
  Event& start = run.add(from_ms, "nemesis", EventKind::nemesis, Phase::invoke, op);
  start.fault = "link";
  start.target = target;
  start.detail = "blackhole both";
  Event& end = run.add(to_ms, "nemesis", EventKind::nemesis, Phase::ok, op);
  end.fault = "link";
  end.target = target;
  end.detail = "pass";
  end.budget_ms = budget_ms;
}

TEST(CheckerLivenessTest, ClientAcquiringWithinItsBudgetAfterItsLinksHealHolds) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  link_fault(run, "c0->n*", 100, 1300, 1000);
  failed_acquire(run, "c0", "b", 1000, 1500, all_say("timeout", {0, 1, 2, 3, 4}));
  acquire(run, "c0", "c", 1600, 1610);
  heal(run, 3000);
  expect_holds(run.check(), "C11");
}

TEST(CheckerLivenessTest, ClientThatNeverAcquiresAfterItsLinksHealIsAViolation) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  link_fault(run, "c0->n*", 100, 1300, 1000);
  failed_acquire(run, "c0", "c", 1400, 1900, all_say("timeout", {0, 1, 2, 3, 4}));
  failed_acquire(run, "c0", "d", 1900, 2200, all_say("timeout", {0, 1, 2, 3, 4}));
  // Another client's acquisitions are not c0's progress, nor is one after
  // the budget.
  acquire(run, "c1", "e", 1400, 1405);
  acquire(run, "c0", "f", 2400, 2450);
  heal(run, 3000);
  const CheckResult result = run.check();
  const Finding finding = expect_violated(result, "C11");
  EXPECT_EQ(finding.proc, "c0");
  EXPECT_EQ(finding.t, at(2300));
  EXPECT_TRUE(mentions(finding,
                       "c0 acquired nothing within 1000 ms after link c0->n* ended at "
                       "1300.000 ms (failed acquires in that time: 2)"))
      << finding.message;
  EXPECT_EQ(findings_of(result, "C11").size(), 1u) << describe(result);
}

TEST(CheckerLivenessTest, AStarTargetAsksEveryClient) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  acquire(run, "c1", "b", 10, 15);
  link_fault(run, "c*->n2", 100, 500, 1000);
  acquire(run, "c1", "c", 600, 605);
  heal(run, 3000);
  const Finding finding = expect_violated(run.check(), "C11");
  EXPECT_EQ(finding.proc, "c0");
}

TEST(CheckerLivenessTest, AFaultEndWithoutABudgetAsksNothing) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  link_fault(run, "c0->n*", 100, 1300, 0);
  heal(run, 3000);
  expect_not_applicable(run.check(), "C11");
}

TEST(CheckerLivenessTest, ABudgetRunningPastTheLastHealIsNotJudged) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  // The workload stopped before c0's budget ran out: the probe after the
  // heal speaks for liveness instead.
  link_fault(run, "c0->n*", 100, 2500, 1000);
  heal(run, 3000);
  expect_not_applicable(run.check(), "C11");
}

// --- C12 extension ----------------------------------------------------------------

TEST(CheckerExtensionTest, ExtensionOnAMajorityInTimeHolds) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5, capped_at(2));
  extend(run, "c0", "a", 500, 505);
  extend(run, "c0", "a", 1000, 1005);  // within the deadline the first extension set
  expect_holds(run.check(), "C12");
}

TEST(CheckerExtensionTest, ExtensionOnAMinorityIsAViolation) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  extend(run, "c0", "a", 500, 505, replies({{0, "extended"}, {1, "extended"}, {2, "not_held"}}));
  const Finding& finding = expect_violated(run.check(), "C12");
  EXPECT_TRUE(mentions(finding, "2 of 5 nodes extended")) << finding.message;
}

TEST(CheckerExtensionTest, ExtensionAfterTheDeadlineIsAViolation) {
  // Invoked before the 988 ms deadline, succeeded after it: the lock had
  // already lapsed and was resurrected.
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  extend(run, "c0", "a", 900, 1100);
  const Finding& finding = expect_violated(run.check(), "C12");
  EXPECT_TRUE(mentions(finding, "after the deadline 988.000 ms")) << finding.message;
}

TEST(CheckerExtensionTest, ExtensionsBeyondTheCapAreAViolation) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5, capped_at(2));
  extend(run, "c0", "a", 100, 105);
  extend(run, "c0", "a", 200, 205);
  extend(run, "c0", "a", 300, 305);
  const Finding& finding = expect_violated(run.check(), "C12");
  EXPECT_TRUE(mentions(finding, "extension #3")) << finding.message;
  EXPECT_EQ(finding.t, at(305));
}

TEST(CheckerExtensionTest, NoExtensionHasNothingToCheck) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  expect_not_applicable(run.check(), "C12");
}

// --- C13 semaphore capacity -----------------------------------------------------

TEST(CheckerSemaphoreTest, AsManyHoldersAsPermitsHold) {
  RunHistory run;
  acquire(run, "c0", "p", 0, 5, permit_of("pool", 0, 2));
  acquire(run, "c1", "q", 10, 15, permit_of("pool", 1, 2));
  release(run, "c0", "p", 100, 102);
  acquire(run, "c2", "r", 100, 110, permit_of("pool", 0, 2));   // after c0's release
  acquire(run, "c3", "s", 120, 125, permit_of("other", 0, 1));  // another semaphore
  expect_holds(run.check(), "C13");
}

TEST(CheckerSemaphoreTest, MoreHoldersThanPermitsIsAViolation) {
  // A restarted node forgot permit 0: a third holder of two permits.
  RunHistory run;
  acquire(run, "c0", "p", 0, 5, permit_of("pool", 0, 2));
  acquire(run, "c1", "q", 10, 15, permit_of("pool", 1, 2));
  acquire(run, "c2", "r", 400, 410, permit_of("pool", 0, 2));
  const Finding& finding = expect_violated(run.check(), "C13");
  EXPECT_EQ(finding.proc, "c2");
  EXPECT_EQ(finding.t, at(410));
  EXPECT_TRUE(mentions(finding, "value r (c2) permit 0")) << finding.message;
  EXPECT_TRUE(mentions(finding, "holder #3 of semaphore \"pool\" (2 permits)")) << finding.message;
  EXPECT_TRUE(mentions(finding, "value p (c0) permit 0")) << finding.message;
  EXPECT_TRUE(mentions(finding, "value q (c1) permit 1")) << finding.message;
}

TEST(CheckerSemaphoreTest, APermitOutsideTheCountIsAViolation) {
  RunHistory run;
  acquire(run, "c0", "p", 0, 5, permit_of("pool", 2, 2));
  const Finding& finding = expect_violated(run.check(), "C13");
  EXPECT_TRUE(mentions(finding, "holds permit 2 of semaphore \"pool\", which has 2 permits"))
      << finding.message;
}

TEST(CheckerSemaphoreTest, NoSemaphoreHasNothingToCheck) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  acquire(run, "c1", "ab", 10, 15, over({"a", "b"}));
  expect_not_applicable(run.check(), "C13");
}

// --- C14 nested holds ------------------------------------------------------------

// How a nested hold began; the default joins the holding with no round trip.
struct Nesting {
  std::int64_t attempts = 0;
  std::vector<NodeReply> nodes;
  std::optional<std::string> value;  // default: the holding's
};

// Nested hold #`id` of the holding `op` of `proc` (value `value`): the
// lock() call at `begin_ms`, its end at `end_ms` (none when negative).
void nest(RunHistory& run, const std::string& proc, std::int64_t op, std::int64_t id,
          const std::string& value, double begin_ms, double end_ms,
          const Nesting& how = Nesting()) {
  Event& invoke = run.add(begin_ms, proc, EventKind::nest, Phase::invoke, op);
  invoke.nested = id;
  invoke.value = value;
  Event& ok = run.add(begin_ms, proc, EventKind::nest, Phase::ok, op);
  ok.nested = id;
  ok.value = how.value.value_or(value);
  ok.attempts = how.attempts;
  ok.nodes = how.nodes;
  if (end_ms < 0) return;
  Event& end = run.add(end_ms, proc, EventKind::unnest, Phase::ok, op);
  end.nested = id;
  end.value = value;
}

// A loss hold `nested` (0: the outer one) of holding `op` observed.
void lost(RunHistory& run, const std::string& proc, std::int64_t op, std::int64_t nested,
          const std::string& value, double at_ms, std::string detail = "on_lost") {
  Event& loss = run.add(at_ms, proc, EventKind::lost, Phase::info, op);
  loss.nested = nested;
  loss.value = value;
  loss.detail = std::move(detail);
  loss.error = "lock lost";
}

// A write under nested hold `nested` of holding `op`.
void nested_write(RunHistory& run, const std::string& proc, std::int64_t op, std::int64_t nested,
                  const std::string& value, double invoke_ms, double done_ms,
                  Phase outcome = Phase::ok) {
  for (const auto& [t, phase] :
       {std::pair{invoke_ms, Phase::invoke}, std::pair{done_ms, outcome}}) {
    Event& e = run.add(t, proc, EventKind::write, phase, op);
    e.nested = nested;
    e.value = value;
    e.key = "resource";
    if (phase == Phase::fail) e.error = "fenced_out";
  }
}

// A renewal seen on a guard at `at_ms`: its count and the new deadline.
void renewed(RunHistory& run, const std::string& proc, const std::string& value, double at_ms,
             std::int64_t count, double deadline_ms) {
  Event& ok = run.add(at_ms, proc, EventKind::extend, Phase::ok, run.next_op());
  ok.value = value;
  ok.ttl_ms = kTtlMs;
  ok.renewals = count;
  ok.deadline_t = at(deadline_ms);
}

std::int64_t op_of_acquire(RunHistory& run, const std::string& proc, const std::string& value,
                           double invoke_ms, double ok_ms, const Acquisition& how = Acquisition()) {
  return acquire(run, proc, value, invoke_ms, ok_ms, how).op;
}

TEST(CheckerNestedTest, ANestedHoldJoinedAndEndedInsideItsLockHolds) {
  // The window is [5, 988] ms, cut by the release at 60.
  RunHistory run;
  const std::int64_t op = op_of_acquire(run, "c0", "a", 0, 5);
  nest(run, "c0", op, 1, "a", 10, 50);
  nested_write(run, "c0", op, 1, "a", 20, 25);
  release(run, "c0", "a", 60, 62);
  const CheckResult result = run.check();
  expect_holds(result, "C14");
  expect_holds(result, "C4");
}

TEST(CheckerNestedTest, NoNestedHoldHasNothingToCheck) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  release(run, "c0", "a", 60, 62);
  expect_not_applicable(run.check(), "C14");
}

TEST(CheckerNestedTest, ANestedHoldBegunAfterTheReleaseIsAViolation) {
  RunHistory run;
  const std::int64_t op = op_of_acquire(run, "c0", "a", 0, 5);
  release(run, "c0", "a", 60, 62);
  nest(run, "c0", op, 1, "a", 70, 80);
  const Finding finding = expect_violated(run.check(), "C14");
  EXPECT_EQ(finding.t, at(70));
  EXPECT_TRUE(mentions(finding,
                       "nested hold #1 of c0 (op 1) began at 70.000 ms, outside the "
                       "window [5.000 ms, 60.000 ms] of value a (c0)"))
      << finding.message;
}

TEST(CheckerNestedTest, ANestedHoldThatAcquiredALockOfItsOwnIsAViolation) {
  // The second lock() went to the nodes and got another value.
  RunHistory run;
  const std::int64_t op = op_of_acquire(run, "c0", "a", 0, 5);
  Nesting fresh;
  fresh.attempts = 1;
  fresh.nodes = all_say("granted", {0, 1, 2});
  fresh.value = "b";
  nest(run, "c0", op, 1, "a", 10, 50, fresh);
  release(run, "c0", "a", 60, 62);
  const CheckResult result = run.check();
  const auto found = findings_of(result, "C14");
  ASSERT_EQ(found.size(), 2u) << describe(result);
  EXPECT_TRUE(mentions(*found[0],
                       "ran 1 acquire rounds with 3 node replies (3 granted): a "
                       "second acquisition on the nodes"))
      << found[0]->message;
  EXPECT_TRUE(mentions(*found[1], "holds value b, not the value a of the holding it nests in"))
      << found[1]->message;
}

TEST(CheckerNestedTest, UseUnderANestedHoldAfterTheWindowIsAViolation) {
  // The holder stopped (a pause) past its 988 ms deadline between its
  // check and its write; it is told of the loss only after resuming.
  RunHistory run;
  const std::int64_t op = op_of_acquire(run, "c0", "a", 0, 5);
  nest(run, "c0", op, 1, "a", 10, 1520);
  nested_write(run, "c0", op, 1, "a", 1500, 1502);
  lost(run, "c0", op, 0, "a", 1501);
  lost(run, "c0", op, 1, "a", 1501);
  lost(run, "c0", op, 1, "a", 1510, "check");
  const CheckResult result = run.check();
  const auto found = findings_of(result, "C14");
  ASSERT_EQ(found.size(), 2u) << describe(result);
  EXPECT_TRUE(mentions(*found[0],
                       "write op 1 of c0 under nested hold #1 of c0 (op 1) at 1500.000 "
                       "ms lies outside the window [5.000 ms, 988.000 ms]"))
      << found[0]->message;
  EXPECT_EQ(found[1]->t, at(1502));
}

TEST(CheckerNestedTest, AUseTheResourceRefusedChangedNothing) {
  RunHistory run;
  const std::int64_t op = op_of_acquire(run, "c0", "a", 0, 5);
  nest(run, "c0", op, 1, "a", 10, 1520);
  nested_write(run, "c0", op, 1, "a", 1500, 1502, Phase::fail);
  lost(run, "c0", op, 0, "a", 1501);
  lost(run, "c0", op, 1, "a", 1501);
  expect_holds(run.check(), "C14");
}

TEST(CheckerNestedTest, ANestedHoldOutlivingItsLockUntoldIsAViolation) {
  RunHistory run;
  const std::int64_t op = op_of_acquire(run, "c0", "a", 0, 5);
  nest(run, "c0", op, 1, "a", 10, 1500);
  const Finding finding = expect_violated(run.check(), "C14");
  EXPECT_EQ(finding.t, at(1500));
  EXPECT_TRUE(mentions(finding,
                       "ended at 1500.000 ms, after the window [5.000 ms, 988.000 ms] of "
                       "value a (c0) closed, without observing the loss"))
      << finding.message;
}

TEST(CheckerNestedTest, ANestedHoldToldBeforeItsEndMayEndLate) {
  RunHistory run;
  const std::int64_t op = op_of_acquire(run, "c0", "a", 0, 5);
  nest(run, "c0", op, 1, "a", 10, 1500);
  lost(run, "c0", op, 1, "a", 1490, "check");
  expect_holds(run.check(), "C14");
}

TEST(CheckerNestedTest, ANestedHoldThatNeverEndsMustBeTold) {
  RunHistory run;
  const std::int64_t op = op_of_acquire(run, "c0", "a", 0, 5);
  nest(run, "c0", op, 1, "a", 10, -1);
  const Finding finding = expect_violated(run.check(), "C14");
  EXPECT_TRUE(mentions(finding, "never ended")) << finding.message;
}

TEST(CheckerNestedTest, ALossSignalReachesEveryHoldOpenThen) {
  // Lost at the 988 ms deadline: the outer hold and the nested hold #2,
  // open then, are told; #1 ended before and need not be.
  RunHistory run;
  const std::int64_t op = op_of_acquire(run, "c0", "a", 0, 5);
  nest(run, "c0", op, 1, "a", 10, 50);
  nest(run, "c0", op, 2, "a", 60, 990);
  lost(run, "c0", op, 0, "a", 988);
  lost(run, "c0", op, 2, "a", 988);
  expect_holds(run.check(), "C14");
}

TEST(CheckerNestedTest, ALossSignalThatMissesAnOpenHoldIsAViolation) {
  RunHistory run;
  const std::int64_t op = op_of_acquire(run, "c0", "a", 0, 5);
  nest(run, "c0", op, 1, "a", 10, 985);
  nest(run, "c0", op, 2, "a", 60, 990);
  lost(run, "c0", op, 0, "a", 984);
  lost(run, "c0", op, 1, "a", 984);
  const Finding finding = expect_violated(run.check(), "C14");
  EXPECT_TRUE(mentions(finding,
                       "the loss signalled at 984.000 ms to a hold of value a (c0) never "
                       "reached nested hold #2 of c0 (op 1), open then"))
      << finding.message;
}

TEST(CheckerNestedTest, ALossSignalToANestedHoldAloneIsAViolation) {
  RunHistory run;
  const std::int64_t op = op_of_acquire(run, "c0", "a", 0, 5);
  nest(run, "c0", op, 1, "a", 10, 990);
  lost(run, "c0", op, 1, "a", 984);
  const Finding finding = expect_violated(run.check(), "C14");
  EXPECT_TRUE(mentions(finding, "never reached its outer hold")) << finding.message;
}

TEST(CheckerNestedTest, ANestedHoldOfNoHoldingIsAViolation) {
  RunHistory run;
  nest(run, "c0", 7, 1, "a", 10, 50);
  const Finding finding = expect_violated(run.check(), "C14");
  EXPECT_TRUE(mentions(finding, "nests in op 7, which no acquire of c0 granted"))
      << finding.message;
}

// --- C12 on renewals seen on a guard ------------------------------------------------

TEST(CheckerExtensionTest, RenewalsSeenOnAGuardRaiseTheWindowWithinTheCap) {
  // No invoke and no node replies: the guard shows neither.
  RunHistory run;
  acquire(run, "c0", "a", 0, 5, capped_at(3));
  renewed(run, "c0", "a", 340, 1, 1320);
  renewed(run, "c0", "a", 1000, 3, 1990);  // two renewals between the looks
  write(run, "c0", "a", 1900, 1905);
  const CheckResult result = run.check();
  expect_holds(result, "C12");
  expect_holds(result, "C4");  // the window reaches 1990 ms
}

TEST(CheckerExtensionTest, RenewalsSeenOnAGuardBeyondTheCapAreAViolation) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5, capped_at(2));
  renewed(run, "c0", "a", 340, 1, 1320);
  renewed(run, "c0", "a", 1000, 3, 1990);
  const Finding finding = expect_violated(run.check(), "C12");
  EXPECT_TRUE(mentions(finding, "extension #3 of value a (c0) exceeds the cap of 2"))
      << finding.message;
}

TEST(CheckerExtensionTest, ARenewalSeenOnAGuardThatBeganAfterTheDeadlineIsAViolation) {
  // The deadline was 988 ms; a renewal claiming 2100 ms began after it.
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  renewed(run, "c0", "a", 1200, 1, 2100);
  const Finding finding = expect_violated(run.check(), "C12");
  EXPECT_TRUE(mentions(finding, "past the deadline 988.000 ms seen before")) << finding.message;
}

}  // namespace
}  // namespace redlock::chaos

namespace redlock::chaos {
namespace {

// --- C15 leadership --------------------------------------------------------

TEST(CheckerLeadershipTest, LeadersInTurnWithRisingTermsHold) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5, leading(1));
  release(run, "c0", "a", 100, 102);
  acquire(run, "c1", "b", 50, 150, leading(2));  // campaigned while a led
  release(run, "c1", "b", 200, 202);
  expect_holds(run.check(), "C15");
}

TEST(CheckerLeadershipTest, ALaterLeaderWithALowerTermIsAViolation) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5, leading(7));
  release(run, "c0", "a", 100, 102);
  acquire(run, "c1", "b", 120, 150, leading(7));
  const Finding& finding = expect_violated(run.check(), "C15");
  EXPECT_EQ(finding.proc, "c1");
  EXPECT_TRUE(mentions(finding, "term not above")) << finding.message;
}

TEST(CheckerLeadershipTest, TwoLeadersAtOnceIsAViolation) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5, leading(1));
  acquire(run, "c1", "b", 300, 310, leading(2));
  const Finding& finding = expect_violated(run.check(), "C15");
  EXPECT_TRUE(mentions(finding, "leads at once with value a (c0)")) << finding.message;
}

TEST(CheckerLeadershipTest, OtherLocksHaveNothingToCheck) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5, fenced(1));
  expect_not_applicable(run.check(), "C15");
}

}  // namespace
}  // namespace redlock::chaos

namespace redlock::chaos {
namespace {

// --- C16 fair order --------------------------------------------------------

TEST(CheckerFairOrderTest, WaitersServedInTicketOrderHold) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 100, in_line(1, 10, 20));
  release(run, "c0", "a", 150, 152);
  acquire(run, "c1", "b", 30, 200, in_line(2, 40, 50));
  expect_holds(run.check(), "C16");
}

TEST(CheckerFairOrderTest, AWaiterDrawingLaterThatGoesFirstIsAViolation) {
  RunHistory run;
  acquire(run, "c1", "b", 30, 100, in_line(2, 40, 50));  // drew after a was recorded
  release(run, "c1", "b", 150, 152);
  acquire(run, "c0", "a", 0, 200, in_line(1, 10, 20));
  const Finding& finding = expect_violated(run.check(), "C16");
  EXPECT_EQ(finding.proc, "c1");
  EXPECT_TRUE(mentions(finding, "overtook value a (c0)")) << finding.message;
}

TEST(CheckerFairOrderTest, ALaterTicketThatIsNotLargerIsAViolation) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 100, in_line(5, 10, 20));
  release(run, "c0", "a", 150, 152);
  acquire(run, "c1", "b", 30, 200, in_line(5, 40, 50));
  const Finding& finding = expect_violated(run.check(), "C16");
  EXPECT_TRUE(mentions(finding, "not above")) << finding.message;
}

TEST(CheckerFairOrderTest, TicketsDrawnAtOnceMayGoEitherWay) {
  // b began drawing before a's ticket was recorded: no order is owed.
  RunHistory run;
  acquire(run, "c1", "b", 0, 100, in_line(2, 15, 25));
  release(run, "c1", "b", 150, 152);
  acquire(run, "c0", "a", 0, 200, in_line(1, 10, 20));
  expect_holds(run.check(), "C16");
}

TEST(CheckerFairOrderTest, AWaiterPausedInLineIsNotOwedItsTurn) {
  RunHistory run;
  const std::int64_t op = run.next_op();
  Event& stop = run.add(25, "nemesis", EventKind::nemesis, Phase::invoke, op);
  stop.fault = "pause";
  stop.target = "c0";
  Event& go = run.add(160, "nemesis", EventKind::nemesis, Phase::ok, op);
  go.fault = "pause";
  go.target = "c0";
  acquire(run, "c1", "b", 30, 100, in_line(2, 40, 50));
  release(run, "c1", "b", 150, 152);
  acquire(run, "c0", "a", 0, 200, in_line(1, 10, 20));
  expect_holds(run.check(), "C16");
}

// A client that stops itself at a point of its work records the pause
// under its own name and op number ("pause-client"): that pause excuses it
// as the nemesis's does, and only it (another client's op of the same
// number is not its end).
TEST(CheckerFairOrderTest, AWaiterThatPausedItselfInLineIsNotOwedItsTurn) {
  const auto run_with_self_pause = [](bool paused_waiter_is_c0) {
    RunHistory run;
    const std::string who = paused_waiter_is_c0 ? "c0" : "c2";
    Event& stop = run.add(25, who, EventKind::nemesis, Phase::invoke, 7);
    stop.fault = "pause-client";
    stop.target = who;
    Event& go = run.add(160, who, EventKind::nemesis, Phase::ok, 7);
    go.fault = "pause-client";
    go.target = who;
    acquire(run, "c1", "b", 30, 100, in_line(2, 40, 50));
    release(run, "c1", "b", 150, 152);
    acquire(run, "c0", "a", 0, 200, in_line(1, 10, 20));
    return run.check();
  };
  expect_holds(run_with_self_pause(true), "C16");
  (void)expect_violated(run_with_self_pause(false), "C16");
}

// Tickets count per resource: waiters for two resources (plain locks of a
// scenario that mixes them) are never compared, whatever their tickets.
TEST(CheckerFairOrderTest, WaitersForTwoResourcesAreNotCompared) {
  RunHistory run;
  acquire(run, "c1", "b", 30, 100, in_line(1, 40, 50).over({"y"}));
  release(run, "c1", "b", 150, 152);
  acquire(run, "c0", "a", 0, 200, in_line(1, 10, 20).over({"x"}));
  expect_holds(run.check(), "C16");
  RunHistory same;
  acquire(same, "c1", "b", 30, 100, in_line(1, 40, 50).over({"x"}));
  release(same, "c1", "b", 150, 152);
  acquire(same, "c0", "a", 0, 200, in_line(1, 10, 20).over({"x"}));
  (void)expect_violated(same.check(), "C16");
}

// A set's ticket is that of the last line it waited in, which may be
// either member's: its places are C17's, and C16 compares none of them.
TEST(CheckerFairOrderTest, ASetsTicketsFromItsMembersLinesAreNotCompared) {
  RunHistory run;
  acquire(run, "c0", "s", 0, 100,
          over({"a", "c"}).waited_for("a", 3, 10).waited_for("c", 9, 20).in_line(9, 15, 20));
  release(run, "c0", "s", 110, 111);
  acquire(run, "c0", "t", 120, 200, over({"a", "c"}).waited_for("a", 5, 130).in_line(5, 125, 130));
  const CheckResult result = run.check();
  expect_not_applicable(result, "C16");
  expect_holds(result, "C17");
}

TEST(CheckerFairOrderTest, LocksThatNeverWaitedInLineHaveNothingToCheck) {
  RunHistory run;
  acquire(run, "c0", "a", 0, 5);
  expect_not_applicable(run.check(), "C16");
}

}  // namespace
}  // namespace redlock::chaos

namespace redlock::chaos {
namespace {

// --- C17 set turn ------------------------------------------------------------

// The set c0 over {a, c} waits in a's line from 20 ms (its place recorded)
// and acquires at 200 ms; c1 locks a alone at the `c1_ok` times in
// between, each for 10 ms.
RunHistory set_waiting_behind(std::vector<double> c1_ok) {
  RunHistory run;
  acquire(run, "c0", "s", 0, 200, over({"a", "c"}).waited_for("a", 4, 20));
  int n = 0;
  for (double ok : c1_ok) {
    const std::string value = "p" + std::to_string(++n);
    acquire(run, "c1", value, ok - 5, ok, over({"a"}));
    release(run, "c1", value, ok + 10, ok + 11);
  }
  return run;
}

void pause_client(RunHistory& run, const std::string& client, double from, double to) {
  const std::int64_t op = run.next_op();
  Event& stop = run.add(from, "nemesis", EventKind::nemesis, Phase::invoke, op);
  stop.fault = "pause";
  stop.target = client;
  Event& go = run.add(to, "nemesis", EventKind::nemesis, Phase::ok, op);
  go.fault = "pause";
  go.target = client;
}

TEST(CheckerSetTurnTest, OneClientTakingTheMemberTwiceBeforeTheSetIsAViolation) {
  const Finding finding = expect_violated(set_waiting_behind({50, 100}).check(), "C17");
  EXPECT_EQ(finding.proc, "c1");
  EXPECT_EQ(finding.t, at(100));
  EXPECT_TRUE(mentions(finding, "value p1 (c1) and value p2 (c1) acquired on lock:a"))
      << finding.message;
  EXPECT_TRUE(mentions(finding, "value s (c0)'s place in the line of a (ticket 4"))
      << finding.message;
}

TEST(CheckerSetTurnTest, ASetWaiterPausedInBetweenIsNotOwedItsTurn) {
  RunHistory run = set_waiting_behind({50, 100});
  pause_client(run, "c0", 60, 90);
  expect_holds(run.check(), "C17");
  // A pause after the second acquisition excuses nothing.
  RunHistory late = set_waiting_behind({50, 100});
  pause_client(late, "c0", 120, 150);
  (void)expect_violated(late.check(), "C17");
}

TEST(CheckerSetTurnTest, OneTurnOfEachOtherClientBeforeTheSetHolds) {
  expect_holds(set_waiting_behind({50}).check(), "C17");
  RunHistory run = set_waiting_behind({50});
  acquire(run, "c2", "q", 70, 80, over({"a"}));
  release(run, "c2", "q", 90, 91);
  expect_holds(run.check(), "C17");
}

// Only the member's acquisitions between the place's record and the set's
// own count: before the record the set had no place to be owed, and
// another member's are in another line.
TEST(CheckerSetTurnTest, OnlyTheMembersAcquisitionsInTheWindowCount) {
  expect_holds(set_waiting_behind({10, 100}).check(), "C17");
  expect_holds(set_waiting_behind({100, 250}).check(), "C17");
  RunHistory run;
  acquire(run, "c0", "s", 0, 200, over({"a", "c"}).waited_for("a", 4, 20));
  acquire(run, "c1", "p1", 45, 50, over({"c"}));
  release(run, "c1", "p1", 60, 61);
  acquire(run, "c1", "p2", 95, 100, over({"c"}));
  release(run, "c1", "p2", 110, 111);
  expect_holds(run.check(), "C17");
}

// Another set holding the member counts as a plain lock does.
TEST(CheckerSetTurnTest, AnotherSetTakingTheMemberTwiceIsAViolation) {
  RunHistory run;
  acquire(run, "c0", "s", 0, 200, over({"a", "c"}).waited_for("a", 4, 20));
  acquire(run, "c1", "t1", 45, 50, over({"a", "b"}));
  release(run, "c1", "t1", 60, 61);
  acquire(run, "c1", "t2", 95, 100, over({"a", "b"}));
  release(run, "c1", "t2", 110, 111);
  (void)expect_violated(run.check(), "C17");
}

// A set that waited its turn is made one lock by a round counted as an
// extend: its nodes answer "extended", which C1 and C9 take as the grant
// of a set (only of a set: a plain lock's acquire is granted or not).
TEST(CheckerSetTurnTest, AnAdoptedSetsExtendedRepliesAreItsGrants) {
  RunHistory run;
  acquire(run, "c0", "s", 0, 200,
          over({"a", "c"}).waited_for("a", 4, 20).answered(all_say("extended", {0, 1, 3})));
  release(run, "c0", "s", 210, 212, all_say("released", {0, 1, 3}));
  const CheckResult result = run.check();
  expect_holds(result, "C1");
  expect_holds(result, "C9");
  RunHistory plain;
  acquire(plain, "c1", "p", 0, 5, over({"a"}).answered(all_say("extended", {0, 1, 3})));
  release(plain, "c1", "p", 10, 12, all_say("released", {0, 1, 3}));
  const CheckResult refused = plain.check();
  (void)expect_violated(refused, "C1");
  (void)expect_violated(refused, "C9");
}

TEST(CheckerSetTurnTest, SetsThatNeverWaitedInLinesHaveNothingToCheck) {
  RunHistory run;
  acquire(run, "c0", "s", 0, 5, over({"a", "c"}));
  acquire(run, "c1", "p", 10, 15, over({"a"}).in_line(1, 6, 8));
  expect_not_applicable(run.check(), "C17");
}

// `redlock-chaos check` judges a recorded history: the places survive the
// history file, and a line with more than kMaxPlaces of them is refused.
TEST(CheckerSetTurnTest, PlacesSurviveTheHistoryFileWithinTheirBound) {
  RunHistory run = set_waiting_behind({50, 100});
  acquire(run, "c2", "r", 300, 400,
          over({"c", "a"}).waited_for("c", 9, 310).waited_for("a", 2, 320));
  const History written = run.history();
  History read;
  for (const Event& event : written.events) {
    std::string error;
    std::optional<Event> line = parse_event_line(to_json_line(event), error);
    ASSERT_TRUE(line) << error;
    ASSERT_EQ(line->places.size(), event.places.size());
    for (std::size_t i = 0; i < event.places.size(); ++i) {
      EXPECT_EQ(line->places[i].resource, event.places[i].resource);
      EXPECT_EQ(line->places[i].ticket, event.places[i].ticket);
      EXPECT_EQ(line->places[i].drawn_t, event.places[i].drawn_t);
      EXPECT_EQ(line->places[i].recorded_t, event.places[i].recorded_t);
    }
    read.events.push_back(std::move(*line));
  }
  EXPECT_EQ(expect_violated(check_history(read), "C17").message,
            expect_violated(check_history(written), "C17").message);

  Event many;
  many.proc = "c0";
  many.kind = EventKind::acquire;
  many.places.assign(kMaxPlaces, Place{"a", 1, 2, 3});
  std::string error;
  EXPECT_TRUE(parse_event_line(to_json_line(many), error)) << error;
  many.places.push_back(Place{"b", 1, 2, 3});
  EXPECT_FALSE(parse_event_line(to_json_line(many), error));
  EXPECT_TRUE(error.find("at most 64 places") != std::string::npos) << error;
}

}  // namespace
}  // namespace redlock::chaos
