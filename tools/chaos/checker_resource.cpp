// The invariants on the protected resource, read from the harness's
// resource snapshot and the accepted resource operations: C7 (a fenced
// resource accepts nothing below its high-water mark and its log's tokens
// never decrease) and C8 (the final state holds every accepted update).
#include <set>

#include "checker_internal.hpp"

namespace redlock::chaos::checker_internal {
namespace {

// Accepted fenced resource operations of one resource key, in completion order.
std::map<std::string, std::vector<const Operation*>> accepted_fenced_by_key(
    const Context& context) {
  std::map<std::string, std::vector<const Operation*>> by_key;
  for (const Operation& operation : context.operations) {
    if (is_resource_operation(operation.first().kind) && operation.token() && operation.ok()) {
      by_key[operation.key()].push_back(&operation);
    }
  }
  for (auto& [key, accepted] : by_key) {
    std::stable_sort(accepted.begin(), accepted.end(), [](const Operation* a, const Operation* b) {
      return a->completion->t < b->completion->t;
    });
  }
  return by_key;
}

void check_high_water(const Context& context, const std::vector<const Operation*>& accepted,
                      InvariantCheck& check) {
  // highest[i]: the operation with the highest token among accepted[0..i].
  std::vector<const Operation*> highest;
  for (const Operation* operation : accepted) {
    const bool higher = highest.empty() || *operation->token() > *highest.back()->token();
    highest.push_back(higher ? operation : highest.back());
  }
  for (const Operation* operation : accepted) {
    const std::int64_t invoked = operation->first().t;
    auto end =
        std::lower_bound(accepted.begin(), accepted.end(), invoked,
                         [](const Operation* o, std::int64_t t) { return o->completion->t < t; });
    if (end == accepted.begin()) continue;
    const Operation* mark = highest[static_cast<std::size_t>(end - accepted.begin() - 1)];
    if (*operation->token() >= *mark->token()) continue;
    check.violation(*operation->completion,
                    operation->describe() + " (invoked at " + context.at(invoked) +
                        ") was accepted with token " + std::to_string(*operation->token()) +
                        " below the high-water mark " + std::to_string(*mark->token()) +
                        " set by " + mark->describe() + " at " + context.at(mark->completion->t));
  }
}

bool is_resource_snapshot(const Event& event) {
  return event.kind == EventKind::snapshot && event.target == "resource";
}

// The token of a resource log entry "proc:op:token:value".
std::optional<std::int64_t> log_entry_token(std::string_view entry) {
  const std::size_t first = entry.find(':');
  if (first == std::string_view::npos) return std::nullopt;
  const std::size_t second = entry.find(':', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  const std::size_t third = entry.find(':', second + 1);
  if (third == std::string_view::npos) return std::nullopt;
  const std::string_view text = entry.substr(second + 1, third - second - 1);
  std::int64_t token = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), token);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return token;
}

void check_log_order(const Event& snapshot, InvariantCheck& check) {
  std::optional<std::int64_t> highest;
  std::size_t highest_at = 0;
  for (std::size_t i = 0; i < snapshot.entries.size(); ++i) {
    const std::optional<std::int64_t> token = log_entry_token(snapshot.entries[i]);
    if (!token) continue;
    if (highest && *token < *highest) {
      check.violation(snapshot, "resource log entry #" + std::to_string(i) + " \"" +
                                    snapshot.entries[i] + "\" has token " + std::to_string(*token) +
                                    " after token " + std::to_string(*highest) + " (entry #" +
                                    std::to_string(highest_at) + ")");
    }
    if (!highest || *token > *highest) {
      highest = token;
      highest_at = i;
    }
  }
}

void check_counter(const Context& context, const Event& snapshot, InvariantCheck& check) {
  std::int64_t accepted = 0;
  std::int64_t indeterminate = 0;  // info, or no completion: may or may not have landed
  for (const Operation& operation : context.operations) {
    if (operation.first().kind != EventKind::write) continue;
    if (!snapshot.key.empty() && operation.key() != snapshot.key) continue;
    if (operation.ok()) {
      ++accepted;
    } else if (!operation.failed()) {
      ++indeterminate;
    }
  }
  if (snapshot.count >= accepted && snapshot.count <= accepted + indeterminate) return;
  check.violation(snapshot, "resource counter is " + std::to_string(snapshot.count) + " but " +
                                std::to_string(accepted) + " writes were accepted (" +
                                std::to_string(indeterminate) + " indeterminate)");
}

void check_appends(const Context& context, const Event& snapshot, InvariantCheck& check) {
  const std::set<std::string_view> log(snapshot.entries.begin(), snapshot.entries.end());
  // The log's own key when the snapshot names it (`key` is the counter's);
  // else the one key of both, or every append when it names none.
  const std::string& log_key = snapshot.log_key.empty() ? snapshot.key : snapshot.log_key;
  for (const Operation& operation : context.operations) {
    if (operation.first().kind != EventKind::append || !operation.ok()) continue;
    if (!log_key.empty() && operation.key() != log_key) continue;
    const std::string& entry =
        operation.completion->entry.empty() ? operation.first().entry : operation.completion->entry;
    if (log.count(entry) != 0) continue;
    check.violation(snapshot, "accepted " + operation.describe() + " (at " +
                                  context.at(operation.completion->t) + ") entry \"" + entry +
                                  "\" is missing from the resource log");
  }
}

}  // namespace

// C7: a fenced resource accepts nothing below its high-water mark, and its
// log's tokens never decrease.
Verdict check_fenced_resource(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kFencedResource, findings);
  const bool fenced = std::any_of(
      context.operations.begin(), context.operations.end(), [](const Operation& operation) {
        return is_resource_operation(operation.first().kind) && operation.token().has_value();
      });
  if (!fenced) return check.verdict();
  check.applies();
  for (const auto& [key, accepted] : accepted_fenced_by_key(context)) {
    check_high_water(context, accepted, check);
  }
  for (const Event& event : context.history.events) {
    if (is_resource_snapshot(event)) check_log_order(event, check);
  }
  return check.verdict();
}

// C8: the final resource state holds every accepted update (one snapshot
// per storage: a semaphore's permit, a resource of a multi-lock).
Verdict check_no_lost_update(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kNoLostUpdate, findings);
  for (const Event& event : context.history.events) {
    if (!is_resource_snapshot(event)) continue;
    check.applies();
    check_counter(context, event, check);
    check_appends(context, event, check);
  }
  return check.verdict();
}

}  // namespace redlock::chaos::checker_internal
