#include "redis_fixture.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
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

// Losing the port race twice in a row is already unlikely; five times means
// something else is wrong.
constexpr int kPortAttempts = 5;
// Short enough that readiness costs little more than the server's own
// startup, long enough not to spin.
constexpr milliseconds kPollInterval{1};
// Readiness probes must not hang on a wedged server past the deadline.
constexpr milliseconds kProbeTimeout{250};

// Redis writes this once its listening socket is bound, so it proves that
// the process answering on the port is ours and not a racing neighbour.
constexpr std::string_view kReadyLine = "Ready to accept connections";
constexpr std::string_view kPortTakenLine = "Address already in use";

RedisServerOptions options_with(Persistence persistence) {
  RedisServerOptions options;
  options.persistence = persistence;
  return options;
}

void sleep_briefly() noexcept { std::this_thread::sleep_for(kPollInterval); }

std::filesystem::path make_temp_directory(std::string_view prefix) {
  // Tests do not call setenv, so reading the environment is safe here.
  const char* tmpdir = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe)
  const std::filesystem::path base = (tmpdir != nullptr && *tmpdir != '\0') ? tmpdir : "/tmp";
  std::string error;
  std::filesystem::path made = server_process::make_temp_directory(base, prefix, error);
  if (made.empty()) throw RedisServerError(error);
  return made;
}

std::uint16_t pick_free_port() {
  std::string error;
  const std::uint16_t port = server_process::pick_free_port(error);
  if (port == 0) throw RedisServerError(error);
  return port;
}

std::string redis_server_binary() {
  const char* override_path =
      std::getenv("REDLOCK_TEST_REDIS_SERVER");  // NOLINT(concurrency-mt-unsafe)
  return (override_path != nullptr && *override_path != '\0') ? override_path
                                                              : "/usr/bin/redis-server";
}

std::vector<std::string> command_line(const RedisServerOptions& options, std::uint16_t port,
                                      std::uint16_t tls_port, std::uint16_t cluster_port,
                                      const std::filesystem::path& directory,
                                      const std::filesystem::path& log) {
  std::vector<std::string> args{redis_server_binary(), "--port", std::to_string(port), "--bind",
                                "127.0.0.1", "--dir", directory.string(), "--save", "",
                                "--daemonize", "no", "--protected-mode", "no", "--logfile",
                                log.string(),
                                // The default 5 s delay before a diskless full sync, waiting for
                                // more replicas to batch, would make every replica test 5 s slower.
                                "--repl-diskless-sync-delay", "0"};
  switch (options.persistence) {
    case Persistence::none:
      args.insert(args.end(), {"--appendonly", "no"});
      break;
    case Persistence::aof_everysec:
      args.insert(args.end(), {"--appendonly", "yes", "--appendfsync", "everysec"});
      break;
    case Persistence::aof_always:
      args.insert(args.end(), {"--appendonly", "yes", "--appendfsync", "always"});
      break;
  }
  if (options.master_port) {
    args.insert(args.end(), {"--replicaof", "127.0.0.1", std::to_string(*options.master_port)});
  }
  if (options.tls) {
    args.insert(args.end(), {"--tls-port", std::to_string(tls_port), "--tls-cert-file",
                             options.tls->cert_file, "--tls-key-file", options.tls->key_file,
                             "--tls-ca-cert-file", options.tls->ca_file, "--tls-auth-clients",
                             options.tls->auth_clients ? "yes" : "no"});
  }
  if (options.cluster_node_timeout) {
    args.insert(args.end(), {"--cluster-enabled", "yes", "--cluster-config-file",
                             (directory / "nodes.conf").string(), "--cluster-port",
                             std::to_string(cluster_port), "--cluster-node-timeout",
                             std::to_string(options.cluster_node_timeout->count())});
  }
  if (options.unix_socket) {
    args.insert(args.end(),
                {"--unixsocket", (directory / "redis.sock").string(), "--unixsocketperm", "700"});
  }
  args.insert(args.end(), options.extra_arguments.begin(), options.extra_arguments.end());
  return args;
}

