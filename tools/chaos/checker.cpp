#include "checker.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

namespace redlock::chaos {
namespace {

struct InvariantText {
  std::string_view id;
  std::string_view title;
};

constexpr std::array<InvariantText, kInvariantCount> kInvariants{{
    {"C1", "Quorum: every acquire had floor(N/2)+1 nodes grant that attempt"},
    {"C2", "Validity: validity = TTL - elapsed - drift > 0, quorum formed before start + validity"},
    {"C3", "Exclusion: the claimed windows of different holders do not overlap"},
    {"C4", "In-window use: unfenced resource operations fall inside their holder's window"},
    {"C5", "Token uniqueness: no two acquisitions share a fencing token"},
    {"C6", "Token monotonicity: A ok before B invoked implies token B > token A"},
    {"C7",
     "Fenced resource: nothing accepted below the high-water mark; log tokens never decrease"},
    {"C8", "No lost update: the final resource state holds every accepted update"},
    {"C9", "Safe release: a release never deletes another holder's value"},
    {"C10", "Cleanup: no node keeps a released value, none keeps a value longer than the TTL"},
    {"C11", "Liveness: after faults heal, an uncontended acquire succeeds within its budget"},
    {"C12", "Extension: on a majority, within validity, within the renewal cap"},
}};

bool valid_index(int index) noexcept { return index >= 0 && index < kInvariantCount; }

constexpr std::int64_t kNsPerMs = 1'000'000;

enum Invariant : int {
  kQuorum,
  kValidity,
  kExclusion,
  kInWindowUse,
  kTokenUniqueness,
  kTokenMonotonicity,
  kFencedResource,
  kNoLostUpdate,
  kSafeRelease,
  kCleanup,
  kLiveness,
  kExtension,
};

// One client operation: its invoke and its first completion (ok, fail or
// info), matched by (proc, kind, op). Either may be missing: a process
// killed mid-operation leaves no completion.
struct Operation {
  const Event* invoke = nullptr;
  const Event* completion = nullptr;

  [[nodiscard]] const Event& first() const { return invoke != nullptr ? *invoke : *completion; }
  [[nodiscard]] bool ok() const { return completion != nullptr && completion->phase == Phase::ok; }
  [[nodiscard]] bool failed() const {
    return completion != nullptr && completion->phase == Phase::fail;
  }
  [[nodiscard]] const std::string& value() const {
    return completion != nullptr && !completion->value.empty() ? completion->value : first().value;
  }
  [[nodiscard]] std::optional<std::int64_t> token() const {
    if (completion != nullptr && completion->token) return completion->token;
    return invoke != nullptr ? invoke->token : std::nullopt;
  }
  [[nodiscard]] const std::string& key() const {
    return completion != nullptr && !completion->key.empty() ? completion->key : first().key;
  }
  [[nodiscard]] std::string describe() const {
    const Event& e = first();
    return std::string(to_string(e.kind)) + " op " + std::to_string(e.op) + " of " + e.proc;
  }
};

bool is_client_operation(EventKind kind) noexcept {
  switch (kind) {
    case EventKind::acquire:
    case EventKind::extend:
    case EventKind::release:
    case EventKind::read:
    case EventKind::write:
    case EventKind::append:
      return true;
    default:
      return false;
  }
}

bool is_resource_operation(EventKind kind) noexcept {
  return kind == EventKind::read || kind == EventKind::write || kind == EventKind::append;
}

// Operations in the order of their first event.
std::vector<Operation> index_operations(const History& history) {
  std::vector<Operation> operations;
  std::map<std::tuple<std::string_view, EventKind, std::int64_t>, std::size_t> position;
  for (const Event& event : history.events) {
    if (!is_client_operation(event.kind)) continue;
    auto [it, inserted] =
        position.try_emplace({event.proc, event.kind, event.op}, operations.size());
    if (inserted) operations.emplace_back();
    Operation& operation = operations[it->second];
    if (event.phase == Phase::invoke) {
      if (operation.invoke == nullptr) operation.invoke = &event;
    } else if (operation.completion == nullptr) {
      operation.completion = &event;
    }
  }
  return operations;
}

// Everything the history says about one lock value: the acquisition that
// produced it, its extensions and its release.
struct Holding {
  std::string value;
  const Operation* acquire = nullptr;  // the one that reported ok, if any
  std::vector<const Operation*> acquire_attempts;
  std::vector<const Operation*> extends;
  std::vector<const Operation*> releases;

