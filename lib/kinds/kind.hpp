// A lock kind's own calls (docs/engine.md, "Lock kinds"): what a record of
// the kind looks like, which keys it may name, how an acquire attempts it
// and how a holder extends and releases it on one node. Each kind is one
// file of this folder — mutex.cpp, fair.cpp, read_write.cpp, multi.cpp,
// semaphore.cpp — implementing KindRules; kind_table.cpp is the one table
// that maps a LockKind to it. Pure: names and arguments, no I/O.
//
// What every kind shares (rounds, retries, validity, fencing, undo, the
// waiting line) is the acquire's (operations/acquire_operation.hpp), which
// asks its kind for these calls.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "protocol/attempt_tally.hpp"
#include "redlock/config.hpp"
#include "redlock/outcome.hpp"
#include "scripts/scripts.hpp"

namespace redlock::detail {

// The public LockKind (outcome.hpp): each kind's rules are in this folder.
using redlock::LockKind;

// What an acquire's attempt carries besides the lock's shape: this
// attempt's value, the TTL as sent, whether a fencing token is wanted, and
// what only some kinds read — the mutex's place in line, the fair lock's
// ticket and the counter a refusal draws from, the permit a semaphore
// tries first. The acquire asks its kind for each attempt's call.
struct AttemptSetup {
  std::string_view value{};
  std::string_view ttl_text{};
  bool fenced = false;
  std::string_view line{};              // mutex: line_argument(), "" for none
  std::string_view ticket{};            // fair: "" before the waiter has one
  std::string_view counter_field{};     // fair: "" for no draw
  std::string_view first_permit = "0";  // semaphore
};

class KindRules {
 public:
  KindRules() = default;
  KindRules(const KindRules&) = delete;
  KindRules& operator=(const KindRules&) = delete;
  virtual ~KindRules() = default;

  // Whether `lock` (of this kind) is a record an acquire could have handed
  // out; the value, the resource and the fields that belong to another
  // kind are checked by well_formed() below, which alone calls this.
  [[nodiscard]] virtual bool well_formed(const Lock& lock) const noexcept = 0;
  // Whether no lock key of `lock` under `keys` is one of the library's own
  // keys (is_bookkeeping_key).
  [[nodiscard]] virtual bool keys_allowed(const Lock& lock, const KeySpace& keys) const;
  // The attempt's call for a lock shaped as `shape` (its resources, permit
  // count, queue id; value and times unset), for the attempt `setup`
  // describes. The mutex's fast path (operations) sends its plain
  // transaction instead where it may.
  [[nodiscard]] virtual ScriptCall attempt_call(const Lock& shape, const KeySpace& keys,
                                                const AttemptSetup& setup) const = 0;
  // How an attempt at a lock shaped as `shape` is decided by its nodes'
  // answers: by default a majority of grants of its key (or keys).
  [[nodiscard]] virtual std::unique_ptr<AttemptTally> attempt_tally(const Lock& shape) const;
  // Extends `lock` to `ttl_text` milliseconds on one node.
  [[nodiscard]] virtual ScriptCall extend_call(const Lock& lock, const KeySpace& keys,
                                               std::string ttl_text) const = 0;
  // Deletes `lock`'s value on one node; `announce` publishes the release
  // on the lock's channels (waking waiters). `rejoin`: the mutex's only.
  [[nodiscard]] virtual ScriptCall release_call(const Lock& lock, const KeySpace& keys,
                                                bool announce, std::string_view rejoin) const = 0;

 protected:
  // The lock key of `resource` is not a bookkeeping key.
  [[nodiscard]] static bool key_allowed(const Resource& resource, const KeySpace& keys);
  // `id` on the lock's one key with ARGV value, ttl ms: the extend of a
  // kind held on one key (the mutex's batched extend, the readers').
  [[nodiscard]] static ScriptCall one_key_extend(ScriptId id, const Lock& lock,
                                                 const KeySpace& keys, std::string ttl_text);
};

// Each kind's rules (one per file of this folder).
[[nodiscard]] const KindRules& mutex_rules() noexcept;
[[nodiscard]] const KindRules& fair_rules() noexcept;
[[nodiscard]] const KindRules& read_write_rules() noexcept;
[[nodiscard]] const KindRules& multi_rules() noexcept;
[[nodiscard]] const KindRules& semaphore_rules() noexcept;

// The table (kind_table.cpp).
[[nodiscard]] const KindRules& rules_of(LockKind kind) noexcept;
// The kind a record says it is (Lock::kind).
[[nodiscard]] LockKind kind_of(const Lock& lock) noexcept;

// Whether `lock` is a record some acquire could have handed out: a value, a
// resource, and its kind's shape (KindRules::well_formed).
[[nodiscard]] bool well_formed(const Lock& lock) noexcept;
// Whether no lock key of `lock` under `keys` is one of the library's own
// keys: a record that names such a key was never handed out, and a release
// or extend of it is refused. A permit's keys are a semaphore's own, always
// allowed.
[[nodiscard]] bool lock_keys_allowed(const Lock& lock, const KeySpace& keys);
// Extends `lock` to `ttl` on one node; `keys` says where its keys are
// (key_prefix, lock_key).
[[nodiscard]] ScriptCall extend_call(const Lock& lock, const KeySpace& keys, Milliseconds ttl);
// Deletes `lock`'s value on one node; `announce` publishes the release on
// the lock's channels (waking waiters), else nothing is published.
// `rejoin` (a mutex's announced release only): the releaser's place in
// line, rejoin_argument(), taken when the release names a waiter.
[[nodiscard]] ScriptCall release_call(const Lock& lock, const KeySpace& keys, bool announce,
                                      std::string_view rejoin = {});

}  // namespace redlock::detail
