// A real PostgreSQL server for tests: no mocks.
//
// Each PostgresServer makes a fresh cluster with initdb in its own mkdtemp
// directory under $TMPDIR (or /tmp) and runs `postgres` on it as a child
// process, on a free 127.0.0.1 port chosen by the kernel, with its Unix
// socket in that directory too and trust authentication, so any number of
// servers can run side by side. The binaries come from
// $REDLOCK_TEST_PG_BINDIR, else the newest /usr/lib/postgresql/*/bin (the
// Debian layout), else the PATH.
//
// initdb and postgres refuse to run as root. When the test runs as root
// (as CI does), both run as the unprivileged user `nobody`, and the
// directory is handed to that user; otherwise they run as the test's user.
//
// Process contract, as the Redis fixture's (redis_fixture.hpp):
// - Only processes started here are signalled, and only by pid; every child
//   is reaped with waitpid.
// - Children get PR_SET_PDEATHSIG = SIGKILL: create servers on a thread that
//   outlives them (in practice the test's main thread).
// - Every wait is bounded: initdb and the start by startup_timeout, the stop
//   by stop_timeout, after which the server is killed.
// - The destructor stops the server and removes its directory; it never
//   throws. Starting throws PostgresServerError with the tail of the log.
//
// Not thread-safe: use it from the thread that created it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace redlock::test {

struct PostgresServerOptions {
  // Bounds initdb, and then the server's start up to its first answer.
  std::chrono::milliseconds startup_timeout{30000};
  // How long stop() waits after a fast shutdown (SIGINT) before it kills.
  std::chrono::milliseconds stop_timeout{10000};
};

class PostgresServerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class PostgresServer {
 public:
  // Creates the cluster and returns once the server accepts connections.
  // Throws PostgresServerError.
  PostgresServer();
  explicit PostgresServer(PostgresServerOptions options);
  ~PostgresServer();

  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;
  PostgresServer(PostgresServer&&) = delete;
  PostgresServer& operator=(PostgresServer&&) = delete;

  // A fast shutdown (SIGINT to the postmaster: clients are disconnected),
  // then SIGKILL if it has not exited within stop_timeout. The directory is
  // kept until destruction. No effect when not running.
  void stop() noexcept;
  // True while the postmaster exists; reaps it if it exited.
  [[nodiscard]] bool running() noexcept;

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  // The postmaster's process id; -1 once stopped.
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  // The uid the server runs as: the test's own, or nobody's under root.
  [[nodiscard]] uid_t server_uid() const noexcept { return server_uid_; }
  [[nodiscard]] const std::filesystem::path& directory() const noexcept { return directory_; }
  // A libpq connection string for the database `postgres` as the superuser
  // `postgres`, over loopback TCP, without TLS.
  [[nodiscard]] std::string conninfo() const;
  // The last max_bytes of initdb's and the server's output.
  [[nodiscard]] std::string log_tail(std::size_t max_bytes = 2048) const;

  // Runs `sql` on a fresh connection and returns the first column of its
  // first row (nullopt when there is no row or the value is NULL). Throws
  // PostgresServerError when the connection or the statement fails.
  [[nodiscard]] std::optional<std::string> query_value(const std::string& sql) const;

 private:
  enum class StartResult { ready, port_taken };

  void initdb();
  StartResult start_on_current_port();
  // Forks and execs `args` as the server's user, output appended to the log.
  pid_t spawn(std::vector<std::string> args) const;
  // waitpid on `child`; the wait status once it has exited, else nullopt.
  static std::optional<int> reap(pid_t child, int options) noexcept;
  void kill_and_reap() noexcept;

  PostgresServerOptions options_;
  std::filesystem::path bindir_;
  std::filesystem::path directory_;
  uid_t server_uid_ = 0;
  gid_t server_gid_ = 0;
  bool drop_privileges_ = false;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace redlock::test