std::uintmax_t file_size_or_zero(const std::filesystem::path& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  return error ? 0 : size;
}

std::string read_file_from(const std::filesystem::path& path, std::uintmax_t offset) {
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
    if (code == 127) return "exit code 127: cannot exec " + redis_server_binary();
    return "exit code " + std::to_string(code);
  }
  if (WIFSIGNALED(*status)) {
    return "killed by signal " + std::to_string(WTERMSIG(*status));
  }
  return "wait status " + std::to_string(*status);
}

// The test's environment with `overrides` ("NAME=value") set on top.
std::vector<std::string> child_environment(const std::vector<std::string>& overrides) {
  auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> result;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view current(*entry);
    const bool replaced =
        std::any_of(overrides.begin(), overrides.end(),
                    [&](const std::string& o) { return name_of(o) == name_of(current); });
    if (!replaced) result.emplace_back(current);
  }
  result.insert(result.end(), overrides.begin(), overrides.end());
  return result;
}

}  // namespace

RedisServer::RedisServer(Persistence persistence) : RedisServer(options_with(persistence)) {}

RedisServer::RedisServer(RedisServerOptions options)
    : options_(std::move(options)), directory_(make_temp_directory("redlock-redis-")) {
  try {
    start_on_free_port();
  } catch (...) {
    remove_directory(directory_);
    throw;
  }
}

RedisServer::~RedisServer() {
  stop();
  remove_directory(directory_);
}

std::string RedisServer::address() const { return "127.0.0.1:" + std::to_string(port_); }

std::string RedisServer::tls_address() const {
  return "rediss://127.0.0.1:" + std::to_string(tls_port_);
}

std::filesystem::path RedisServer::log_path() const { return directory_ / "redis.log"; }

std::string RedisServer::log_tail(std::size_t max_bytes) const {
  const std::uintmax_t size = file_size_or_zero(log_path());
  std::string tail = read_file_from(log_path(), size > max_bytes ? size - max_bytes : 0);
  // Drop a partial first line so the tail starts at a log record.
  if (size > max_bytes) {
    const std::size_t first_newline = tail.find('\n');
    if (first_newline != std::string::npos) tail.erase(0, first_newline + 1);
  }
  return tail;
}

RedisProbe RedisServer::probe(milliseconds timeout) const { return RedisProbe(port_, timeout); }

void RedisServer::start_on_free_port() {
  for (int attempt = 1;; ++attempt) {
    port_ = pick_free_port();
    if (options_.tls) {
      do {
        tls_port_ = pick_free_port();
      } while (tls_port_ == port_);
    }
    if (options_.cluster_node_timeout) {
      do {
        cluster_port_ = pick_free_port();
      } while (cluster_port_ == port_ || cluster_port_ == tls_port_);
    }
    if (start_on_current_port() == StartResult::ready) return;
    if (attempt == kPortAttempts) {
      throw RedisServerError("redis-server lost the race for a free port " +
                             std::to_string(kPortAttempts) + " times; last log:\n" + log_tail());
    }
  }
}

RedisServer::StartResult RedisServer::start_on_current_port() {
  // The log is appended to across restarts; only this start's part counts.
  const std::uintmax_t log_offset = file_size_or_zero(log_path());
  spawn();
  const auto deadline = steady_clock::now() + options_.startup_timeout;
  RedisProbe ping_probe(port_, kProbeTimeout);
  bool announced_ready = false;
  for (;;) {
    const std::optional<int> status = wait_for_child(WNOHANG);
    if (pid_ < 0) {
      if (read_file_from(log_path(), log_offset).find(kPortTakenLine) != std::string::npos) {
        return StartResult::port_taken;
      }
      throw RedisServerError("redis-server on " + address() + " exited during startup (" +
                             describe_wait_status(status) + "); log:\n" + log_tail());
    }
    announced_ready = announced_ready ||
                      read_file_from(log_path(), log_offset).find(kReadyLine) != std::string::npos;
    // Any reply counts, so a node started with --requirepass is ready too.
    if (announced_ready && ping_probe.command({"PING"}).kind != Reply::Kind::io_error) {
      return StartResult::ready;
    }
    if (steady_clock::now() >= deadline) {
      kill_and_reap();
      throw RedisServerError("redis-server on " + address() + " did not answer PING within " +
                             std::to_string(options_.startup_timeout.count()) + " ms; log:\n" +
                             log_tail());
    }
    sleep_briefly();
  }
}

