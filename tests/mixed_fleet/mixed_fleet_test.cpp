// A fleet that runs node-redlock 4.2.0 and this library side by side on one
// lock, as while migrating from node-redlock: with lock_key = "{resource}"
// both write the lock at the resource's own key with a random value, take
// it with SET NX PX and release it by compare-and-delete, so they exclude
// each other. 4 node-redlock workers (node_redlock_workers.js) and 4 of this
// library (one BlockingClient each) do 50 cycles each of lock -> read a
// counter -> write it one higher -> unlock on the same resource over the
// same three nodes: the counter ends at exactly 400 only if no two critical
// sections of either fleet ever overlapped (a lost update otherwise).
//
// Needs node, and bench/peers' packages installed by the mixed_fleet_npm
// test (npm ci from bench/peers' lockfile): skipped, saying which is
// missing, when node or npm is not installed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "redis_fixture.hpp"
#include "redlock/redlock.hpp"

extern char** environ;

namespace redlock::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

constexpr std::size_t kWorkersPerFleet = 4;
constexpr std::size_t kCycles = 50;
constexpr const char* kResource = "mixed-fleet:job";
constexpr const char* kCounterKey = "mixed-fleet:counter";
constexpr const char* kTag = "mixed-fleet";
// The whole run, both fleets, is bounded by this; the test's own ctest
// TIMEOUT is above it.
constexpr seconds kRunLimit{90};

// The first executable `name` on PATH.
std::optional<fs::path> on_path(const std::string& name) {
  const char* path = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): read-only use
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

std::string read_file(const fs::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A child process with stdout and stderr in files of a scratch directory;
// killed (SIGKILL, by pid) and reaped if still running when destroyed or
// when its wait runs out.
class Child {
 public:
  Child(const std::vector<std::string>& arguments, const std::vector<std::string>& environment) {
    char pattern[] = "/tmp/redlock-mixed-fleet-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::system_error(errno, std::system_category());
    scratch_ = pattern;
    std::vector<char*> argv;
    for (const std::string& each : arguments) argv.push_back(const_cast<char*>(each.c_str()));
    argv.push_back(nullptr);
    std::vector<std::string> env_text;
    for (char** each = environ; *each != nullptr; ++each) env_text.emplace_back(*each);
    env_text.insert(env_text.end(), environment.begin(), environment.end());
    std::vector<char*> envp;
    for (const std::string& each : env_text) envp.push_back(const_cast<char*>(each.c_str()));
    envp.push_back(nullptr);
    const std::string out = (scratch_ / "stdout").string();
    const std::string err = (scratch_ / "stderr").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int rc = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::system_error(rc, std::system_category(), "posix_spawn " + arguments[0]);
    pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      reap();
    }
    if (pidfd_ >= 0) ::close(pidfd_);
    std::error_code ignored;
    fs::remove_all(scratch_, ignored);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  struct Result {
    bool timed_out = false;
    int exit_code = -1;
    std::string out;
    std::string err;
  };

  // Waits until `deadline` for the child to exit (on its pidfd); kills it
  // after that.
  Result wait(steady_clock::time_point deadline) {
    Result result;
    while (pid_ > 0) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      const auto left = std::chrono::ceil<milliseconds>(deadline - steady_clock::now());
      if (left.count() <= 0) {
        result.timed_out = true;
        ::kill(pid_, SIGKILL);
        reap();
        break;
      }
      pollfd exited{pidfd_, POLLIN, 0};
      (void)::poll(&exited, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    }
    result.out = read_file(scratch_ / "stdout");
    result.err = read_file(scratch_ / "stderr");
    return result;
  }

 private:
  void reap() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }

  fs::path scratch_;
  pid_t pid_ = -1;
  int pidfd_ = -1;
};

std::string address(const RedisServer& node) { return "127.0.0.1:" + std::to_string(node.port()); }

// One of this library's workers: its own client, kCycles cycles of lock ->
// GET -> SET one higher -> unlock. Returns what went wrong, empty when
// nothing did.
std::string library_worker(const QuorumConfig& config, std::uint16_t counter_port) {
  BlockingClient client(config);
  RedisProbe counter(counter_port);
  GuardOptions options;
  options.acquire.wait = seconds(60);
  for (std::size_t cycle = 0; cycle < kCycles; ++cycle) {
    Guard guard = client.lock(Resource(kResource), options);
    if (!guard) return "lock: " + guard.error().message();
    const long long value = std::atoll(counter.get(kCounterKey).value_or("0").c_str());
    if (!counter.set(kCounterKey, std::to_string(value + 1))) return "SET: " + counter.last_error();
    if (counter.command({"RPUSH", std::string(kTag) + ":log", "cpp"}).failed()) {
      return "RPUSH: " + counter.last_error();
    }
    const ReleaseResult released = guard.release();
    if (released.error) return "release: " + released.error.message();
  }
  return {};
}

