#include "lock_target.hpp"

#include <utility>

namespace redlock::chaos {
namespace {

std::vector<Resource> resources_of(const LockTarget& target) {
  std::vector<Resource> resources;
  for (const std::string& name : target.resources) resources.emplace_back(name);
  return resources;
}

Semaphore semaphore_of(const LockTarget& target) {
  return Semaphore(target.resources.front(), target.permits);
}

AcquireOptions with_side(const LockTarget& target, AcquireOptions options) {
  options.shared = target.shared;
  if (target.fair) options.fair = true;
  if (target.kind == LockKind::election) {
    // A candidate campaigns as BlockingClient::campaign does: fenced (the
    // term), advertising its payload.
    options.fenced = true;
    options.payload = target.payload;
  }
  return options;
}

}  // namespace

LockTarget lock_target(const Scenario& scenario, int index) {
  LockTarget target;
  target.kind = scenario.lock.kind;
  target.permits = scenario.lock.permits;
  if (scenario.lock.kind == LockKind::multi) {
    target.resources = index < 0 ? scenario.all_resources() : scenario.resources_of(index);
  }
  target.shared = index >= 0 && scenario.clients.spec(index).shared;
  target.fair = scenario.lock.fair;
  if (scenario.lock.kind == LockKind::election) {
    target.resources = {election_resource()};
    target.payload = index >= 0 ? "c" + std::to_string(index) : "probe";
  }
  return target;
}

std::string election_resource() { return Election(std::string(kLockName)).resource().str(); }

OperationHandle acquire(AsyncClient& client, const LockTarget& target, const AcquireOptions& asked,
                        AsyncClient::AcquireCallback callback) {
  const AcquireOptions options = with_side(target, asked);
  switch (target.kind) {
    case LockKind::semaphore:
      return client.acquire(semaphore_of(target), options, std::move(callback));
    case LockKind::multi:
      // A set of one name is a plain lock, taken as one.
      if (target.resources.size() > 1) {
        return client.acquire(resources_of(target), options, std::move(callback));
      }
      break;
    case LockKind::mutex:
    case LockKind::election:
      break;
  }
  return client.acquire(Resource(target.resources.front()), options, std::move(callback));
}

AcquireResult acquire(BlockingClient& client, const LockTarget& target,
                      const AcquireOptions& asked) {
  const AcquireOptions options = with_side(target, asked);
  switch (target.kind) {
    case LockKind::semaphore:
      return client.acquire(semaphore_of(target), options);
    case LockKind::multi:
      if (target.resources.size() > 1) return client.acquire(resources_of(target), options);
      break;
    case LockKind::mutex:
    case LockKind::election:
      break;
  }
  return client.acquire(Resource(target.resources.front()), options);
}

Guard lock(BlockingClient& client, const LockTarget& target, const GuardOptions& options,
           std::stop_token stop) {
  switch (target.kind) {
    case LockKind::semaphore:
      return client.lock(semaphore_of(target), options, std::move(stop));
    case LockKind::multi:
      if (target.resources.size() > 1) {
        return client.lock(resources_of(target), options, std::move(stop));
      }
      break;
    case LockKind::mutex:
    case LockKind::election:
      break;
  }
  return client.lock(Resource(target.resources.front()), options, std::move(stop));
}

void record_target(const LockTarget& target, Event& invoke) {
  invoke.shared = target.shared;
  invoke.leader = target.kind == LockKind::election;
  if (target.kind == LockKind::mutex || target.kind == LockKind::election) return;
  invoke.resources = target.resources;
  if (target.kind == LockKind::semaphore) invoke.permits = target.permits;
}

void record_lock(const LockTarget& target, const Lock& lock, Event& ok) {
  record_target(target, ok);
  if (lock.permit) ok.permit = static_cast<std::int64_t>(*lock.permit);
  if (lock.permits != 0) ok.permits = lock.permits;
  for (std::uint64_t token : lock.fences) ok.tokens.push_back(static_cast<std::int64_t>(token));
}

std::vector<Storage> storage_of(const LockTarget& target, const Lock& lock) {
  switch (target.kind) {
    case LockKind::semaphore:
      return {Storage{permit_resource_keys(lock.permit.value_or(0)), lock.fence}};
    case LockKind::multi: {
      std::vector<Storage> storage;
      for (std::size_t i = 0; i < target.resources.size(); ++i) {
        const std::optional<std::uint64_t> token =
            i < lock.fences.size() ? std::optional<std::uint64_t>(lock.fences[i]) : lock.fence;
        storage.push_back(Storage{named_resource_keys(target.resources[i]), token});
      }
      return storage;
    }
    case LockKind::mutex:
    case LockKind::election:
      break;
  }
  return {Storage{mutex_resource_keys(), lock.fence}};
}

}  // namespace redlock::chaos
