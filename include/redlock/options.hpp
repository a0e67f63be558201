// Per-call options. Every field left unset takes the quorum file's value.
#pragma once

#include <optional>
#include <string>

#include "redlock/types.hpp"

namespace redlock {

struct AcquireOptions {
  // Lock time-to-live. Default: LockConfig::ttl.
  std::optional<Milliseconds> ttl;
  // Retries after the first attempt (-1: until `wait` runs out).
  // Default: LockConfig::retry_count, or -1 when `wait` is set.
  std::optional<int> retry_count;
  // Mean retry delay (full jitter). Default: LockConfig::retry_delay.
  std::optional<Milliseconds> retry_delay;
  // Bound on the whole acquire, retries included: no attempt starts after
  // it. Zero means one attempt only.
  std::optional<Milliseconds> wait;
  // Also obtain a fencing token (docs/algorithm.md, "Fenced acquire"): one more round trip, after
  // which Lock::fence holds a token larger than that of every acquisition
  // that finished before this one began. Default: LockConfig::fenced.
  std::optional<bool> fenced;
  // Take the read side of the resource's read-write lock (docs/algorithm.md,
  // "Read-write locks"): readers share the resource with each other and
  // exclude its writers — and a plain (exclusive) lock on the resource is
  // its writer. A writer that waits keeps new readers out. For a lock on
  // one resource only (not a set, not a semaphore).
  bool shared = false;
  // Data the holder advertises with its lock (at most 4096 bytes): appended
  // to the lock's value after a ':', so an inspection shows it
  // (HolderView::payload) — a leader's address, say (election.hpp). Anyone
  // who can read the lock key can read it.
  std::optional<std::string> payload;
  // Wait in line (docs/algorithm.md, "Fair locks"): the waiters of a
  // resource are served in the order of tickets drawn from the quorum, and
  // none is overtaken by one that drew later while its ticket is recorded
  // on a majority. A lock on one resource, exclusive. true: from the first
  // attempt. false: never (a waiter retries in the mutex's waiting line).
  // Unset: LockConfig::fair, and when that is false, an unfenced acquire
  // that has to wait joins the fair queue at its first refusal (its first
  // attempt may go ahead of waiters in line; docs/algorithm.md, "Acquire",
  // step 7).
  std::optional<bool> fair;
};

struct ExtendOptions {
  // The new TTL. Default: the lock's own ttl.
  std::optional<Milliseconds> ttl;
};

}  // namespace redlock
