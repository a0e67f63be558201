// What the server fixtures (redis_fixture.hpp, postgres_fixture.hpp) share
// to start a server of their own: a scratch directory, a free loopback
// port, and the child side of fork + exec.
//
// Failures come back as values (an empty path, port 0) with the reason in
// `error`, so that each fixture throws its own error type.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace redlock::test::server_process {

// `what` followed by errno's message.
[[nodiscard]] std::string errno_text(std::string_view what);

// A new directory `base`/`prefix`XXXXXX (mkdtemp); empty with `error` set
// when it cannot be made.
[[nodiscard]] std::filesystem::path make_temp_directory(const std::filesystem::path& base,
                                                        std::string_view prefix,
                                                        std::string& error);

// Removes `directory` and everything in it, ignoring failures (a leaked
// scratch directory is harmless); nothing for an empty path.
void remove_directory(const std::filesystem::path& directory) noexcept;

// A loopback port the kernel had free a moment ago (bind to port 0). It is
// free again before the server binds it, so another process may win it in
// between: the caller detects that from the server's log and retries.
// 0 with `error` set on failure.
[[nodiscard]] std::uint16_t pick_free_port(std::string& error);

// Who the child becomes before exec: unchanged, or uid/gid (with `gid` as
// its only group).
struct ChildIdentity {
  bool drop = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

// Runs in the forked child and never returns: takes `identity`, asks for
// SIGKILL at the parent's death (and exits 126 if `parent` is gone
// already), unblocks every signal, puts `stdin_fd` on stdin and `log_fd`
// on stdout and stderr, closes every other descriptor above 2 (up to
// `highest_fd` where close_range is missing), and execs argv with envp
// (exit 127 when that fails). Async-signal-safe calls only: another thread
// of the test may have held a lock (malloc's, say) at fork.
[[noreturn]] void exec_in_child(char* const* argv, char* const* envp, int stdin_fd, int log_fd,
                                pid_t parent, int highest_fd, ChildIdentity identity) noexcept;

}  // namespace redlock::test::server_process