  [[nodiscard]] bool acquired() const { return acquire != nullptr; }
  [[nodiscard]] const Event& ok() const { return *acquire->completion; }

  // The deadline the acquisition claimed (deadline_t, else start + validity).
  [[nodiscard]] std::int64_t acquired_deadline() const {
    const Event& e = ok();
    if (e.deadline_t != 0) return e.deadline_t;
    if (e.start_t != 0) return e.start_t + e.validity_ms * kNsPerMs;
    return e.t;
  }

  // The deadline as raised by every extension that succeeded before `t`.
  [[nodiscard]] std::int64_t deadline_before(std::int64_t t) const {
    std::int64_t deadline = acquired_deadline();
    for (const Operation* extend : extends) {
      if (extend->ok() && extend->completion->t < t) {
        deadline = std::max(deadline, extend->completion->deadline_t);
      }
    }
    return deadline;
  }

  [[nodiscard]] std::optional<std::int64_t> release_invoked() const {
    std::optional<std::int64_t> earliest;
    for (const Operation* release : releases) {
      const std::int64_t t = release->first().t;
      if (!earliest || t < *earliest) earliest = t;
    }
    return earliest;
  }

  // [quorum time, min(deadline incl. extensions, release invoke)].
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> window() const {
    std::int64_t end = deadline_before(std::numeric_limits<std::int64_t>::max());
    if (const auto released = release_invoked()) end = std::min(end, *released);
    return {ok().t, end};
  }

  [[nodiscard]] std::string describe() const {
    if (!acquired()) return "value " + value;
    return "value " + value + " (" + ok().proc + ")";
  }
};

using HoldingIndex = std::map<std::string, Holding, std::less<>>;

// The index the invariants share: every lock value with its acquire,
// extend and release operations.
HoldingIndex index_holdings(const std::vector<Operation>& operations) {
  HoldingIndex holdings;
  for (const Operation& operation : operations) {
    const std::string& value = operation.value();
    const EventKind kind = operation.first().kind;
    if (value.empty() || is_resource_operation(kind)) continue;
    Holding& holding = holdings[value];
    holding.value = value;
    if (kind == EventKind::acquire) {
      holding.acquire_attempts.push_back(&operation);
      if (operation.ok() && holding.acquire == nullptr) holding.acquire = &operation;
    } else if (kind == EventKind::extend) {
      holding.extends.push_back(&operation);
    } else if (kind == EventKind::release) {
      holding.releases.push_back(&operation);
    }
  }
  return holdings;
}

std::vector<const Holding*> acquired_by_time(const HoldingIndex& holdings) {
  std::vector<const Holding*> acquired;
  for (const auto& [value, holding] : holdings) {
    if (holding.acquired()) acquired.push_back(&holding);
  }
  std::stable_sort(acquired.begin(), acquired.end(),
                   [](const Holding* a, const Holding* b) { return a->ok().t < b->ok().t; });
  return acquired;
}

int count_nodes_with(const std::vector<NodeReply>& nodes, std::string_view status) {
  std::set<int> distinct;
  for (const NodeReply& reply : nodes) {
    if (reply.status == status) distinct.insert(reply.node);
  }
  return static_cast<int>(distinct.size());
}

const Event* find_run(const History& history) {
  for (const Event& event : history.events) {
    if (event.kind == EventKind::run) return &event;
  }
  return nullptr;
}

int node_count_of(const History& history, const Event* run) {
  if (run != nullptr && run->count > 0) return static_cast<int>(run->count);
  // Without a run event, the highest node index any reply names.
  int count = 0;
  for (const Event& event : history.events) {
    for (const NodeReply& reply : event.nodes) count = std::max(count, reply.node + 1);
  }
  return count;
}

std::int64_t max_ttl_of(const History& history, const Event* run) {
  std::int64_t max_ttl = run != nullptr ? run->ttl_ms : 0;
  for (const Event& event : history.events) {
    if (event.kind == EventKind::acquire || event.kind == EventKind::extend) {
      max_ttl = std::max(max_ttl, event.ttl_ms);
    }
  }
  return max_ttl;
}

std::optional<std::int64_t> origin_of(const Event* run) {
  if (run == nullptr) return std::nullopt;
  return run->t;
}

// What every invariant reads: the run's parameters and the indexes. Not
// copyable: the holdings point into the operations, which point into the
// history.
struct Context {
  explicit Context(const History& checked) : Context(checked, find_run(checked)) {}
  Context(const History& checked, const Event* run)
      : history(checked),
        origin(origin_of(run)),
        node_count(node_count_of(checked, run)),
        max_ttl_ms(max_ttl_of(checked, run)),
        operations(index_operations(checked)),
        holdings(index_holdings(operations)) {}
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const History& history;
  const std::optional<std::int64_t> origin;  // the run event's t
  const int node_count;
  const std::int64_t max_ttl_ms;
  const std::vector<Operation> operations;
  const HoldingIndex holdings;

