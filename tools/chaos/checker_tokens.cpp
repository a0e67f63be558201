// The invariants on the fencing tokens the lock granted, per key a holding
// claims (the run's resource, each resource of a lock over several, a
// semaphore's permit: each has its own fence counter): C5 (no two
// acquisitions share a token there) and C6 (an acquisition invoked after
// another succeeded gets a higher token there).
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

struct Fenced {
  const Holding* holding = nullptr;
  std::int64_t token = 0;
};

// The fenced holdings of each claimed key, in the order of their acquire ok.
std::map<std::string, std::vector<Fenced>> fenced_by_key(const Context& context) {
  std::map<std::string, std::vector<Fenced>> by_key;
  for (const Holding* holding : acquired_by_time(context.holdings)) {
    for (const Claim& claim : claims_of(holding->ok())) {
      if (claim.token) by_key[claim.key].push_back(Fenced{holding, *claim.token});
    }
  }
  return by_key;
}

void check_unique(const Context& context, const std::string& key, const std::vector<Fenced>& fenced,
                  InvariantCheck& check) {
  std::map<std::int64_t, const Holding*> first_with_token;
  for (const Fenced& one : fenced) {
    check.applies();
    auto [it, inserted] = first_with_token.try_emplace(one.token, one.holding);
    if (inserted) continue;
    const Event& ok = one.holding->ok();
    const Event& earlier = it->second->ok();
    check.violation(ok, "token " + std::to_string(one.token) + claim_text(key) + " granted to " +
                            one.holding->describe() + " at " + context.at(ok.t) + " and to " +
                            it->second->describe() + " at " + context.at(earlier.t));
  }
}

void check_increasing(const Context& context, const std::string& key,
                      const std::vector<Fenced>& fenced, InvariantCheck& check) {
  // highest[i]: the entry with the highest token among fenced[0..i].
  std::vector<const Fenced*> highest;
  for (const Fenced& one : fenced) {
    const bool higher = highest.empty() || one.token > highest.back()->token;
    highest.push_back(higher ? &one : highest.back());
  }
  for (const Fenced& later : fenced) {
    check.applies();
    const std::optional<std::int64_t> invoked = acquire_invoked(*later.holding);
    if (!invoked) continue;
    // Holdings acquired strictly before `later` was invoked.
    auto end =
        std::lower_bound(fenced.begin(), fenced.end(), *invoked,
                         [](const Fenced& f, std::int64_t t) { return f.holding->ok().t < t; });
    if (end == fenced.begin()) continue;
    const Fenced& earlier = *highest[static_cast<std::size_t>(end - fenced.begin() - 1)];
    if (later.token > earlier.token) continue;
    check.violation(later.holding->ok(), "token " + std::to_string(later.token) + claim_text(key) +
                                             " of " + later.holding->describe() + " (invoked at " +
                                             context.at(*invoked) + ") is not above token " +
                                             std::to_string(earlier.token) + " of " +
                                             earlier.holding->describe() + " acquired at " +
                                             context.at(earlier.holding->ok().t));
  }
}

}  // namespace

// C5: no two successful acquisitions share a token on one key.
Verdict check_token_uniqueness(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kTokenUniqueness, findings);
  for (const auto& [key, fenced] : fenced_by_key(context))
    check_unique(context, key, fenced, check);
  return check.verdict();
}

// C6: A acquired before B was invoked implies token B > token A, on every
// key both claim.
Verdict check_token_monotonicity(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kTokenMonotonicity, findings);
  for (const auto& [key, fenced] : fenced_by_key(context)) {
    check_increasing(context, key, fenced, check);
  }
  return check.verdict();
}

}  // namespace redlock::chaos::checker_internal