TEST(MixedFleet, NodeRedlockAndThisLibraryExcludeEachOtherOnTheResourcesOwnKey) {
  const std::optional<fs::path> node = on_path("node");
  if (!node) GTEST_SKIP() << "node not found on PATH: the mixed-fleet test needs node and npm";
  const fs::path modules = MIXED_FLEET_NODE_MODULES;
  if (!fs::exists(modules / "redlock" / "package.json")) {
    if (!on_path("npm")) GTEST_SKIP() << "npm not found on PATH: the mixed-fleet test needs it";
    FAIL() << modules << " lacks node-redlock: the mixed_fleet_npm test (npm ci) did not run "
           << "or failed";
  }

  RedisCluster cluster(3);
  RedisServer counter_node;
  RedisProbe counter(counter_node.port());

  std::string toml;
  for (const std::string& each : cluster.addresses()) {
    toml += "[[node]]\naddress = \"" + each + "\"\n";
  }
  // node-redlock's layout; a short retry delay, since node-redlock's
  // releases wake none of this library's waiters.
  toml += "[lock]\nttl_ms = 10000\nlock_key = \"{resource}\"\nretry_delay_ms = 10\n";
  const ConfigResult parsed = parse_config(toml, "mixed-fleet.toml");
  ASSERT_TRUE(parsed.ok()) << parsed.error.to_string();

  // As the rollout guide says: one of this library's clients marks the
  // nodes first. Nodes that hold another library's keys and no marker would
  // be recovered with the max_ttl delay (docs/operations.md).
  {
    BlockingClient first(*parsed.config);
    Guard marked = first.lock(Resource("mixed-fleet:mark"));
    ASSERT_TRUE(marked) << marked.error().message();
    EXPECT_FALSE(marked.release().error);
  }

  std::string nodes;
  for (const std::string& each : cluster.addresses()) nodes += (nodes.empty() ? "" : ",") + each;
  const auto deadline = steady_clock::now() + kRunLimit;
  Child js(
      {node->string(), MIXED_FLEET_WORKERS_JS, "--nodes", nodes, "--counter", address(counter_node),
       "--resource", kResource, "--counter-key", kCounterKey, "--workers",
       std::to_string(kWorkersPerFleet), "--cycles", std::to_string(kCycles), "--tag", kTag},
      {"NODE_PATH=" + modules.string()});

  // Both fleets start together: once every node-redlock worker is
  // connected (its "ready"), they are let go as this library's start.
  for (std::size_t i = 0; i < kWorkersPerFleet; ++i) {
    const Reply ready = counter.command({"BLPOP", std::string(kTag) + ":ready", "30"});
    ASSERT_EQ(ready.kind, Reply::Kind::array)
        << "node-redlock worker " << i << " never got ready: " << js.wait(deadline).err;
  }
  std::vector<std::string> problems(kWorkersPerFleet);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < kWorkersPerFleet; ++i) {
    threads.emplace_back(
        [&, i] { problems[i] = library_worker(*parsed.config, counter_node.port()); });
  }
  for (std::size_t i = 0; i < kWorkersPerFleet; ++i) {
    ASSERT_FALSE(counter.command({"RPUSH", std::string(kTag) + ":go", "go"}).failed());
  }
  for (std::thread& thread : threads) thread.join();
  const Child::Result result = js.wait(deadline);

  for (std::size_t i = 0; i < kWorkersPerFleet; ++i) EXPECT_EQ(problems[i], "") << "worker " << i;
  ASSERT_FALSE(result.timed_out) << "node-redlock workers still running after " << kRunLimit.count()
                                 << " s; stderr: " << result.err;
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("\"cycles\":200"), std::string::npos) << result.out;

  // Every cycle of both fleets, and not one update lost.
  const Reply log = counter.command({"LRANGE", std::string(kTag) + ":log", "0", "-1"});
  ASSERT_EQ(log.kind, Reply::Kind::array);
  std::size_t js_cycles = 0;
  int switches = 0;
  for (std::size_t i = 0; i < log.elements.size(); ++i) {
    if (log.elements[i].text == "js") ++js_cycles;
    if (i > 0 && log.elements[i].text != log.elements[i - 1].text) ++switches;
  }
  EXPECT_EQ(js_cycles, kWorkersPerFleet * kCycles);
  EXPECT_EQ(log.elements.size(), 2U * kWorkersPerFleet * kCycles);
  EXPECT_EQ(counter.get(kCounterKey), std::to_string(2 * kWorkersPerFleet * kCycles));
  // How the two fleets took turns (node-redlock's attempts are in its line).
  std::cout << "node-redlock: " << result.out << "lock changed fleets " << switches << " times in "
            << log.elements.size() << " cycles\n";

  // The lock lived at the resource's own key, and is gone.
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    RedisProbe probe(cluster.node(i).port());
    EXPECT_FALSE(probe.exists(kResource)) << "node " << i;
    EXPECT_TRUE(probe.keys("redlock:lock:*").empty()) << "node " << i;
  }
}

}  // namespace
}  // namespace redlock::test
