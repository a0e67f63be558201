// Where the keys of one resource live on the quorum's nodes
// (docs/algorithm.md, "Key layout"). Every key a call names — the lock, its
// fence counter, a fair lock's queue, a semaphore's permits, and the node
// rules' marker, recovering key and fence hash it is checked against — is
// named under one prefix, so that the layout is decided in one place:
//
// - shared: a quorum of single servers. Every key is under the quorum's
//   key_prefix; the node rules' keys are one per server.
// - per slot: a quorum with a member that is a Redis Cluster. A script
//   there may only touch keys of one hash slot, so every key of a resource
//   is under key_prefix followed by "{<tag>}", the hash tag of the slot
//   the resource's name hashes to (slot_tag): the node rules' keys are one
//   per slot, on every member alike, and one call names the same keys on
//   every member.
//
// A resource's release channels are named under the same prefix: a
// client listening on one keeps a key of the channel's own name (its
// listening mark), which the release checks, so the channel's name must be
// in the resource's slot too. A client's wake channel, which no call reads
// as a key, stays under key_prefix. Pure logic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "redlock/config.hpp"

namespace redlock::detail {

enum class KeyLayout { shared, per_slot };

// Per slot when some member of `config` is a Redis Cluster, else shared.
[[nodiscard]] KeyLayout key_layout(const QuorumConfig& config) noexcept;

// Why `lock` cannot name its keys per slot (a lock_key without `{prefix}`
// would put a lock outside its slot; braces in key_prefix would make a
// hash tag of their own), or empty when it can.
[[nodiscard]] std::string per_slot_problem(const LockConfig& lock);

class KeySpace {
 public:
  // The shared layout (implicit: a quorum's LockConfig names its keys so
  // wherever no cluster is involved).
  KeySpace(const LockConfig& lock)  // NOLINT(google-explicit-constructor)
      : lock_(&lock), key_prefix_(lock.key_prefix) {}
  // The keys of `resource` under `layout`. `lock` must outlive the space.
  KeySpace(const LockConfig& lock, KeyLayout layout, std::string_view resource);

  // The prefix of every key and of the resource's release channels (above):
  // the quorum's key_prefix, per slot with the slot's hash tag after it.
  [[nodiscard]] const std::string& key_prefix() const noexcept { return key_prefix_; }
  [[nodiscard]] bool amnesia_defence() const noexcept { return lock_->amnesia_defence; }
  [[nodiscard]] const LockConfig& lock() const noexcept { return *lock_; }
  // The slot every key is in (per slot), or none (shared).
  [[nodiscard]] std::optional<std::uint16_t> slot() const noexcept { return slot_; }

 private:
  const LockConfig* lock_;
  std::string key_prefix_;
  std::optional<std::uint16_t> slot_;
};

// The slot the keys of `resource` live in under the per-slot layout: the
// slot of its name (a hash tag in the name is honoured, so resources that
// share one share a slot).
[[nodiscard]] std::uint16_t resource_slot(std::string_view resource) noexcept;

}  // namespace redlock::detail