  [[nodiscard]] int quorum() const { return node_count / 2 + 1; }

  [[nodiscard]] const Holding* find(std::string_view value) const {
    auto it = holdings.find(value);
    return it != holdings.end() ? &it->second : nullptr;
  }

  [[nodiscard]] static std::string ms(std::int64_t ns) {
    std::array<char, 32> buffer{};
    auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(),
                                   static_cast<double>(ns) / kNsPerMs, std::chars_format::fixed, 3);
    return std::string(buffer.data(), end) + " ms";
  }

  // A reference time for messages: ms since the run event when there is one.
  [[nodiscard]] std::string at(std::int64_t t) const { return ms(t - origin.value_or(0)); }
};

// The findings of one invariant and whether it had anything to check.
class InvariantCheck {
 public:
  InvariantCheck(int invariant, std::vector<Finding>& findings)
      : invariant_(invariant), findings_(findings), first_(findings.size()) {}

  void applies() noexcept { applicable_ = true; }

  void violation(const Event& where, std::string message) {
    violation(where.t, where.proc, std::move(message));
  }

  void violation(std::int64_t t, std::string proc, std::string message) {
    applicable_ = true;
    findings_.push_back(Finding{invariant_, t, std::move(proc), std::move(message)});
  }

  [[nodiscard]] Verdict verdict() const noexcept {
    if (findings_.size() > first_) return Verdict::violated;
    return applicable_ ? Verdict::holds : Verdict::not_applicable;
  }

 private:
  int invariant_;
  std::vector<Finding>& findings_;
  std::size_t first_;
  bool applicable_ = false;
};

// C1: a success had a majority of distinct nodes grant that attempt.
Verdict check_quorum(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kQuorum, findings);
  for (const Holding* holding : acquired_by_time(context.holdings)) {
    check.applies();
    const Event& ok = holding->ok();
    const int granted = count_nodes_with(ok.nodes, "granted");
    if (granted < context.quorum()) {
      check.violation(ok, "acquire of " + ok.value + " succeeded with " + std::to_string(granted) +
                              " of " + std::to_string(context.node_count) +
                              " nodes granted (quorum " + std::to_string(context.quorum()) + ")");
    }
  }
  return check.verdict();
}

void check_validity_of(const Context& context, const Event& ok, InvariantCheck& check) {
  const std::string subject = "acquire of " + ok.value;
  const std::int64_t budget_ms = ok.ttl_ms - ok.drift_ms;
  if (ok.validity_ms <= 0) {
    check.violation(
        ok, subject + " reported validity " + std::to_string(ok.validity_ms) + " ms, not positive");
  }
  if (ok.validity_ms > budget_ms) {
    check.violation(ok, subject + " reported validity " + std::to_string(ok.validity_ms) +
                            " ms > ttl " + std::to_string(ok.ttl_ms) + " - drift " +
                            std::to_string(ok.drift_ms));
  }
  // Without the attempt's start there is nothing to measure elapsed from.
  if (ok.start_t == 0) return;
  const std::int64_t expiry = ok.start_t + budget_ms * kNsPerMs;
  // validity = ttl - elapsed - drift puts the claimed deadline at the
  // attempt's start + ttl - drift, whenever the quorum formed. (The ok
  // event's own time is only an upper bound of that moment: a callback run
  // late must not count as elapsed time the library ignored.) 1 ms
  // tolerance: the library rounds validity to whole milliseconds.
  if (ok.deadline_t != 0 && ok.deadline_t > expiry + kNsPerMs) {
    check.violation(ok, subject + " reported validity " + std::to_string(ok.validity_ms) +
                            " ms, claiming the lock until " + context.at(ok.deadline_t) +
                            ", past start " + context.at(ok.start_t) + " + (ttl - drift) " +
                            std::to_string(budget_ms) + " ms = " + context.at(expiry) +
                            ": elapsed time was not subtracted");
  }
  if (ok.t >= expiry) {
    check.violation(ok, subject + " formed its quorum at " + context.at(ok.t) +
                            ", not before start " + context.at(ok.start_t) + " + (ttl - drift) " +
                            std::to_string(budget_ms) + " ms = " + context.at(expiry));
  }
}

