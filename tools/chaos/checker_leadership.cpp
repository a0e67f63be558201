// The invariant on an election, C15: at no moment do two leaders have their
// claimed windows open, and the leaders' terms (their fencing tokens)
// strictly increase in the order they were elected — whatever the order
// their campaigns began in. (C3 and C6 see parts of this for any lock;
// C15 states the election's promise whole, for its leaders only.)
#include "checker_internal.hpp"

namespace redlock::chaos::checker_internal {
namespace {

std::string leader_text(const Context& context, const Holding& holding) {
  const auto window = holding.window();
  const std::string term =
      holding.ok().token ? "term " + std::to_string(*holding.ok().token) : "no term";
  return holding.describe() + " (" + term + ", [" + context.at(window.first) + ", " +
         context.at(window.second) + "])";
}

}  // namespace

Verdict check_leadership(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kLeadership, findings);
  const Holding* previous = nullptr;
  const Holding* furthest = nullptr;  // the leader whose window reaches furthest
  for (const Holding* holding : acquired_by_time(context.holdings)) {
    if (!holding->ok().leader) continue;
    check.applies();
    const Event& ok = holding->ok();
    if (!ok.token) {
      check.violation(ok, leader_text(context, *holding) + " was elected without a term");
    } else if (previous != nullptr && previous->ok().token && *ok.token <= *previous->ok().token) {
      check.violation(ok, leader_text(context, *holding) + " was elected after " +
                              leader_text(context, *previous) + " with a term not above its");
    }
    const auto window = holding->window();
    if (furthest != nullptr && window.second > window.first &&
        window.first < furthest->window().second) {
      check.violation(ok, leader_text(context, *holding) + " leads at once with " +
                              leader_text(context, *furthest));
    }
    if (window.second > window.first &&
        (furthest == nullptr || window.second > furthest->window().second)) {
      furthest = holding;
    }
    previous = holding;
  }
  return check.verdict();
}

}  // namespace redlock::chaos::checker_internal
