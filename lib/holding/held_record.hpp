// What a held lock keeps of its lock and of its acquisition, packed.
//
// A client may hold a hundred thousand locks at once, each kept for as long
// as it is held, while the public types that describe them (Lock,
// AcquireResult with a NodeOutcome per node) are made to be read, not kept:
// two strings per node outcome, vectors and fields that only some kinds of
// lock use. These records keep the same information in a fraction of the
// space and give the public types back, equal field for field, on request
// (Guard::lock(), Guard::acquired()), which is rare next to renewals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "redlock/outcome.hpp"
#include "redlock/types.hpp"

namespace redlock::detail {

// A Lock as a held lock keeps it: what every lock has inline; what only some
// kinds of lock have (several resources, a semaphore permit, the read side, a
// fair lock's place in its queue) in a side allocation made only for them.
class PackedLock {
 public:
  explicit PackedLock(Lock lock);

  // The lock as it was packed.
  [[nodiscard]] Lock unpack() const;
  [[nodiscard]] TimePoint started() const noexcept { return started_; }
  [[nodiscard]] Milliseconds ttl() const noexcept { return ttl_; }
  [[nodiscard]] std::optional<std::uint64_t> fence() const noexcept { return fence_; }
  // Whether some field beyond the common ones is set (for the tests).
  [[nodiscard]] bool has_rare_fields() const noexcept { return rare_ != nullptr; }

 private:
  struct Rare {
    std::vector<Resource> resources;
    std::vector<std::uint64_t> fences;
    std::optional<std::uint32_t> permit;
    std::uint32_t permits = 0;
    bool shared = false;
    std::string queue_id;
    LockKind kind = LockKind::mutex;
  };

  // The resource's name and then the value, in one string: one allocation
  // instead of two.
  std::string names_;
  std::uint32_t resource_size_;
  Milliseconds ttl_;
  TimePoint started_;
  TimePoint valid_until_;
  std::optional<std::uint64_t> fence_;
  std::unique_ptr<const Rare> rare_;
};

// The node names of a quorum in configuration order, shared by the client
// and the records of its held locks (which may outlive it).
using NodeNames = std::vector<std::string>;

// What a successful acquisition reported beside its lock (validity,
// attempts, the fair lock's ticket, the last attempt's per-node outcomes),
// as one byte string: varints for the numbers, and per node a status byte,
// its latency, and only the fields that differ from a plain grant (a name
// other than the configured one, a holder's TTL, a permit, a fencing
// counter, an error text). For the five nodes of a plain lock that is about
// 20 bytes against about 600 for an AcquireResult's vector of NodeOutcome.
class AcquireRecord {
 public:
  AcquireRecord() = default;
  // `result` succeeded (its lock is kept apart, as a PackedLock); `names`
  // are the names of its client's nodes.
  AcquireRecord(const AcquireResult& result, std::shared_ptr<const NodeNames> names);

  // The result as it was recorded, holding `lock`.
  [[nodiscard]] AcquireResult unpack(Lock lock) const;

 private:
  std::unique_ptr<std::uint8_t[]> packed_;
  std::shared_ptr<const NodeNames> names_;
};

}  // namespace redlock::detail