// C2: validity = TTL - elapsed - drift > 0, and the quorum formed in time.
Verdict check_validity(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kValidity, findings);
  for (const Holding* holding : acquired_by_time(context.holdings)) {
    check.applies();
    check_validity_of(context, holding->ok(), check);
  }
  return check.verdict();
}

std::string window_text(const Context& context, std::pair<std::int64_t, std::int64_t> window) {
  return "[" + context.at(window.first) + ", " + context.at(window.second) + "]";
}

// C3: the claimed windows of different holdings of one resource do not
// overlap. A sweep in start order compares each window with the one that
// reaches furthest among those before it, which finds every overlapping
// window.
Verdict check_exclusion(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kExclusion, findings);
  std::map<std::string_view, const Holding*> furthest_by_resource;
  for (const Holding* holding : acquired_by_time(context.holdings)) {
    check.applies();
    const auto window = holding->window();
    if (window.second <= window.first) continue;  // an empty window overlaps nothing
    const Holding*& furthest = furthest_by_resource[holding->ok().key];
    if (furthest != nullptr && window.first < furthest->window().second) {
      const auto earlier = furthest->window();
      check.violation(holding->ok(),
                      "window " + window_text(context, window) + " of " + holding->describe() +
                          " overlaps window " + window_text(context, earlier) + " of " +
                          furthest->describe() + " by " +
                          Context::ms(std::min(window.second, earlier.second) - window.first));
    }
    if (furthest == nullptr || window.second > furthest->window().second) furthest = holding;
  }
  return check.verdict();
}

bool inside(std::int64_t t, std::pair<std::int64_t, std::int64_t> window) {
  return t >= window.first && t <= window.second;
}

void check_in_window(const Context& context, const Operation& operation, InvariantCheck& check) {
  const Holding* holding = context.find(operation.value());
  if (holding == nullptr || !holding->acquired()) {
    check.violation(operation.first(), operation.describe() + " names value \"" +
                                           operation.value() + "\", which no acquire granted");
    return;
  }
  const auto window = holding->window();
  std::vector<std::pair<const Event*, std::string_view>> ends{{operation.invoke, "invoked"},
                                                              {operation.completion, "completed"}};
  for (const auto& [event, what] : ends) {
    if (event == nullptr || inside(event->t, window)) continue;
    check.violation(*event, operation.describe() + " " + std::string(what) + " at " +
                                context.at(event->t) + ", outside the window " +
                                window_text(context, window) + " of " + holding->describe());
  }
}

// C4: unfenced resource operations happen inside their holding's window.
// A failed operation did nothing to the resource and is not checked.
Verdict check_in_window_use(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kInWindowUse, findings);
  for (const Operation& operation : context.operations) {
    if (!is_resource_operation(operation.first().kind) || operation.token()) continue;
    check.applies();
    if (!operation.failed()) check_in_window(context, operation, check);
  }
  return check.verdict();
}

// C5: no two successful acquisitions share a token.
Verdict check_token_uniqueness(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kTokenUniqueness, findings);
  std::map<std::int64_t, const Holding*> first_with_token;
  for (const Holding* holding : acquired_by_time(context.holdings)) {
    const Event& ok = holding->ok();
    if (!ok.token) continue;
    check.applies();
    auto [it, inserted] = first_with_token.try_emplace(*ok.token, holding);
    if (inserted) continue;
    const Event& earlier = it->second->ok();
    check.violation(ok, "token " + std::to_string(*ok.token) + " granted to " +
                            holding->describe() + " at " + context.at(ok.t) + " and to " +
                            it->second->describe() + " at " + context.at(earlier.t));
  }
  return check.verdict();
}

