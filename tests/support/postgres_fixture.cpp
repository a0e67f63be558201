#include "postgres_fixture.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>

#include "server_process.hpp"

namespace redlock::test {
namespace {

using server_process::errno_text;
using server_process::remove_directory;

using std::chrono::milliseconds;
using std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr int kPortAttempts = 5;
constexpr milliseconds kPollInterval{10};
// After a fast shutdown that did not finish, a last short wait for the kill.
constexpr milliseconds kKillWait{5000};
// The postmaster writes this once it listens; it proves the process that
// answers on the port is ours, not a neighbour that won the port race.
constexpr std::string_view kReadyLine = "database system is ready to accept connections";
constexpr std::string_view kPortTakenLine = "Address already in use";
// The superuser initdb creates (-U), whatever the operating-system user.
constexpr std::string_view kSuperuser = "postgres";

void sleep_briefly() noexcept { std::this_thread::sleep_for(kPollInterval); }

// Whether a user other than the owner may walk through every directory
// from `path` up to the root, as `nobody` must to reach the cluster.
bool others_can_traverse(const fs::path& path) {
  for (fs::path at = fs::absolute(path); !at.empty(); at = at.parent_path()) {
    struct stat info {};
    if (::stat(at.c_str(), &info) != 0 || (info.st_mode & S_IXOTH) == 0) return false;
    if (at == at.root_path()) break;
  }
  return true;
}

fs::path temp_base(bool for_another_user) {
  // Tests do not call setenv, so reading the environment is safe here.
  const char* tmpdir = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe)
  const fs::path base = (tmpdir != nullptr && *tmpdir != '\0') ? tmpdir : "/tmp";
  // A private $TMPDIR (root's 0700 home, say) would lock `nobody` out.
  if (for_another_user && !others_can_traverse(base)) return "/tmp";
  return base;
}

fs::path make_temp_directory(const fs::path& base) {
  std::string error;
  fs::path made = server_process::make_temp_directory(base, "redlock-postgres-", error);
  if (made.empty()) throw PostgresServerError(error);
  return made;
}

std::uint16_t pick_free_port() {
  std::string error;
  const std::uint16_t port = server_process::pick_free_port(error);
  if (port == 0) throw PostgresServerError(error);
  return port;
}

// The directory of initdb and postgres: $REDLOCK_TEST_PG_BINDIR, else the
// newest Debian /usr/lib/postgresql/<major>/bin, else empty (the PATH).
fs::path postgres_bindir() {
  const char* override_dir =
      std::getenv("REDLOCK_TEST_PG_BINDIR");  // NOLINT(concurrency-mt-unsafe)
  if (override_dir != nullptr && *override_dir != '\0') return override_dir;
  fs::path newest;
  long newest_major = -1;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator("/usr/lib/postgresql", error)) {
    const std::string name = entry.path().filename().string();
    char* end = nullptr;
    const long major = std::strtol(name.c_str(), &end, 10);
    if (end == name.c_str() || *end != '\0') continue;
    if (major > newest_major && fs::exists(entry.path() / "bin" / "initdb", error)) {
      newest_major = major;
      newest = entry.path() / "bin";
    }
  }
  return newest;
}

// The program's path in `bindir`, or a PATH lookup of its bare name.
std::string program(const fs::path& bindir, const std::string& name) {
  if (!bindir.empty()) return (bindir / name).string();
  const char* path = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe)
  std::string_view rest = path != nullptr ? path : "/usr/bin:/bin";
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const fs::path candidate = fs::path(rest.substr(0, colon)) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
  }
  throw PostgresServerError(name + " not found: install postgresql or set REDLOCK_TEST_PG_BINDIR");
}

std::uintmax_t file_size_or_zero(const fs::path& path) {
  std::error_code error;
  const std::uintmax_t size = fs::file_size(path, error);
  return error ? 0 : size;
}

std::string read_file_from(const fs::path& path, std::uintmax_t offset) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return {};
  file.seekg(static_cast<std::streamoff>(offset));
  return {std::istreambuf_iterator<char>(file), {}};
}

