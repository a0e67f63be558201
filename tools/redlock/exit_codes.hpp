// The exit codes of `redlock` (docs/cli.md; values from sysexits.h).
#pragma once

#include <string_view>
#include <system_error>

namespace redlock::cli {

namespace exit_code {
inline constexpr int success = 0;
// EX_USAGE: the command line is wrong.
inline constexpr int usage = 64;
// EX_UNAVAILABLE: run lost the lock while its command ran.
inline constexpr int lock_lost = 69;
// EX_TEMPFAIL: not acquired / not extended (busy, or no quorum); try later.
inline constexpr int not_acquired = 75;
// EX_SOFTWARE: an internal error (an exception that should not happen).
inline constexpr int internal_error = 70;
// EX_OSERR: the system refused something run needs (signalfd, eventfd).
inline constexpr int os_error = 71;
// EX_CONFIG: the quorum file or --node addresses are invalid.
inline constexpr int config = 78;
// As shells do: run's command cannot be executed / was not found.
inline constexpr int command_not_executable = 126;
inline constexpr int command_not_found = 127;
// A command killed by signal N is reported as 128 + N, as shells do.
inline constexpr int signal_base = 128;
}  // namespace exit_code

// The exit code for a failed library operation: 78 for config_error, 64
// for invalid_argument, 75 for everything else (the lock is not ours, or
// the quorum could not be reached in time).
[[nodiscard]] int exit_code_for(std::error_code error) noexcept;

// The snake_case name of a redlock::errc ("not_acquired", ...), as printed
// in the JSON `error` field; "error" for codes of other categories.
[[nodiscard]] std::string_view error_name(std::error_code error) noexcept;

}  // namespace redlock::cli
