// The liveness invariant C11: once the faults have healed, the harness's
// uncontended probe acquire succeeds within its budget (TTL plus the retry
// budget), and a client cut off by a fault that asks for progress acquires
// again within that fault's budget once it ends.
#include <set>

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

bool is_client(std::string_view proc) {
  return proc.size() >= 2 && proc.front() == 'c' &&
         proc.find_first_not_of("0123456789", 1) == std::string_view::npos;
}

// The clients a link target ("c0->n*", "c*->n2") names; "c*" is every
// client the history has heard from.
std::set<std::string> clients_of(std::string_view target, const History& history) {
  const std::string_view client = target.substr(0, target.find("->"));
  std::set<std::string> clients;
  if (client != "c*") {
    if (is_client(client)) clients.emplace(client);
    return clients;
  }
  for (const Event& event : history.events) {
    if (is_client(event.proc)) clients.insert(event.proc);
  }
  return clients;
}

// A fault's end that carries a budget: each client it named completes an
// acquire ok within the budget. A budget that runs past the last heal is
// not judged: the workload stopped first, and the probe covers the rest.
void check_progress(const Context& context, const Event& end, std::optional<std::int64_t> healed,
                    InvariantCheck& check) {
  const std::int64_t until = end.t + end.budget_ms * kNsPerMs;
  if (healed && until > *healed) return;
  for (const std::string& client : clients_of(end.target, context.history)) {
    check.applies();
    bool acquired = false;
    int failed = 0;
    for (const Operation& operation : context.operations) {
      const Event* done = operation.completion;
      if (done == nullptr || done->kind != EventKind::acquire || done->proc != client ||
          done->t <= end.t || done->t > until) {
        continue;
      }
      if (done->phase == Phase::ok) acquired = true;
      if (done->phase == Phase::fail) ++failed;
    }
    if (acquired) continue;
    check.violation(until, client,
                    client + " acquired nothing within " + std::to_string(end.budget_ms) +
                        " ms after " + end.fault + " " + end.target + " ended at " +
                        context.at(end.t) +
                        " (failed acquires in that time: " + std::to_string(failed) + ")");
  }
}

}  // namespace

// C11: after the last heal, an uncontended probe acquire succeeds within
// TTL plus the retry budget; after a fault whose end carries a budget, its
// clients acquire within it.
Verdict check_liveness(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kLiveness, findings);
  const std::optional<std::int64_t> healed = last_heal(context.history);
  for (const Event& event : context.history.events) {
    if (event.kind == EventKind::nemesis && event.phase == Phase::ok && event.budget_ms > 0) {
      check_progress(context, event, healed, check);
    }
  }
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
