// The invariant on a set's turn, C17: a set acquire that has to wait takes
// its members one at a time, each from a place in that member's fair line
// (the acquire ok's `places`). Once a majority has recorded its place in a
// member's line, the waiters behind it come after it, so no other client
// acquires that member twice before the set acquires it: one turn of a
// client already in line or holding it, then the set's. Sets of one name
// (plain locks) and other sets holding the member count alike. A set
// waiter that was paused (SIGSTOP, by the nemesis or at a point of its
// work) between its place being recorded and the second acquisition
// stopped renewing its places and is not owed its turn, as C16 allows.
#include "checker_internal.hpp"

namespace redlock::chaos::checker_internal {
namespace {

bool claims_key(const Holding& holding, const std::string& key) {
  const std::vector<Claim> claims = claims_of(holding.ok());
  return std::any_of(claims.begin(), claims.end(),
                     [&](const Claim& claim) { return claim.key == key; });
}

// The acquisitions whose acquire ok fell in (from, to), from `acquired`
// in the order of their acquire ok.
std::vector<const Holding*> acquired_within(const std::vector<const Holding*>& acquired,
                                            std::int64_t from, std::int64_t to) {
  const auto after = [](std::int64_t t, const Holding* holding) { return t < holding->ok().t; };
  const auto before = [](const Holding* holding, std::int64_t t) { return holding->ok().t < t; };
  const auto begin = std::upper_bound(acquired.begin(), acquired.end(), from, after);
  return {begin, std::lower_bound(begin, acquired.end(), to, before)};
}

// Per client other than the set's, its acquisitions of `key` in the
// window, in order.
std::map<std::string, std::vector<const Holding*>> by_other_client(
    const std::vector<const Holding*>& within, const std::string& key,
    const std::string& set_client) {
  std::map<std::string, std::vector<const Holding*>> clients;
  for (const Holding* holding : within) {
    const std::string& client = holding->ok().proc;
    if (client != set_client && claims_key(*holding, key)) clients[client].push_back(holding);
  }
  return clients;
}

std::string set_text(const Context& context, const Holding& set, const Place& place) {
  return set.describe() + "'s place in the line of " + place.resource + " (ticket " +
         std::to_string(place.ticket) + ", recorded at " + context.at(place.recorded_t) +
         "; the set acquired at " + context.at(set.ok().t) + ")";
}

// One place of one set: the member's other clients, each at most once in
// the window unless the set's client was stopped before the second.
void check_place(const Context& context, const std::vector<const Holding*>& acquired,
                 const std::vector<Pause>& pauses, const Holding& set, const Place& place,
                 InvariantCheck& check) {
  const Event& ok = set.ok();
  if (place.recorded_t == 0 || place.recorded_t >= ok.t) return;
  const std::string key = "lock:" + place.resource;
  const auto clients =
      by_other_client(acquired_within(acquired, place.recorded_t, ok.t), key, ok.proc);
  for (const auto& [client, holdings] : clients) {
    if (holdings.size() < 2) continue;
    const Holding& second = *holdings[1];
    if (paused_between(pauses, ok.proc, place.recorded_t, second.ok().t)) continue;
    check.violation(second.ok(), holdings[0]->describe() + " and " + second.describe() +
                                     " acquired" + claim_text(key) + " at " +
                                     context.at(holdings[0]->ok().t) + " and " +
                                     context.at(second.ok().t) + ", both after " +
                                     set_text(context, set, place));
  }
}

}  // namespace

Verdict check_set_turn(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kSetTurn, findings);
  const std::vector<const Holding*> acquired = acquired_by_time(context.holdings);
  const std::vector<Pause> pauses = client_pauses(context.history);
  for (const Holding* set : acquired) {
    const std::vector<Place>& places = set->ok().places;
    if (places.empty()) continue;
    check.applies();
    for (const Place& place : places) check_place(context, acquired, pauses, *set, place, check);
  }
  return check.verdict();
}

}  // namespace redlock::chaos::checker_internal
