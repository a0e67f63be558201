// The invariant on reentrant holds, C14: nested holds never outlive the
// lock. A nested hold is a second lock() of a held lock by its owner; it
// shares the first hold's lock, so everything about it is judged against
// the holding it nests in (the acquire of the same process and op):
//   * it begins inside that holding's window, with its value and token;
//   * it is no acquisition: no acquire round (attempts 0), no node replies;
//   * the resource operations made under it (its `nested` id) that did not
//     fail start and complete inside the window, fenced or not;
//   * it ends inside the window, or it observed the loss no later than its
//     end (a process stopped past its deadline cannot end in time, but it
//     must be told before it ends);
//   * a loss signalled (on_lost) to one hold of the holding reaches every
//     hold of it that was open then.
#include <set>
#include <tuple>

#include "checker_internal.hpp"

namespace redlock::chaos::checker_internal {
namespace {

// proc, the holding's op, the nested hold's id (0: the outer hold).
using HoldId = std::tuple<std::string_view, std::int64_t, std::int64_t>;

struct NestedHold {
  const Event* invoke = nullptr;
  const Event* begin = nullptr;  // nest ok or fail
  const Event* end = nullptr;    // unnest
  std::vector<const Event*> losses;
  std::vector<const Operation*> uses;

  [[nodiscard]] const Event& first() const { return invoke != nullptr ? *invoke : *begin; }
  [[nodiscard]] bool held() const { return begin != nullptr && begin->phase == Phase::ok; }
  [[nodiscard]] std::string describe() const {
    const Event& e = first();
    return "nested hold #" + std::to_string(e.nested) + " of " + e.proc + " (op " +
           std::to_string(e.op) + ")";
  }
  [[nodiscard]] const Event* first_signal() const {
    for (const Event* loss : losses) {
      if (loss->detail == "on_lost") return loss;
    }
    return nullptr;
  }
};

bool is_signal(const Event& loss) { return loss.detail == "on_lost"; }

struct Index {
  std::map<HoldId, NestedHold> nested;
  // Losses the outer holds observed, by (proc, op).
  std::map<std::pair<std::string_view, std::int64_t>, std::vector<const Event*>> outer_losses;
  // The holding each (proc, op) acquired.
  std::map<std::pair<std::string_view, std::int64_t>, const Holding*> holdings;
};

Index index_nested(const Context& context) {
  Index index;
  for (const Event& event : context.history.events) {
    const HoldId id{event.proc, event.op, event.nested};
    if (event.kind == EventKind::nest) {
      NestedHold& hold = index.nested[id];
      if (event.phase == Phase::invoke) {
        if (hold.invoke == nullptr) hold.invoke = &event;
      } else if (hold.begin == nullptr) {
        hold.begin = &event;
      }
    } else if (event.kind == EventKind::unnest) {
      NestedHold& hold = index.nested[id];
      if (hold.end == nullptr) hold.end = &event;
    } else if (event.kind == EventKind::lost) {
      if (event.nested == 0) {
        index.outer_losses[{event.proc, event.op}].push_back(&event);
      } else {
        index.nested[id].losses.push_back(&event);
      }
    }
  }
  for (const Operation& operation : context.operations) {
    const Event& e = operation.first();
    if (!is_resource_operation(e.kind) || e.nested == 0) continue;
    auto found = index.nested.find(HoldId{e.proc, e.op, e.nested});
    if (found != index.nested.end()) found->second.uses.push_back(&operation);
  }
  for (const auto& [value, holding] : context.holdings) {
    if (!holding.acquired()) continue;
    index.holdings.try_emplace({holding.ok().proc, holding.ok().op}, &holding);
  }
  return index;
}

std::string window_text(const Context& context, std::pair<std::int64_t, std::int64_t> window) {
  return "[" + context.at(window.first) + ", " + context.at(window.second) + "]";
}

void check_begin(const Context& context, const NestedHold& hold, const Holding& holding,
                 InvariantCheck& check) {
  const Event& begin = *hold.begin;
  const auto window = holding.window();
  if (begin.t < window.first || begin.t > window.second) {
    check.violation(begin, hold.describe() + " began at " + context.at(begin.t) +
                               ", outside the window " + window_text(context, window) + " of " +
                               holding.describe());
  }
  if (begin.value != holding.value) {
    check.violation(begin, hold.describe() + " holds value " + begin.value + ", not the value " +
                               holding.value + " of the holding it nests in: a lock of its own");
  }
  const Event& acquired = holding.ok();
  if (acquired.token && begin.token != acquired.token) {
    check.violation(begin, hold.describe() + " has token " +
                               (begin.token ? std::to_string(*begin.token) : "none") +
                               ", not the holding's " + std::to_string(*acquired.token));
  }
}

// Nested or not, the call ran no acquire round and reached no node.
void check_no_acquisition(const NestedHold& hold, InvariantCheck& check) {
  const Event& begin = *hold.begin;
  if (begin.attempts == 0 && begin.nodes.empty()) return;
  int granted = 0;
  for (const NodeReply& reply : begin.nodes) granted += reply.status == "granted" ? 1 : 0;
  check.violation(begin, hold.describe() + " ran " + std::to_string(begin.attempts) +
                             " acquire rounds with " + std::to_string(begin.nodes.size()) +
                             " node replies (" + std::to_string(granted) +
                             " granted): a second acquisition on the nodes, not a nested hold");
}

void check_uses(const Context& context, const NestedHold& hold, const Holding& holding,
                InvariantCheck& check) {
  const auto window = holding.window();
  for (const Operation* use : hold.uses) {
    if (use->failed()) continue;  // changed nothing
    for (const Event* event : {use->invoke, use->completion}) {
      if (event == nullptr || (event->t >= window.first && event->t <= window.second)) continue;
      check.violation(*event, use->describe() + " under " + hold.describe() + " at " +
                                  context.at(event->t) + " lies outside the window " +
                                  window_text(context, window) + " of " + holding.describe());
    }
  }
}

void check_end(const Context& context, const NestedHold& hold, const Holding& holding,
               InvariantCheck& check) {
  const auto window = holding.window();
  if (hold.end != nullptr && hold.end->t <= window.second) return;
  const std::int64_t end =
      hold.end != nullptr ? hold.end->t : std::numeric_limits<std::int64_t>::max();
  for (const Event* loss : hold.losses) {
    if (loss->t <= end) return;
  }
  const Event& where = hold.end != nullptr ? *hold.end : *hold.begin;
  const std::string ended =
      hold.end != nullptr ? "ended at " + context.at(hold.end->t) : "never ended";
  check.violation(where, hold.describe() + " " + ended + ", after the window " +
                             window_text(context, window) + " of " + holding.describe() +
                             " closed, without observing the loss");
}

// Every hold of the holding open at the first loss signal got one too.
void check_signal_reaches_all(const Context& context, const Index& index,
                              std::pair<std::string_view, std::int64_t> key, const Holding& holding,
                              InvariantCheck& check) {
  std::vector<const NestedHold*> holds;
  for (auto it = index.nested.lower_bound(HoldId{key.first, key.second, 1});
       it != index.nested.end() && std::get<0>(it->first) == key.first &&
       std::get<1>(it->first) == key.second;
       ++it) {
    if (it->second.held()) holds.push_back(&it->second);
  }
  const Event* first = nullptr;
  std::vector<const Event*> outer;
  if (auto found = index.outer_losses.find(key); found != index.outer_losses.end()) {
    outer = found->second;
  }
  for (const Event* loss : outer) {
    if (is_signal(*loss) && (first == nullptr || loss->t < first->t)) first = loss;
  }
  for (const NestedHold* hold : holds) {
    const Event* signal = hold->first_signal();
    if (signal != nullptr && (first == nullptr || signal->t < first->t)) first = signal;
  }
  if (first == nullptr) return;
  const std::int64_t t = first->t;
  const auto released = holding.release_invoked();
  const bool outer_open = t >= holding.ok().t && (!released || *released >= t);
  const bool outer_told =
      std::any_of(outer.begin(), outer.end(), [](const Event* loss) { return is_signal(*loss); });
  if (outer_open && !outer_told) {
    check.violation(*first, "the loss signalled at " + context.at(t) + " to a hold of " +
                                holding.describe() + " never reached its outer hold");
  }
  for (const NestedHold* hold : holds) {
    const bool open = hold->begin->t <= t && (hold->end == nullptr || hold->end->t >= t);
    if (open && hold->first_signal() == nullptr) {
      check.violation(*first, "the loss signalled at " + context.at(t) + " to a hold of " +
                                  holding.describe() + " never reached " + hold->describe() +
                                  ", open then");
    }
  }
}

}  // namespace

// C14: nested holds never outlive the lock (see the top of this file).
Verdict check_nested_holds(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kNestedHolds, findings);
  const Index index = index_nested(context);
  std::set<std::pair<std::string_view, std::int64_t>> holdings_with_nested;
  for (const auto& [id, hold] : index.nested) {
    if (hold.invoke == nullptr && hold.begin == nullptr) continue;  // only losses or an end
    check.applies();
    const std::pair<std::string_view, std::int64_t> key{std::get<0>(id), std::get<1>(id)};
    auto found = index.holdings.find(key);
    if (found == index.holdings.end()) {
      check.violation(hold.first(), hold.describe() + " nests in op " +
                                        std::to_string(std::get<1>(id)) + ", which no acquire of " +
                                        std::string(std::get<0>(id)) + " granted");
      continue;
    }
    if (hold.begin == nullptr) continue;  // the call never returned
    const Holding& holding = *found->second;
    check_no_acquisition(hold, check);
    if (!hold.held()) continue;
    holdings_with_nested.insert(key);
    check_begin(context, hold, holding, check);
    check_uses(context, hold, holding, check);
    check_end(context, hold, holding, check);
  }
  for (const auto& key : holdings_with_nested) {
    check_signal_reaches_all(context, index, key, *index.holdings.at(key), check);
  }
  return check.verdict();
}

}  // namespace redlock::chaos::checker_internal
