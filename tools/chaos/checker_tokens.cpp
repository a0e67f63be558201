// The invariants on the fencing tokens the lock granted: C5 (no two
// acquisitions share a token) and C6 (an acquisition invoked after another
// succeeded gets a higher token).
#include "checker_internal.hpp"

namespace redlock::chaos::checker_internal {
namespace {

// When the acquisition that produced a holding was invoked (its attempt's
// start when the invoke is missing).
std::optional<std::int64_t> acquire_invoked(const Holding& holding) {
  if (holding.acquire->invoke != nullptr) return holding.acquire->invoke->t;
  if (holding.ok().start_t != 0) return holding.ok().start_t;
  return std::nullopt;
}

}  // namespace

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

}  // namespace redlock::chaos::checker_internal
