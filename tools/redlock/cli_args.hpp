// The command line of `redlock` (docs/cli.md), parsed into values.
//
// Parsing is pure: it never prints, never exits and never touches the
// environment. It returns what to do — an invocation of a subcommand, a
// request for help or for the version — or one line saying what is wrong,
// and main() decides the exit code (64 for a usage error).
//
// Accepted forms: `--flag VALUE` and `--flag=VALUE`; `-h` for `--help`.
// `run` takes its command after `--`, or from its first argument that is not
// an option (so `redlock run --resource r ls -l` works as `... -- ls -l`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "redlock/types.hpp"

namespace redlock::cli {

enum class Subcommand {
  run,
  acquire,
  extend,
  release,
  status,
  inspect,
  campaign,
  leader,
  check_config,
  init
};

// The subcommand as typed on the command line ("check-config", ...).
[[nodiscard]] std::string_view name_of(Subcommand subcommand) noexcept;

// A subcommand with its validated options. Fields a subcommand does not
// accept stay unset.
struct Invocation {
  Subcommand subcommand = Subcommand::status;
  // --config FILE. Unset: $REDLOCK_CONFIG, then ./redlock.toml.
  std::optional<std::string> config_path;
  // --node ADDRESS, repeatable; excludes --config.
  std::vector<std::string> node_addresses;
  // --resource R: the first one given. run, acquire, extend, release and
  // inspect need it or --semaphore; status takes one.
  std::optional<std::string> resource;
  // Every --resource, in the order given (resources[0] == *resource). run,
  // acquire, extend and release take several (distinct, at most
  // kMaxResources): one lock over all of them at once.
  std::vector<std::string> resources;
  // --semaphore S: one permit of semaphore S instead of a lock on
  // resources (run, acquire, extend, release; inspect: every permit of S;
  // excludes --resource).
  std::optional<std::string> semaphore;
  // --permits K (1..Semaphore::kMaxPermits): the semaphore's count. Needed
  // by run, acquire and extend of a semaphore; optional for release and
  // inspect.
  std::optional<std::uint32_t> permits;
  // --permit I (extend, release of a semaphore): the permit held, as
  // `acquire` printed it.
  std::optional<std::uint32_t> permit;
  // --value V: the lock value to extend or release (from `acquire`).
  std::optional<std::string> value;
  // --ttl MS (> 0). Unset: the quorum file's lock.ttl_ms.
  std::optional<Milliseconds> ttl;
  // --wait MS (>= 0; 0 = one attempt). Unset: the configured retries.
  std::optional<Milliseconds> wait;
  // --grace MS (>= 0): run's delay between SIGTERM and SIGKILL after a loss.
  std::optional<Milliseconds> grace;
  // --at-risk-signal SIG (run, campaign): sent to the command's process
  // group when an at-risk episode begins (renewals late, less than half
  // the TTL left). Unset: no warning, only the loss's SIGTERM.
  std::optional<int> at_risk_signal;
  // --fenced: also obtain a fencing token. Unset: the quorum file's `fenced`.
  bool fenced = false;
  // --shared: the read side of the resource's read-write lock (run,
  // acquire; extend and release of a reader need it too). One resource.
  bool shared = false;
  // --fair: wait in line (run, acquire; one resource, exclusive).
  bool fair = false;
  // --name N: the election (campaign, leader; required).
  std::optional<std::string> name;
  // --payload P: what the leader advertises (campaign; at most 4096 bytes).
  std::optional<std::string> payload;
  // --json: status prints JSON instead of a table.
  bool json = false;
  // check-config's FILE argument.
  std::string config_file;
  // run's CMD and ARGS.
  std::vector<std::string> command;
};

// `redlock --help`, `redlock help [SUBCOMMAND]`, `redlock SUBCOMMAND --help`.
struct HelpRequest {
  std::optional<Subcommand> subcommand;  // unset: the overview
};

// `redlock --version`.
struct VersionRequest {};

struct UsageError {
  // The subcommand the error belongs to, when one was recognised.
  std::optional<Subcommand> subcommand;
  // One line, without the "redlock: " prefix. User input in it is quoted
  // with printable() so it stays one line.
  std::string message;
};

using ParseResult = std::variant<Invocation, HelpRequest, VersionRequest, UsageError>;

// Parses the arguments after the program name.
[[nodiscard]] ParseResult parse_arguments(std::span<const std::string_view> arguments);

// The most --resource names one lock takes (the library's limit for a lock
// over several resources, AsyncClient::acquire).
inline constexpr std::size_t kMaxResources = 64;

// Milliseconds above this are refused (the library's durations are 31-bit).
inline constexpr long long kMaxMilliseconds = 2147483647;

// `text` in double quotes, safe on one terminal line: control characters,
// quotes, backslashes and bytes that are not UTF-8 become escapes (\n, \",
// \x1b, ...); valid non-ASCII UTF-8 is kept (text/escape.hpp says exactly
// what is escaped).
[[nodiscard]] std::string printable(std::string_view text);

}  // namespace redlock::cli