std::string describe_wait_status(std::optional<int> status) {
  if (!status) return "reaped elsewhere";
  if (WIFEXITED(*status)) {
    const int code = WEXITSTATUS(*status);
    if (code == 126) return "exit code 126: child setup failed before exec";
    if (code == 127) return "exit code 127: cannot exec";
    return "exit code " + std::to_string(code);
  }
  if (WIFSIGNALED(*status)) return "killed by signal " + std::to_string(WTERMSIG(*status));
  return "wait status " + std::to_string(*status);
}

struct ConnectionCloser {
  void operator()(PGconn* connection) const noexcept { PQfinish(connection); }
};
struct ResultClearer {
  void operator()(PGresult* result) const noexcept { PQclear(result); }
};

}  // namespace

PostgresServer::PostgresServer() : PostgresServer(PostgresServerOptions{}) {}

PostgresServer::PostgresServer(PostgresServerOptions options)
    : options_(options), bindir_(postgres_bindir()) {
  drop_privileges_ = ::geteuid() == 0;
  server_uid_ = ::geteuid();
  server_gid_ = ::getegid();
  if (drop_privileges_) {
    // getpwnam is not thread-safe; fixtures are made on the test's thread.
    const passwd* nobody = ::getpwnam("nobody");  // NOLINT(concurrency-mt-unsafe)
    if (nobody == nullptr) {
      throw PostgresServerError("running as root, and there is no user nobody to run postgres as");
    }
    server_uid_ = nobody->pw_uid;
    server_gid_ = nobody->pw_gid;
  }
  directory_ = make_temp_directory(temp_base(drop_privileges_));
  try {
    if (drop_privileges_ && ::chown(directory_.c_str(), server_uid_, server_gid_) != 0) {
      throw PostgresServerError(errno_text("chown " + directory_.string()));
    }
    initdb();
    for (int attempt = 1;; ++attempt) {
      port_ = pick_free_port();
      if (start_on_current_port() == StartResult::ready) break;
      if (attempt == kPortAttempts) {
        throw PostgresServerError("postgres lost the race for a free port " +
                                  std::to_string(kPortAttempts) + " times; log:\n" + log_tail());
      }
    }
  } catch (...) {
    remove_directory(directory_);
    throw;
  }
}

PostgresServer::~PostgresServer() {
  stop();
  remove_directory(directory_);
}

std::string PostgresServer::conninfo() const {
  // No TLS and no GSSAPI: loopback only, and neither is set up here.
  return "host=127.0.0.1 port=" + std::to_string(port_) +
         " dbname=postgres user=" + std::string(kSuperuser) +
         " sslmode=disable gssencmode=disable connect_timeout=10";
}

std::string PostgresServer::log_tail(std::size_t max_bytes) const {
  const fs::path log = directory_ / "postgres.log";
  const std::uintmax_t size = file_size_or_zero(log);
  return read_file_from(log, size > max_bytes ? size - max_bytes : 0);
}

void PostgresServer::initdb() {
  const pid_t child = spawn({program(bindir_, "initdb"), "--pgdata", (directory_ / "data").string(),
                             "--username", std::string(kSuperuser), "--auth", "trust",
                             "--no-locale", "--encoding", "UTF8", "--no-sync"});
  const auto deadline = steady_clock::now() + options_.startup_timeout;
  for (;;) {
    const std::optional<int> status = reap(child, WNOHANG);
    if (status) {
      if (WIFEXITED(*status) && WEXITSTATUS(*status) == 0) return;
      throw PostgresServerError("initdb failed (" + describe_wait_status(status) + "); log:\n" +
                                log_tail());
    }
    if (steady_clock::now() >= deadline) {
      ::kill(child, SIGKILL);
      reap(child, 0);
      throw PostgresServerError("initdb did not finish within " +
                                std::to_string(options_.startup_timeout.count()) + " ms; log:\n" +
                                log_tail());
    }
    sleep_briefly();
  }
}

