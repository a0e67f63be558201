// The liveness invariant C11: once the faults have healed, the harness's
// uncontended probe acquire succeeds within its budget (TTL plus the retry
// budget).
#include "checker_internal.hpp"

namespace redlock::chaos::checker_internal {
namespace {

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

}  // namespace

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

}  // namespace redlock::chaos::checker_internal