// When the acquisition that produced a holding was invoked (its attempt's
// start when the invoke is missing).
std::optional<std::int64_t> acquire_invoked(const Holding& holding) {
  if (holding.acquire->invoke != nullptr) return holding.acquire->invoke->t;
  if (holding.ok().start_t != 0) return holding.ok().start_t;
  return std::nullopt;
}

// C6: A acquired before B was invoked implies token B > token A.
Verdict check_token_monotonicity(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kTokenMonotonicity, findings);
  std::vector<const Holding*> fenced;
  for (const Holding* holding : acquired_by_time(context.holdings)) {
    if (holding->ok().token) fenced.push_back(holding);
  }
  // highest[i]: the holding with the highest token among fenced[0..i].
  std::vector<const Holding*> highest;
  for (const Holding* holding : fenced) {
    const bool higher = highest.empty() || *holding->ok().token > *highest.back()->ok().token;
    highest.push_back(higher ? holding : highest.back());
  }
  for (const Holding* later : fenced) {
    check.applies();
    const std::optional<std::int64_t> invoked = acquire_invoked(*later);
    if (!invoked) continue;
    // Holdings acquired strictly before `later` was invoked.
    auto end = std::lower_bound(fenced.begin(), fenced.end(), *invoked,
                                [](const Holding* h, std::int64_t t) { return h->ok().t < t; });
    if (end == fenced.begin()) continue;
    const Holding* earlier = highest[static_cast<std::size_t>(end - fenced.begin() - 1)];
    const std::int64_t token = *later->ok().token;
    const std::int64_t earlier_token = *earlier->ok().token;
    if (token > earlier_token) continue;
    check.violation(later->ok(), "token " + std::to_string(token) + " of " + later->describe() +
                                     " (invoked at " + context.at(*invoked) +
                                     ") is not above token " + std::to_string(earlier_token) +
                                     " of " + earlier->describe() + " acquired at " +
                                     context.at(earlier->ok().t));
  }
  return check.verdict();
}

// Accepted fenced resource operations of one resource key, in completion order.
std::map<std::string, std::vector<const Operation*>> accepted_fenced_by_key(
    const Context& context) {
  std::map<std::string, std::vector<const Operation*>> by_key;
  for (const Operation& operation : context.operations) {
    if (is_resource_operation(operation.first().kind) && operation.token() && operation.ok()) {
      by_key[operation.key()].push_back(&operation);
    }
  }
  for (auto& [key, accepted] : by_key) {
    std::stable_sort(accepted.begin(), accepted.end(), [](const Operation* a, const Operation* b) {
      return a->completion->t < b->completion->t;
    });
  }
  return by_key;
}

void check_high_water(const Context& context, const std::vector<const Operation*>& accepted,
                      InvariantCheck& check) {
  // highest[i]: the operation with the highest token among accepted[0..i].
  std::vector<const Operation*> highest;
  for (const Operation* operation : accepted) {
    const bool higher = highest.empty() || *operation->token() > *highest.back()->token();
    highest.push_back(higher ? operation : highest.back());
  }
  for (const Operation* operation : accepted) {
    const std::int64_t invoked = operation->first().t;
    auto end =
        std::lower_bound(accepted.begin(), accepted.end(), invoked,
                         [](const Operation* o, std::int64_t t) { return o->completion->t < t; });
    if (end == accepted.begin()) continue;
    const Operation* mark = highest[static_cast<std::size_t>(end - accepted.begin() - 1)];
    if (*operation->token() >= *mark->token()) continue;
    check.violation(*operation->completion,
                    operation->describe() + " (invoked at " + context.at(invoked) +
                        ") was accepted with token " + std::to_string(*operation->token()) +
                        " below the high-water mark " + std::to_string(*mark->token()) +
                        " set by " + mark->describe() + " at " + context.at(mark->completion->t));
  }
}

bool is_resource_snapshot(const Event& event) {
  return event.kind == EventKind::snapshot && event.target == "resource";
}

