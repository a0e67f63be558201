// From the command line to the library's inputs: which quorum, which
// options.
#pragma once

#include <optional>

#include "cli_args.hpp"
#include "redlock/config.hpp"
#include "redlock/options.hpp"
#include "redlock/outcome.hpp"

namespace redlock::cli {

// The quorum named by --node flags, else by the lookup --config /
// $REDLOCK_CONFIG / ./redlock.toml. On failure prints the error
// (file:line:col: ...) on stderr and returns nullopt: exit 78.
[[nodiscard]] std::optional<QuorumConfig> load_quorum(const Invocation& invocation);

// The TTL in force: --ttl, else the file's lock.ttl_ms.
[[nodiscard]] Milliseconds effective_ttl(const Invocation& invocation,
                                         const QuorumConfig& config) noexcept;

// Why --ttl cannot be used with this quorum, or "" when it can. A TTL that
// the drift leaves no validity above min_validity_ms can never give a lock
// (ttl_can_be_valid, the rule of the file's ttl_ms). With the
// node-amnesia defence on, a node that lost its data waits out max_ttl_ms
// before granting again; a lock living longer than that could then be
// granted twice, so the library refuses such acquires, and extend must not
// stretch a lock past it either. The CLI says so up front (exit 64).
[[nodiscard]] std::string ttl_problem(const Invocation& invocation, const QuorumConfig& config);

// --ttl, --wait and --fenced as library options (unset ones take the
// file's values inside the library).
[[nodiscard]] AcquireOptions acquire_options(const Invocation& invocation);

// The record of a lock held elsewhere (by an earlier `redlock acquire`),
// rebuilt from --resource and --value for extend and release. This process
// does not know when the lock was taken, so its local deadline is set to
// now + ttl: the library's local "already expired" check then lets the
// request through, and the nodes' compare-and-set on the value is the real
// check. The fencing token is not known here.
[[nodiscard]] Lock lock_from_value(const Invocation& invocation, Milliseconds ttl);

}  // namespace redlock::cli