PostgresServer::StartResult PostgresServer::start_on_current_port() {
  const fs::path log = directory_ / "postgres.log";
  const std::uintmax_t log_offset = file_size_or_zero(log);
  // fsync off: the cluster is thrown away, and nothing here survives a crash.
  pid_ = spawn({program(bindir_, "postgres"), "-D", (directory_ / "data").string(), "-p",
                std::to_string(port_), "-k", directory_.string(), "-c",
                "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off"});
  const auto deadline = steady_clock::now() + options_.startup_timeout;
  const std::string connection = conninfo();
  for (;;) {
    const std::optional<int> status = reap(pid_, WNOHANG);
    if (status) {
      pid_ = -1;
      if (read_file_from(log, log_offset).find(kPortTakenLine) != std::string::npos) {
        return StartResult::port_taken;
      }
      throw PostgresServerError("postgres on port " + std::to_string(port_) +
                                " exited during startup (" + describe_wait_status(status) +
                                "); log:\n" + log_tail());
    }
    if (read_file_from(log, log_offset).find(kReadyLine) != std::string::npos &&
        PQping(connection.c_str()) == PQPING_OK) {
      return StartResult::ready;
    }
    if (steady_clock::now() >= deadline) {
      kill_and_reap();
      throw PostgresServerError(
          "postgres on port " + std::to_string(port_) + " did not accept connections within " +
          std::to_string(options_.startup_timeout.count()) + " ms; log:\n" + log_tail());
    }
    sleep_briefly();
  }
}

pid_t PostgresServer::spawn(std::vector<std::string> args) const {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  const int stdin_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (stdin_fd < 0) throw PostgresServerError(errno_text("open /dev/null"));
  const fs::path log = directory_ / "postgres.log";
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    ::close(stdin_fd);
    throw PostgresServerError(errno_text("open " + log.string()));
  }
  rlimit fd_limit{};
  const int highest_fd = ::getrlimit(RLIMIT_NOFILE, &fd_limit) == 0 && fd_limit.rlim_cur < 65536
                             ? static_cast<int>(fd_limit.rlim_cur)
                             : 65536;
  const server_process::ChildIdentity identity{drop_privileges_, server_uid_, server_gid_};
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child == 0) {
    server_process::exec_in_child(argv.data(), environ, stdin_fd, log_fd, parent, highest_fd,
                                  identity);
  }
  const int fork_errno = errno;
  ::close(stdin_fd);
  ::close(log_fd);
  if (child < 0) {
    errno = fork_errno;
    throw PostgresServerError(errno_text("fork"));
  }
  return child;
}

std::optional<int> PostgresServer::reap(pid_t child, int options) noexcept {
  int status = 0;
  pid_t result = 0;
  do {
    result = ::waitpid(child, &status, options);
  } while (result == -1 && errno == EINTR);
  if (result == 0) return std::nullopt;  // WNOHANG and still running
  if (result == -1) return -1;           // ECHILD: gone; never signal it again
  return status;
}

void PostgresServer::kill_and_reap() noexcept {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  reap(pid_, 0);
  pid_ = -1;
}

bool PostgresServer::running() noexcept {
  if (pid_ > 0 && reap(pid_, WNOHANG)) pid_ = -1;
  return pid_ > 0;
}

void PostgresServer::stop() noexcept {
  if (!running()) return;
  ::kill(pid_, SIGINT);  // fast shutdown: ends sessions, checkpoints, exits
  const auto deadline = steady_clock::now() + options_.stop_timeout;
  while (running()) {
    if (steady_clock::now() >= deadline) {
      kill_and_reap();
      return;
    }
    sleep_briefly();
  }
}

std::optional<std::string> PostgresServer::query_value(const std::string& sql) const {
  const std::unique_ptr<PGconn, ConnectionCloser> connection(PQconnectdb(conninfo().c_str()));
  if (PQstatus(connection.get()) != CONNECTION_OK) {
    throw PostgresServerError("cannot connect to postgres on port " + std::to_string(port_) + ": " +
                              PQerrorMessage(connection.get()));
  }
  const std::unique_ptr<PGresult, ResultClearer> result(PQexec(connection.get(), sql.c_str()));
  const ExecStatusType status = PQresultStatus(result.get());
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    throw PostgresServerError("query failed: " + sql + ": " + PQresultErrorMessage(result.get()));
  }
  if (PQntuples(result.get()) == 0 || PQnfields(result.get()) == 0 ||
      PQgetisnull(result.get(), 0, 0) != 0) {
    return std::nullopt;
  }
  return std::string(PQgetvalue(result.get(), 0, 0));
}

}  // namespace redlock::test
