// Error codes of redlock: one category, one table, a sentence each.
//
// Every result type of the library carries a std::error_code from this
// category (or a default-constructed one on success). Codes compare equal to
// the enumerators, so `if (result.error == redlock::errc::not_acquired)` works.
#pragma once

#include <string>
#include <system_error>

#include "redlock/export.hpp"

namespace redlock {

enum class errc {
  // The resource is held by another client: a majority of nodes answered
  // "busy", so no majority can grant it now.
  not_acquired = 1,
  // Too few nodes answered yes (unreachable, timed out, errors, refused
  // replica acknowledgement), and the nodes that answered "busy" alone do not
  // explain it.
  no_quorum,
  // A majority granted the lock, but so late that less than the minimum
  // validity was left; the grants were undone.
  validity_too_short,
  // The lock is no longer held: an extend was refused by a majority, or the
  // lock's validity ran out before the operation could start.
  lost,
  // An overall operation deadline passed before an outcome was known.
  timeout,
  // A node answered with an error reply the protocol does not expect.
  node_error,
  // The quorum file or options are invalid.
  config_error,
  // The operation was cancelled by its caller.
  cancelled,
  // The client is closing; the operation was not started or was abandoned.
  shutting_down,
  // An argument is out of range (empty resource, non-positive TTL, ...).
  invalid_argument,
  // A majority granted the lock, but the fencing token could not be stored
  // on a majority (nodes failed, or newer tokens kept overtaking ours); the
  // grants were undone.
  fencing_failed,
  // A guard stopped renewing because it reached its configured cap on hold
  // time or on renewals; the lock ran out at its deadline.
  hold_limit,
  // The fence gate refused an operation: its token is below the highest
  // token the resource has seen, so a newer holder exists.
  fenced_out,
};

REDLOCK_API const std::error_category& redlock_category() noexcept;

REDLOCK_API std::error_code make_error_code(errc e) noexcept;

}  // namespace redlock

template <>
struct std::is_error_code_enum<redlock::errc> : std::true_type {};
