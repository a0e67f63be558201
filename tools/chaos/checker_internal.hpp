// What the checker's files share (checker.hpp is the interface): the
// history indexed into operations and holdings, the context every
// invariant reads, the findings collector, and one check function per
// invariant. checker_index.cpp builds the indexes; checker_grants.cpp,
// checker_windows.cpp, checker_tokens.cpp, checker_resource.cpp,
// checker_nodes.cpp, checker_liveness.cpp, checker_semaphore.cpp,
// checker_nested.cpp, checker_leadership.cpp, checker_fair.cpp and
// checker_set_turn.cpp hold the checks; checker.cpp runs them in invariant
// order. Not for use outside the checker.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checker.hpp"
#include "history.hpp"

namespace redlock::chaos::checker_internal {

inline constexpr std::int64_t kNsPerMs = 1'000'000;

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
  kSemaphoreCapacity,
  kNestedHolds,
  kLeadership,
  kFairOrder,
  kSetTurn,
};

// One client operation: its invoke and its first completion (ok, fail or
// info), matched by (proc, kind, op, key): the resource operations of one
// critical section share its op and differ in their storage's key. Either
// may be missing: a process killed mid-operation leaves no completion.
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

[[nodiscard]] bool is_resource_operation(EventKind kind) noexcept;

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
    return "value " + value + " (" + ok().proc + (ok().shared ? ", a reader" : "") + ")";
  }
};

using HoldingIndex = std::map<std::string, Holding, std::less<>>;

// One thing a holding holds exclusively, and its token there: the run's
// one resource ("lock:" + the acquire's key, normally "lock:"), each
// resource of a lock over several ("lock:a"), or a semaphore's permit
// ("sem:pool:2"). Two holdings conflict where they claim the same key.
struct Claim {
  std::string key;
  std::optional<std::int64_t> token;
  // A reader's claim (a read-write lock's read side): readers' claims on
  // one key never conflict with each other, only with a writer's.
  bool shared = false;
};

// What the acquire ok of a holding claims (history.hpp: resources, tokens,
// permit); a lock of one resource claims one key.
[[nodiscard]] std::vector<Claim> claims_of(const Event& acquired);
// " on lock:a" for messages; empty for the run's one resource.
[[nodiscard]] std::string claim_text(std::string_view key);

// Acquired holdings in the order of their acquire ok.
[[nodiscard]] std::vector<const Holding*> acquired_by_time(const HoldingIndex& holdings);

// What every invariant reads: the run's parameters and the indexes. Not
// copyable: the holdings point into the operations, which point into the
// history.
struct Context {
  // Both build the indexes (checker_index.cpp); the run event, when not
  // given, is the history's first one.
  explicit Context(const History& checked);
  Context(const History& checked, const Event* run);
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

// One check per invariant, C1-C17, each in the file named after its concern.
// checker_grants.cpp: what an acquire or an extend claimed (C1, C2, C12).
Verdict check_quorum(const Context& context, std::vector<Finding>& findings);
Verdict check_validity(const Context& context, std::vector<Finding>& findings);
Verdict check_extension(const Context& context, std::vector<Finding>& findings);
// checker_windows.cpp: the holders' windows and their use (C3, C4).
Verdict check_exclusion(const Context& context, std::vector<Finding>& findings);
Verdict check_in_window_use(const Context& context, std::vector<Finding>& findings);
// checker_tokens.cpp: the fencing tokens granted (C5, C6).
Verdict check_token_uniqueness(const Context& context, std::vector<Finding>& findings);
Verdict check_token_monotonicity(const Context& context, std::vector<Finding>& findings);
// checker_resource.cpp: what the protected resource accepted and kept (C7, C8).
Verdict check_fenced_resource(const Context& context, std::vector<Finding>& findings);
Verdict check_no_lost_update(const Context& context, std::vector<Finding>& findings);
// checker_nodes.cpp: what the lock nodes released and kept (C9, C10).
Verdict check_safe_release(const Context& context, std::vector<Finding>& findings);
Verdict check_cleanup(const Context& context, std::vector<Finding>& findings);
// checker_liveness.cpp: the probe after the faults heal (C11).
Verdict check_liveness(const Context& context, std::vector<Finding>& findings);
// checker_semaphore.cpp: how many hold one semaphore at once (C13).
Verdict check_semaphore_capacity(const Context& context, std::vector<Finding>& findings);
// checker_nested.cpp: reentrant holds within their lock (C14).
Verdict check_nested_holds(const Context& context, std::vector<Finding>& findings);
// checker_leadership.cpp: one leader at a time, terms rising (C15).
Verdict check_leadership(const Context& context, std::vector<Finding>& findings);
// checker_fair.cpp: waiters in one line served in order (C16).
Verdict check_fair_order(const Context& context, std::vector<Finding>& findings);
// checker_set_turn.cpp: a set waiting in its members' lines gets its turn (C17).
Verdict check_set_turn(const Context& context, std::vector<Finding>& findings);

// A client stopped (SIGSTOP) during [from, to] (to: the end of time when
// it was never resumed). A waiter paused stops renewing its places, so
// the fair invariants (C16, C17) owe it nothing across one
// (checker_fair.cpp).
struct Pause {
  std::string client;
  std::int64_t from = 0;
  std::int64_t to = 0;
};

[[nodiscard]] std::vector<Pause> client_pauses(const History& history);
// Whether `client` was paused at some moment of (from, to).
[[nodiscard]] bool paused_between(const std::vector<Pause>& pauses, const std::string& client,
                                  std::int64_t from, std::int64_t to);

}  // namespace redlock::chaos::checker_internal