// The token of a resource log entry "proc:op:token:value".
std::optional<std::int64_t> log_entry_token(std::string_view entry) {
  const std::size_t first = entry.find(':');
  if (first == std::string_view::npos) return std::nullopt;
  const std::size_t second = entry.find(':', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  const std::size_t third = entry.find(':', second + 1);
  if (third == std::string_view::npos) return std::nullopt;
  const std::string_view text = entry.substr(second + 1, third - second - 1);
  std::int64_t token = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), token);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return token;
}

void check_log_order(const Event& snapshot, InvariantCheck& check) {
  std::optional<std::int64_t> highest;
  std::size_t highest_at = 0;
  for (std::size_t i = 0; i < snapshot.entries.size(); ++i) {
    const std::optional<std::int64_t> token = log_entry_token(snapshot.entries[i]);
    if (!token) continue;
    if (highest && *token < *highest) {
      check.violation(snapshot, "resource log entry #" + std::to_string(i) + " \"" +
                                    snapshot.entries[i] + "\" has token " + std::to_string(*token) +
                                    " after token " + std::to_string(*highest) + " (entry #" +
                                    std::to_string(highest_at) + ")");
    }
    if (!highest || *token > *highest) {
      highest = token;
      highest_at = i;
    }
  }
}

// C7: a fenced resource accepts nothing below its high-water mark, and its
// log's tokens never decrease.
Verdict check_fenced_resource(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kFencedResource, findings);
  const bool fenced = std::any_of(
      context.operations.begin(), context.operations.end(), [](const Operation& operation) {
        return is_resource_operation(operation.first().kind) && operation.token().has_value();
      });
  if (!fenced) return check.verdict();
  check.applies();
  for (const auto& [key, accepted] : accepted_fenced_by_key(context)) {
    check_high_water(context, accepted, check);
  }
  for (const Event& event : context.history.events) {
    if (is_resource_snapshot(event)) check_log_order(event, check);
  }
  return check.verdict();
}

void check_counter(const Context& context, const Event& snapshot, InvariantCheck& check) {
  std::int64_t accepted = 0;
  std::int64_t indeterminate = 0;  // info, or no completion: may or may not have landed
  for (const Operation& operation : context.operations) {
    if (operation.first().kind != EventKind::write) continue;
    if (!snapshot.key.empty() && operation.key() != snapshot.key) continue;
    if (operation.ok()) {
      ++accepted;
    } else if (!operation.failed()) {
      ++indeterminate;
    }
  }
  if (snapshot.count >= accepted && snapshot.count <= accepted + indeterminate) return;
  check.violation(snapshot, "resource counter is " + std::to_string(snapshot.count) + " but " +
                                std::to_string(accepted) + " writes were accepted (" +
                                std::to_string(indeterminate) + " indeterminate)");
}

void check_appends(const Context& context, const Event& snapshot, InvariantCheck& check) {
  const std::set<std::string_view> log(snapshot.entries.begin(), snapshot.entries.end());
  for (const Operation& operation : context.operations) {
    if (operation.first().kind != EventKind::append || !operation.ok()) continue;
    if (!snapshot.key.empty() && operation.key() != snapshot.key) continue;
    const std::string& entry =
        operation.completion->entry.empty() ? operation.first().entry : operation.completion->entry;
    if (log.count(entry) != 0) continue;
    check.violation(snapshot, "accepted " + operation.describe() + " (at " +
                                  context.at(operation.completion->t) + ") entry \"" + entry +
                                  "\" is missing from the resource log");
  }
}

// C8: the final resource state holds every accepted update.
Verdict check_no_lost_update(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kNoLostUpdate, findings);
  for (const Event& event : context.history.events) {
    if (!is_resource_snapshot(event)) continue;
    check.applies();
    check_counter(context, event, check);
    check_appends(context, event, check);
  }
  return check.verdict();
}

// Statuses after which a node may hold the acquisition's value: a grant,
// or no answer (the SET may have landed after the library stopped waiting).
bool may_hold_after_acquire(std::string_view status) {
  return status == "granted" || status == "replicas_short" || status == "timeout" ||
         status == "pending" || status == "unreachable";
}

