// What one chaos client locks, as the scenario's lock kind says: the run's
// mutex, one permit of its semaphore, or a set of resources at once (a set
// of one name is a plain lock). The worker and the harness's probe acquire
// through it, record the holding's kind in the history (history.hpp:
// resources, tokens, permit, permits) and find the storage of the
// protected resource the holding may use.
#pragma once

#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "history.hpp"
#include "redlock/redlock.hpp"
#include "scenario.hpp"

namespace redlock::chaos {

struct LockTarget {
  LockKind kind = LockKind::mutex;
  std::uint32_t permits = 0;  // semaphore
  // multi: the set, in the order asked; otherwise the mutex's or the
  // semaphore's name.
  std::vector<std::string> resources{std::string(kLockName)};
  // mutex: the read side of its read-write lock (ClientSpec::shared).
  bool shared = false;
  // election: what the client advertises as leader (its name).
  std::string payload;
  // mutex: wait in line (LockSpec::fair).
  bool fair = false;
};

// The resource an election's candidates lock.
[[nodiscard]] std::string election_resource();

// Client `index`'s target in `scenario`; the probe's (`index` < 0) is every
// resource any client names.
[[nodiscard]] LockTarget lock_target(const Scenario& scenario, int index);

OperationHandle acquire(AsyncClient& client, const LockTarget& target,
                        const AcquireOptions& options, AsyncClient::AcquireCallback callback);
[[nodiscard]] AcquireResult acquire(BlockingClient& client, const LockTarget& target,
                                    const AcquireOptions& options);
// A guard of the target (BlockingClient::lock), for the reentrant worker.
[[nodiscard]] Guard lock(BlockingClient& client, const LockTarget& target,
                         const GuardOptions& options, std::stop_token stop = {});

// The kind's fields of an acquire invoke: what is asked (nothing for the mutex).
void record_target(const LockTarget& target, Event& invoke);
// ...and of its ok: what was granted (the permit, each resource's token).
void record_lock(const LockTarget& target, const Lock& lock, Event& ok);

// One storage of the protected resource and the token that fences it.
struct Storage {
  ResourceKeys keys;
  std::optional<std::uint64_t> token;
};
// What the holder of `lock` writes: the mutex's one storage, its permit's,
// or one per resource of its set (each with that resource's token).
[[nodiscard]] std::vector<Storage> storage_of(const LockTarget& target, const Lock& lock);

}  // namespace redlock::chaos