void RedisServer::spawn() {
  std::vector<std::string> args =
      command_line(options_, port_, tls_port_, cluster_port_, directory_, log_path());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  // Built before fork: the child may only make async-signal-safe calls.
  std::vector<std::string> environment = child_environment(options_.environment);
  std::vector<char*> envp;
  envp.reserve(environment.size() + 1);
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);

  // Opened before the log so that, if the test closed stdin, /dev/null lands
  // on descriptor 0 and the child's descriptor shuffle stays trivial.
  const int stdin_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (stdin_fd < 0) throw RedisServerError(errno_text("open /dev/null"));
  const int log_fd = ::open(log_path().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    ::close(stdin_fd);
    throw RedisServerError(errno_text("open " + log_path().string()));
  }
  rlimit fd_limit{};
  const int highest_fd = ::getrlimit(RLIMIT_NOFILE, &fd_limit) == 0 && fd_limit.rlim_cur < 65536
                             ? static_cast<int>(fd_limit.rlim_cur)
                             : 65536;

  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child == 0)
    server_process::exec_in_child(argv.data(), envp.data(), stdin_fd, log_fd, parent, highest_fd,
                                  {});
  const int fork_errno = errno;
  ::close(stdin_fd);
  ::close(log_fd);
  if (child < 0) {
    errno = fork_errno;
    throw RedisServerError(errno_text("fork"));
  }
  pid_ = child;
  paused_ = false;
}

std::optional<int> RedisServer::wait_for_child(int options) noexcept {
  if (pid_ <= 0) return std::nullopt;
  int status = 0;
  pid_t result = 0;
  do {
    result = ::waitpid(pid_, &status, options);
  } while (result == -1 && errno == EINTR);
  if (result == 0) return std::nullopt;  // WNOHANG and nothing changed.
  if (result == -1) {
    // ECHILD: the test reaped it itself or ignores SIGCHLD. Either way the
    // process is gone and its pid must never be signalled again.
    pid_ = -1;
    paused_ = false;
    return std::nullopt;
  }
  if (WIFEXITED(status) || WIFSIGNALED(status)) {
    pid_ = -1;
    paused_ = false;
  }
  return status;
}

void RedisServer::send_signal(int signal_number) const noexcept {
  if (pid_ > 0) ::kill(pid_, signal_number);
}

void RedisServer::kill_and_reap() noexcept {
  send_signal(SIGKILL);  // Works on a stopped process too.
  while (pid_ > 0) wait_for_child(0);
}

bool RedisServer::running() noexcept {
  wait_for_child(WNOHANG);
  return pid_ > 0;
}

void RedisServer::stop() noexcept {
  request_stop();
  await_stop();
}

void RedisServer::request_stop() noexcept {
  if (pid_ <= 0) return;
  // A stopped process keeps SIGTERM pending until it is continued.
  resume();
  send_signal(SIGTERM);
  stop_deadline_ = steady_clock::now() + options_.stop_timeout;
}

void RedisServer::await_stop() noexcept {
  while (running()) {
    if (steady_clock::now() >= stop_deadline_) {
      kill_and_reap();
      return;
    }
    sleep_briefly();
  }
}

void RedisServer::kill9() noexcept { kill_and_reap(); }

void RedisServer::restart() {
  stop();
  if (start_on_current_port() == StartResult::port_taken) {
    throw RedisServerError("cannot restart redis-server: another process took " + address() +
                           "; log:\n" + log_tail());
  }
}

