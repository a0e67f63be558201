// The invariant on fair locks, C16: a waiter whose ticket a majority had
// recorded is never overtaken by a waiter that began drawing its ticket
// after that — the later waiter acquires after it — and the later ticket
// is larger. A waiter that was paused (SIGSTOP, by the nemesis or at a
// point of its work) between its ticket being recorded and the other's
// acquisition stopped renewing its place and is not owed its turn: the
// promise is for live waiters. Tickets are per resource: only waiters for
// the same resource are compared. A set waits in several lines, one
// member at a time, its one ticket that of its last line: its places are
// C17's (checker_set_turn.cpp), not compared here.
#include "checker_internal.hpp"

namespace redlock::chaos::checker_internal {

// Every client pause of the run, [invoke, end] (open-ended when it never
// ended): the nemesis's ("pause") and a client's own at a point of its
// work ("pause-client", recorded by the client with its own op number).
std::vector<Pause> client_pauses(const History& history) {
  std::vector<Pause> pauses;
  std::map<std::pair<std::string, std::int64_t>, std::size_t> open;  // (proc, op) -> index
  for (const Event& event : history.events) {
    if (event.kind != EventKind::nemesis) continue;
    if (event.fault != "pause" && event.fault != "pause-client") continue;
    if (event.target.empty() || event.target[0] != 'c') continue;
    const std::pair<std::string, std::int64_t> key{event.proc, event.op};
    if (event.phase == Phase::invoke) {
      open[key] = pauses.size();
      pauses.push_back(Pause{event.target, event.t, std::numeric_limits<std::int64_t>::max()});
    } else if (event.phase == Phase::ok) {
      if (auto it = open.find(key); it != open.end()) pauses[it->second].to = event.t;
    }
  }
  return pauses;
}

bool paused_between(const std::vector<Pause>& pauses, const std::string& client, std::int64_t from,
                    std::int64_t to) {
  return std::any_of(pauses.begin(), pauses.end(), [&](const Pause& pause) {
    return pause.client == client && pause.from < to && pause.to > from;
  });
}

namespace {

std::string waiter_text(const Context& context, const Holding& holding) {
  const Event& ok = holding.ok();
  return holding.describe() + " (ticket " + std::to_string(*ok.ticket) + ", recorded at " +
         context.at(ok.ticket_recorded_t) + ", acquired at " + context.at(ok.t) + ")";
}

}  // namespace

Verdict check_fair_order(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kFairOrder, findings);
  // Tickets count per resource: two waiters are compared only when they
  // waited for the same one (a scenario that mixes resources).
  const auto resource_of = [](const Holding& holding) {
    const std::vector<Claim> claims = claims_of(holding.ok());
    return claims.size() == 1 ? claims.front().key : std::string();
  };
  std::vector<const Holding*> waited;
  for (const Holding* holding : acquired_by_time(context.holdings)) {
    const Event& ok = holding->ok();
    if (!ok.ticket || ok.ticket_recorded_t == 0 || ok.ticket_drawn_t == 0) continue;
    if (!resource_of(*holding).empty()) waited.push_back(holding);
  }
  const std::vector<Pause> pauses = client_pauses(context.history);
  for (const Holding* earlier : waited) {
    check.applies();
    const Event& a = earlier->ok();
    const std::string resource = resource_of(*earlier);
    for (const Holding* later : waited) {
      const Event& b = later->ok();
      if (earlier == later || b.ticket_drawn_t <= a.ticket_recorded_t) continue;
      if (resource_of(*later) != resource) continue;
      if (*b.ticket <= *a.ticket) {
        check.violation(b, waiter_text(context, *later) + " drew after " +
                               waiter_text(context, *earlier) +
                               " was recorded, with a ticket "
                               "not above its");
      }
      if (b.t < a.t && !paused_between(pauses, a.proc, a.ticket_recorded_t, b.t)) {
        check.violation(
            b, waiter_text(context, *later) + " overtook " + waiter_text(context, *earlier));
      }
    }
  }
  return check.verdict();
}

}  // namespace redlock::chaos::checker_internal