std::set<int> nodes_that_may_hold(const Holding& holding) {
  std::set<int> nodes;
  for (const Operation* attempt : holding.acquire_attempts) {
    if (attempt->completion == nullptr) continue;
    for (const NodeReply& reply : attempt->completion->nodes) {
      if (may_hold_after_acquire(reply.status)) nodes.insert(reply.node);
    }
  }
  for (const Operation* extend : holding.extends) {
    if (extend->completion == nullptr) continue;
    for (const NodeReply& reply : extend->completion->nodes) {
      if (reply.status == "extended") nodes.insert(reply.node);
    }
  }
  return nodes;
}

// C9: a release reports "released" only where its own value could be.
Verdict check_safe_release(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kSafeRelease, findings);
  for (const auto& [value, holding] : context.holdings) {
    for (const Operation* release : holding.releases) {
      if (release->completion == nullptr || release->completion->nodes.empty()) continue;
      check.applies();
      const std::set<int> may_hold = nodes_that_may_hold(holding);
      for (const NodeReply& reply : release->completion->nodes) {
        if (reply.status != "released" || may_hold.count(reply.node) != 0) continue;
        check.violation(*release->completion,
                        "release of " + value + " at " + context.at(release->completion->t) +
                            " reported \"released\" on node " + std::to_string(reply.node) +
                            ", where its holding was never granted or extended");
      }
    }
  }
  return check.verdict();
}

// The node index of a snapshot target "n<i>".
std::optional<int> snapshot_node(const Event& event) {
  if (event.kind != EventKind::snapshot || event.target.size() < 2 || event.target[0] != 'n') {
    return std::nullopt;
  }
  int node = 0;
  const char* first = event.target.data() + 1;
  const char* last = event.target.data() + event.target.size();
  auto [ptr, ec] = std::from_chars(first, last, node);
  if (ec != std::errc() || ptr != last) return std::nullopt;
  return node;
}

void check_expiry_left(const Context& context, const Event& snapshot, InvariantCheck& check) {
  const std::string subject = "node " + snapshot.target + " keeps " + snapshot.value;
  if (snapshot.pttl_ms == -1) {
    check.violation(snapshot, subject + " without an expiry");
  } else if (snapshot.pttl_ms > context.max_ttl_ms) {
    check.violation(snapshot, subject + " with PTTL " + std::to_string(snapshot.pttl_ms) +
                                  " ms, above the largest TTL " +
                                  std::to_string(context.max_ttl_ms) + " ms");
  }
}

void check_left_after_release(const Context& context, const Event& snapshot, int node,
                              InvariantCheck& check) {
  const Holding* holding = context.find(snapshot.value);
  if (holding == nullptr) return;
  for (const Operation* release : holding->releases) {
    if (release->completion == nullptr) continue;
    for (const NodeReply& reply : release->completion->nodes) {
      if (reply.node != node || (reply.status != "released" && reply.status != "not_held")) {
        continue;
      }
      check.violation(snapshot, "node " + snapshot.target + " still holds " + snapshot.value +
                                    " after its release answered \"" + reply.status +
                                    "\" there at " + context.at(release->completion->t));
    }
  }
}

// C10: after the run, no node keeps a value longer than the TTL, and none
// keeps a value its release already cleared there.
Verdict check_cleanup(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kCleanup, findings);
  for (const Event& event : context.history.events) {
    const std::optional<int> node = snapshot_node(event);
    if (!node) continue;
    check.applies();
    if (event.value.empty()) continue;  // the node holds no lock key
    check_expiry_left(context, event, check);
    check_left_after_release(context, event, *node, check);
  }
  return check.verdict();
}

std::optional<std::int64_t> last_heal(const History& history) {
  std::optional<std::int64_t> last;
  for (const Event& event : history.events) {
    if (event.kind == EventKind::heal) last = event.t;
  }
  return last;
}