void RedisServer::pause() noexcept {
  if (pid_ <= 0 || paused_) return;
  send_signal(SIGSTOP);
  // SIGSTOP takes effect asynchronously, thread by thread; WUNTRACED reports
  // once the whole process has stopped, so a test never races it.
  for (;;) {
    const std::optional<int> status = wait_for_child(WUNTRACED);
    if (pid_ <= 0) return;
    if (status && WIFSTOPPED(*status)) break;
  }
  paused_ = true;
}

void RedisServer::resume() noexcept {
  if (pid_ <= 0 || !paused_) return;
  send_signal(SIGCONT);
  paused_ = false;
}

bool RedisServer::wait_for_replication_link(milliseconds timeout) {
  if (!options_.master_port) return false;
  RedisProbe replica = probe(kProbeTimeout);
  RedisProbe master(*options_.master_port, kProbeTimeout);
  // The master lists each replica by its listening port.
  const std::string listed_online = "port=" + std::to_string(port_) + ",state=online";
  const auto deadline = steady_clock::now() + timeout;
  for (;;) {
    const std::optional<std::string> replica_info = replica.info("replication");
    const std::optional<std::string> master_info = master.info("replication");
    if (replica_info && master_info && info_field(*replica_info, "master_link_status") == "up" &&
        master_info->find(listed_online) != std::string::npos) {
      return true;
    }
    if (steady_clock::now() >= deadline) return false;
    sleep_briefly();
  }
}

RedisCluster::RedisCluster(std::size_t node_count, Persistence persistence)
    : RedisCluster(node_count, options_with(persistence)) {}

RedisCluster::RedisCluster(std::size_t node_count, const RedisServerOptions& options)
    : RedisCluster(std::vector<RedisServerOptions>(node_count, options)) {}

RedisCluster::RedisCluster(const std::vector<RedisServerOptions>& per_node) {
  nodes_.reserve(per_node.size());
  for (const RedisServerOptions& options : per_node) {
    nodes_.push_back(std::make_unique<RedisServer>(options));
  }
}

RedisCluster::~RedisCluster() {
  // Redis acts on SIGTERM only at its next server tick (100 ms at the
  // default hz), so signalling every node before waiting for any keeps
  // teardown at one tick instead of one tick per node.
  for (const auto& node : nodes_) node->request_stop();
  for (const auto& node : nodes_) node->await_stop();
  nodes_.clear();
  remove_directory(config_directory_);
}

std::vector<std::string> RedisCluster::addresses() const {
  std::vector<std::string> result;
  result.reserve(nodes_.size());
  for (const auto& node : nodes_) result.push_back(node->address());
  return result;
}

std::string RedisCluster::config_toml(std::string_view extra_lock_lines, milliseconds ttl) const {
  std::ostringstream text;
  for (const auto& node : nodes_) {
    text << "[[node]]\naddress = \"" << node->address() << "\"\n";
  }
  text << "\n[lock]\nttl_ms = " << ttl.count() << '\n' << extra_lock_lines;
  if (!extra_lock_lines.empty() && extra_lock_lines.back() != '\n') text << '\n';
  // Tests read the nodes right after a release: it waits for every node
  // unless the test's own lines choose (the default reports at a majority).
  if (extra_lock_lines.find("release_at_majority") == std::string_view::npos) {
    text << "release_at_majority = false\n";
  }
  return text.str();
}

std::filesystem::path RedisCluster::write_config(std::string_view extra_lock_lines,
                                                 milliseconds ttl) {
  if (config_directory_.empty()) {
    config_directory_ = make_temp_directory("redlock-config-");
  }
  std::filesystem::path path =
      config_directory_ / ("redlock-" + std::to_string(++configs_written_) + ".toml");
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << config_toml(extra_lock_lines, ttl);
  file.close();
  if (!file) throw RedisServerError("cannot write " + path.string());
  return path;
}

}  // namespace redlock::test
