// The invariants on the holders' validity windows: C3 (the windows of
// different holders of one resource or permit never overlap) and C4 (unfenced
// resource operations fall inside their holder's window).
#include "checker_internal.hpp"

namespace redlock::chaos::checker_internal {
namespace {

std::string window_text(const Context& context, std::pair<std::int64_t, std::int64_t> window) {
  return "[" + context.at(window.first) + ", " + context.at(window.second) + "]";
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

}  // namespace

// C3: the claimed windows of different holdings that claim one key (the
// run's resource, a resource of a lock over several, a semaphore's permit)
// do not overlap — except two readers' (shared claims): a writer's window
// overlaps no other window, a reader's no writer's. A sweep in start order
// compares each window with the one that reaches furthest among those
// before it on that key (for a reader: among the writers), which finds
// every overlapping window.
Verdict check_exclusion(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kExclusion, findings);
  struct Furthest {
    const Holding* any = nullptr;
    const Holding* writer = nullptr;
  };
  std::map<std::string, Furthest, std::less<>> furthest_by_key;
  const auto reaches_further = [](const Holding* candidate, const Holding* so_far) {
    return so_far == nullptr || candidate->window().second > so_far->window().second;
  };
  for (const Holding* holding : acquired_by_time(context.holdings)) {
    check.applies();
    const auto window = holding->window();
    if (window.second <= window.first) continue;  // an empty window overlaps nothing
    for (const Claim& claim : claims_of(holding->ok())) {
      Furthest& furthest = furthest_by_key[claim.key];
      const Holding* rival = claim.shared ? furthest.writer : furthest.any;
      if (rival != nullptr && window.first < rival->window().second) {
        const auto earlier = rival->window();
        check.violation(holding->ok(),
                        "window " + window_text(context, window) + " of " + holding->describe() +
                            " overlaps window " + window_text(context, earlier) + " of " +
                            rival->describe() + claim_text(claim.key) + " by " +
                            Context::ms(std::min(window.second, earlier.second) - window.first));
      }
      if (reaches_further(holding, furthest.any)) furthest.any = holding;
      if (!claim.shared && reaches_further(holding, furthest.writer)) furthest.writer = holding;
    }
  }
  return check.verdict();
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

}  // namespace redlock::chaos::checker_internal