void check_probe(const Context& context, const Operation& probe, InvariantCheck& check) {
  const Event& invoke = *probe.invoke;
  const std::string subject = "probe " + probe.describe() + " invoked at " + context.at(invoke.t);
  if (probe.completion == nullptr) {
    check.violation(invoke, subject + " never completed");
    return;
  }
  const Event& done = *probe.completion;
  if (done.phase != Phase::ok) {
    check.violation(done, subject + " ended " + std::string(to_string(done.phase)) + " at " +
                              context.at(done.t) + (done.error.empty() ? "" : ": " + done.error));
    return;
  }
  const std::int64_t took = done.t - invoke.t;
  if (invoke.budget_ms > 0 && took > invoke.budget_ms * kNsPerMs) {
    check.violation(done, subject + " took " + Context::ms(took) + ", over its budget of " +
                              std::to_string(invoke.budget_ms) + " ms");
  }
}

// C11: after the last heal, an uncontended probe acquire succeeds within
// TTL plus the retry budget.
Verdict check_liveness(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kLiveness, findings);
  const std::optional<std::int64_t> healed = last_heal(context.history);
  for (const Operation& operation : context.operations) {
    const Event* invoke = operation.invoke;
    if (invoke == nullptr || invoke->kind != EventKind::acquire || invoke->proc != "probe") {
      continue;
    }
    if (healed && invoke->t < *healed) continue;
    check.applies();
    check_probe(context, operation, check);
  }
  return check.verdict();
}

void check_extensions_of(const Context& context, const Holding& holding, InvariantCheck& check) {
  std::int64_t successes = 0;
  for (const Operation* extend : holding.extends) {
    if (!extend->ok()) continue;
    const Event& ok = *extend->completion;
    if (!holding.acquired()) {
      check.violation(ok, "extend of " + holding.value + " succeeded, but no acquire of it did");
      continue;
    }
    ++successes;
    const int extended = count_nodes_with(ok.nodes, "extended");
    if (extended < context.quorum()) {
      check.violation(ok, "extend of " + holding.describe() + " succeeded with " +
                              std::to_string(extended) + " of " +
                              std::to_string(context.node_count) + " nodes extended (quorum " +
                              std::to_string(context.quorum()) + ")");
    }
    const std::int64_t invoked = extend->first().t;
    const std::int64_t deadline = holding.deadline_before(invoked);
    if (ok.t > deadline) {
      check.violation(ok, "extend of " + holding.describe() + " succeeded at " + context.at(ok.t) +
                              ", after the deadline " + context.at(deadline) +
                              " it had when invoked at " + context.at(invoked));
    }
    const std::int64_t cap = holding.ok().max_renewals;
    if (cap > 0 && successes > cap) {
      check.violation(ok, "extension #" + std::to_string(successes) + " of " + holding.describe() +
                              " exceeds the cap of " + std::to_string(cap) + " renewals");
    }
  }
}

// C12: an extension succeeds on a majority, within validity, within its cap.
Verdict check_extension(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kExtension, findings);
  for (const auto& [value, holding] : context.holdings) {
    if (holding.extends.empty()) continue;
    check.applies();
    check_extensions_of(context, holding, check);
  }
  return check.verdict();
}

}  // namespace

std::string_view invariant_id(int index) noexcept {
  return valid_index(index) ? kInvariants[static_cast<std::size_t>(index)].id : "C?";
}

std::string_view invariant_title(int index) noexcept {
  return valid_index(index) ? kInvariants[static_cast<std::size_t>(index)].title : "";
}

int invariant_index(std::string_view id) noexcept {
  for (int index = 0; index < kInvariantCount; ++index) {
    if (kInvariants[static_cast<std::size_t>(index)].id == id) return index;
  }
  return -1;
}

std::string_view to_string(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::holds:
      return "holds";
    case Verdict::violated:
      return "violated";
    case Verdict::not_applicable:
      return "not_applicable";
  }
  return "unknown";
}

CheckResult check_history(const History& history) {
  using Check = Verdict (*)(const Context&, std::vector<Finding>&);
  static constexpr std::array<Check, kInvariantCount> kChecks{
      check_quorum,          check_validity,         check_exclusion,
      check_in_window_use,   check_token_uniqueness, check_token_monotonicity,
      check_fenced_resource, check_no_lost_update,   check_safe_release,
      check_cleanup,         check_liveness,         check_extension,
  };
  const Context context(history);
  CheckResult result;
  for (std::size_t i = 0; i < kChecks.size(); ++i) {
    result.verdicts[i] = kChecks[i](context, result.findings);
  }
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.t < b.t; });
  return result;
}

}  // namespace redlock::chaos
