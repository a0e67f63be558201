// The history indexed for the invariants: client operations (an invoke
// with its first completion), holdings (everything about one lock value),
// and the run's parameters (node count, largest TTL, reference origin) that
// make up the checker's Context.
#include <map>
#include <tuple>

#include "checker_internal.hpp"

namespace redlock::chaos::checker_internal {
namespace {

bool is_client_operation(EventKind kind) noexcept {
  switch (kind) {
    case EventKind::acquire:
    case EventKind::extend:
    case EventKind::release:
    case EventKind::read:
    case EventKind::write:
    case EventKind::append:
      return true;
    default:
      return false;
  }
}

// Operations in the order of their first event.
std::vector<Operation> index_operations(const History& history) {
  std::vector<Operation> operations;
  // The key tells apart the resource operations of one critical section
  // that uses several storages (a lock over several resources).
  std::map<std::tuple<std::string_view, EventKind, std::int64_t, std::string_view>, std::size_t>
      position;
  for (const Event& event : history.events) {
    if (!is_client_operation(event.kind)) continue;
    auto [it, inserted] =
        position.try_emplace({event.proc, event.kind, event.op, event.key}, operations.size());
    if (inserted) operations.emplace_back();
    Operation& operation = operations[it->second];
    if (event.phase == Phase::invoke) {
      if (operation.invoke == nullptr) operation.invoke = &event;
    } else if (operation.completion == nullptr) {
      operation.completion = &event;
    }
  }
  return operations;
}

// The index the invariants share: every lock value with its acquire,
// extend and release operations.
HoldingIndex index_holdings(const std::vector<Operation>& operations) {
  HoldingIndex holdings;
  for (const Operation& operation : operations) {
    const std::string& value = operation.value();
    const EventKind kind = operation.first().kind;
    if (value.empty() || is_resource_operation(kind)) continue;
    Holding& holding = holdings[value];
    holding.value = value;
    if (kind == EventKind::acquire) {
      holding.acquire_attempts.push_back(&operation);
      if (operation.ok() && holding.acquire == nullptr) holding.acquire = &operation;
    } else if (kind == EventKind::extend) {
      holding.extends.push_back(&operation);
    } else if (kind == EventKind::release) {
      holding.releases.push_back(&operation);
    }
  }
  return holdings;
}

const Event* find_run(const History& history) {
  for (const Event& event : history.events) {
    if (event.kind == EventKind::run) return &event;
  }
  return nullptr;
}

int node_count_of(const History& history, const Event* run) {
  if (run != nullptr && run->count > 0) return static_cast<int>(run->count);
  // Without a run event, the highest node index any reply names.
  int count = 0;
  for (const Event& event : history.events) {
    for (const NodeReply& reply : event.nodes) count = std::max(count, reply.node + 1);
  }
  return count;
}

std::int64_t max_ttl_of(const History& history, const Event* run) {
  std::int64_t max_ttl = run != nullptr ? run->ttl_ms : 0;
  for (const Event& event : history.events) {
    if (event.kind == EventKind::acquire || event.kind == EventKind::extend) {
      max_ttl = std::max(max_ttl, event.ttl_ms);
    }
  }
  return max_ttl;
}

std::optional<std::int64_t> origin_of(const Event* run) {
  if (run == nullptr) return std::nullopt;
  return run->t;
}

}  // namespace

bool is_resource_operation(EventKind kind) noexcept {
  return kind == EventKind::read || kind == EventKind::write || kind == EventKind::append;
}

std::vector<Claim> claims_of(const Event& acquired) {
  if (acquired.permit) {
    const std::string name = acquired.resources.empty() ? std::string() : acquired.resources[0];
    return {Claim{"sem:" + name + ":" + std::to_string(*acquired.permit), acquired.token}};
  }
  if (acquired.resources.empty()) {
    return {Claim{"lock:" + acquired.key, acquired.token, acquired.shared}};
  }
  const bool own_tokens = acquired.tokens.size() == acquired.resources.size();
  std::vector<Claim> claims;
  for (std::size_t i = 0; i < acquired.resources.size(); ++i) {
    claims.push_back(
        Claim{"lock:" + acquired.resources[i],
              own_tokens ? std::optional<std::int64_t>(acquired.tokens[i]) : acquired.token});
  }
  return claims;
}

std::string claim_text(std::string_view key) {
  return key == "lock:" ? std::string() : " on " + std::string(key);
}

std::vector<const Holding*> acquired_by_time(const HoldingIndex& holdings) {
  std::vector<const Holding*> acquired;
  for (const auto& [value, holding] : holdings) {
    if (holding.acquired()) acquired.push_back(&holding);
  }
  std::stable_sort(acquired.begin(), acquired.end(),
                   [](const Holding* a, const Holding* b) { return a->ok().t < b->ok().t; });
  return acquired;
}

Context::Context(const History& checked) : Context(checked, find_run(checked)) {}

Context::Context(const History& checked, const Event* run)
    : history(checked),
      origin(origin_of(run)),
      node_count(node_count_of(checked, run)),
      max_ttl_ms(max_ttl_of(checked, run)),
      operations(index_operations(checked)),
      holdings(index_holdings(operations)) {}

}  // namespace redlock::chaos::checker_internal
