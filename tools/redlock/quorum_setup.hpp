// From the command line to the library's inputs: which quorum, which
// options.
#pragma once

#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "cli_args.hpp"
#include "redlock/blocking_client.hpp"
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

// The lock the command line names, as messages show it: "r" for one
// resource, "a", "b" for several, semaphore "s" for a permit (semaphore
// "s" permit 3 once --permit names it), quoted with printable().
[[nodiscard]] std::string lock_target(const Invocation& invocation);

// The name the keys of the lock the command line names are under, whose
// slot they are in when the quorum names its keys per slot: the
// election's or the semaphore's name, else the (first) resource.
[[nodiscard]] std::string keys_named(const Invocation& invocation);

// Acquires what the command line names: one permit of --semaphore, every
// --resource at once, or the one --resource.
[[nodiscard]] AcquireResult acquire_named(BlockingClient& client, const Invocation& invocation,
                                          const AcquireOptions& options);

// The same as a Guard, renewed until released (run).
[[nodiscard]] Guard lock_named(BlockingClient& client, const Invocation& invocation,
                               const GuardOptions& options, std::stop_token stop);

// After an acquire of a semaphore failed because nodes record another
// count (their outcomes say permits_differ, with that count in
// holder_ttl_ms): one line naming the count given and the count recorded.
// "" when no node said so.
[[nodiscard]] std::string permits_mismatch(const Invocation& invocation,
                                           const std::vector<NodeOutcome>& nodes);

// The record of a lock held elsewhere (by an earlier `redlock acquire`),
// rebuilt from --resource (all of them) or --semaphore / --permit /
// --permits, and --value, for extend and release. This process does not
// know when the lock was taken, so its local deadline is set to now + ttl:
// the library's local "already expired" check then lets the request
// through, and the nodes' compare-and-set on the value is the real check.
// The fencing tokens are not known here. A permit's record needs a count
// above the permit; release may be given no --permits (releasing a permit
// deletes only that permit's key, the count is not sent), and then the
// record says permit + 1. Extend sends the count (the nodes record it
// where it is missing), so the parser requires --permits for it.
[[nodiscard]] Lock lock_from_value(const Invocation& invocation, Milliseconds ttl);

}  // namespace redlock::cli
