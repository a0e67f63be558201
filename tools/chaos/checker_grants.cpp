// The invariants on what the library claimed when it granted or extended
// a lock: C1 (a quorum of nodes granted the attempt), C2 (the validity it
// reported, after elapsed time and drift) and C12 (an extension on a
// majority, before the deadline, within the renewal cap).
#include <set>

#include "checker_internal.hpp"

namespace redlock::chaos::checker_internal {
namespace {

int count_nodes_with(const std::vector<NodeReply>& nodes, std::string_view status) {
  std::set<int> distinct;
  for (const NodeReply& reply : nodes) {
    if (reply.status == status) distinct.insert(reply.node);
  }
  return static_cast<int>(distinct.size());
}

// The distinct nodes that granted an acquisition (a set's adoption round
// answers "extended": acquire_reply_grants).
int count_granted(const Event& ok) {
  std::set<int> distinct;
  for (const NodeReply& reply : ok.nodes) {
    if (acquire_reply_grants(ok, reply)) distinct.insert(reply.node);
  }
  return static_cast<int>(distinct.size());
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

// An extension the history saw as a round: on a majority, before the deadline.
void check_renewal_round(const Context& context, const Holding& holding, const Operation& extend,
                         InvariantCheck& check) {
  const Event& ok = *extend.completion;
  const int extended = count_nodes_with(ok.nodes, "extended");
  if (extended < context.quorum()) {
    check.violation(ok, "extend of " + holding.describe() + " succeeded with " +
                            std::to_string(extended) + " of " + std::to_string(context.node_count) +
                            " nodes extended (quorum " + std::to_string(context.quorum()) + ")");
  }
  const std::int64_t invoked = extend.first().t;
  const std::int64_t deadline = holding.deadline_before(invoked);
  if (ok.t > deadline) {
    check.violation(ok, "extend of " + holding.describe() + " succeeded at " + context.at(ok.t) +
                            ", after the deadline " + context.at(deadline) +
                            " it had when invoked at " + context.at(invoked));
  }
}

// Renewals seen on a guard: only the deadline of the last is known, which
// is that renewal's start plus at most the TTL, and each renewal started
// before the deadline the one before it set. `renewed` renewals since the
// deadline seen before: at most that many TTLs past it.
void check_observed_renewal(const Context& context, const Holding& holding, const Event& ok,
                            std::int64_t renewed, InvariantCheck& check) {
  const std::int64_t ttl_ms = ok.ttl_ms != 0 ? ok.ttl_ms : holding.ok().ttl_ms;
  const std::int64_t previous = holding.deadline_before(ok.t);
  renewed = std::max<std::int64_t>(renewed, 1);
  // Both times are within [0, 2^61] ns and the TTL within 2^40 ms
  // (history.hpp), so neither the excess nor one TTL in ns overflows;
  // their product with the renewal count might, hence the division.
  const std::int64_t excess_ns = ok.deadline_t - previous;
  if (excess_ns <= 0) return;
  const std::int64_t ttl_ns = std::max<std::int64_t>(ttl_ms, 0) * kNsPerMs;
  const bool beyond = ttl_ns == 0 || excess_ns / ttl_ns > renewed ||
                      (excess_ns / ttl_ns == renewed && excess_ns % ttl_ns != 0);
  if (!beyond) return;
  check.violation(ok, "renewal #" + std::to_string(ok.renewals) + " of " + holding.describe() +
                          " claims the lock until " + context.at(ok.deadline_t) + ", more than " +
                          std::to_string(renewed) + " x ttl " + std::to_string(ttl_ms) +
                          " ms past the deadline " + context.at(previous) +
                          " seen before: a renewal began after the lock ran out");
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
    if (ok.renewals > 0) {
      // Seen on a guard: how many renewals so far, and the deadline.
      const std::int64_t renewed = ok.renewals - successes;
      successes = std::max(successes + 1, ok.renewals);
      check_observed_renewal(context, holding, ok, renewed, check);
    } else {
      ++successes;
      check_renewal_round(context, holding, *extend, check);
    }
    const std::int64_t cap = holding.ok().max_renewals;
    if (cap > 0 && successes > cap) {
      check.violation(ok, "extension #" + std::to_string(successes) + " of " + holding.describe() +
                              " exceeds the cap of " + std::to_string(cap) + " renewals");
    }
  }
}

}  // namespace

// C1: a success had a majority of distinct nodes grant that attempt.
Verdict check_quorum(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kQuorum, findings);
  for (const Holding* holding : acquired_by_time(context.holdings)) {
    check.applies();
    const Event& ok = holding->ok();
    const int granted = count_granted(ok);
    if (granted < context.quorum()) {
      check.violation(ok, "acquire of " + ok.value + " succeeded with " + std::to_string(granted) +
                              " of " + std::to_string(context.node_count) +
                              " nodes granted (quorum " + std::to_string(context.quorum()) + ")");
    }
  }
  return check.verdict();
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

}  // namespace redlock::chaos::checker_internal
