// The invariants on what the lock nodes were told to release and what
// they kept after the run: C9 (a release deletes only its own value) and
// C10 (no node keeps a released value, none keeps one longer than the TTL).
#include <set>

#include "checker_internal.hpp"

namespace redlock::chaos::checker_internal {
namespace {

// Replies after which a node may hold the acquisition's value: a grant (a
// set's adoption included), or no answer (the SET may have landed after
// the library stopped waiting).
bool may_hold_after_acquire(const Event& acquire, const NodeReply& reply) {
  const std::string& status = reply.status;
  return acquire_reply_grants(acquire, reply) || status == "replicas_short" ||
         status == "timeout" || status == "pending" || status == "unreachable";
}

std::set<int> nodes_that_may_hold(const Holding& holding) {
  std::set<int> nodes;
  for (const Operation* attempt : holding.acquire_attempts) {
    if (attempt->completion == nullptr) continue;
    for (const NodeReply& reply : attempt->completion->nodes) {
      if (may_hold_after_acquire(*attempt->completion, reply)) nodes.insert(reply.node);
    }
  }
  for (const Operation* extend : holding.extends) {
    if (extend->completion == nullptr) continue;
    for (const NodeReply& reply : extend->completion->nodes) {
      if (reply.status == "extended") nodes.insert(reply.node);
    }
  }
  return nodes;
}

// The node index of a snapshot target "n<i>".
std::optional<int> snapshot_node(const Event& event) {
  if (event.kind != EventKind::snapshot || event.target.size() < 2 || event.target[0] != 'n') {
    return std::nullopt;
  }
  int node = 0;
  const char* first = event.target.data() + 1;
  const char* last = event.target.data() + event.target.size();
  auto [ptr, ec] = std::from_chars(first, last, node);
  if (ec != std::errc() || ptr != last) return std::nullopt;
  return node;
}

void check_expiry_left(const Context& context, const Event& snapshot, InvariantCheck& check) {
  const std::string subject = "node " + snapshot.target + " keeps " + snapshot.value;
  if (snapshot.pttl_ms == -1) {
    check.violation(snapshot, subject + " without an expiry");
  } else if (snapshot.pttl_ms > context.max_ttl_ms) {
    check.violation(snapshot, subject + " with PTTL " + std::to_string(snapshot.pttl_ms) +
                                  " ms, above the largest TTL " +
                                  std::to_string(context.max_ttl_ms) + " ms");
  }
}

void check_left_after_release(const Context& context, const Event& snapshot, int node,
                              InvariantCheck& check) {
  const Holding* holding = context.find(snapshot.value);
  if (holding == nullptr) return;
  for (const Operation* release : holding->releases) {
    if (release->completion == nullptr) continue;
    for (const NodeReply& reply : release->completion->nodes) {
      if (reply.node != node || (reply.status != "released" && reply.status != "not_held")) {
        continue;
      }
      check.violation(snapshot, "node " + snapshot.target + " still holds " + snapshot.value +
                                    " after its release answered \"" + reply.status +
                                    "\" there at " + context.at(release->completion->t));
    }
  }
}

}  // namespace

// C9: a release reports "released" only where its own value could be.
Verdict check_safe_release(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kSafeRelease, findings);
  for (const auto& [value, holding] : context.holdings) {
    for (const Operation* release : holding.releases) {
      if (release->completion == nullptr || release->completion->nodes.empty()) continue;
      check.applies();
      const std::set<int> may_hold = nodes_that_may_hold(holding);
      for (const NodeReply& reply : release->completion->nodes) {
        if (reply.status != "released" || may_hold.count(reply.node) != 0) continue;
        check.violation(*release->completion,
                        "release of " + value + " at " + context.at(release->completion->t) +
                            " reported \"released\" on node " + std::to_string(reply.node) +
                            ", where its holding was never granted or extended");
      }
    }
  }
  return check.verdict();
}

// C10: after the run, no node keeps a value longer than the TTL, and none
// keeps a value its release already cleared there.
Verdict check_cleanup(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kCleanup, findings);
  for (const Event& event : context.history.events) {
    const std::optional<int> node = snapshot_node(event);
    if (!node) continue;
    check.applies();
    if (event.value.empty()) continue;  // the node holds no lock key
    check_expiry_left(context, event, check);
    check_left_after_release(context, event, *node, check);
  }
  return check.verdict();
}

}  // namespace redlock::chaos::checker_internal
