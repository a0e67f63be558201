// Tests of the integration fixture itself: real redis-server processes.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "redis_fixture.hpp"
#include "redis_probe.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

// A zombie counts as gone: the init process of a container may never reap
// an orphan that the kernel already killed.
bool process_is_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string contents((std::istreambuf_iterator<char>(stat)), {});
  const std::size_t after_name = contents.rfind(')');
  return after_name != std::string::npos && after_name + 2 < contents.size() &&
         contents[after_name + 2] == 'Z';
}

// Bounded wait for something that happens asynchronously (a kernel signal).
bool eventually(const auto& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

TEST(RedisClusterTest, EveryNodeAnswersPingOnItsOwnPort) {
  RedisCluster cluster(3);
  std::set<std::uint16_t> ports;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_TRUE(cluster.node(i).probe().ping()) << cluster.node(i).address();
    ports.insert(cluster.node(i).port());
  }
  EXPECT_EQ(ports.size(), 3U);
}

TEST(RedisClusterTest, StoppedNodeRestartsOnTheSamePort) {
  RedisCluster cluster(3);
  RedisServer& node = cluster.node(1);
  const std::uint16_t port = node.port();
  node.stop();
  EXPECT_FALSE(node.running());
  EXPECT_FALSE(node.probe().ping());
  EXPECT_TRUE(cluster.node(0).probe().ping());
  node.restart();
  EXPECT_EQ(node.port(), port);
  EXPECT_TRUE(node.probe().ping());
}

TEST(RedisClusterTest, PausedNodeAnswersOnlyAfterResume) {
  RedisCluster cluster(3);
  RedisServer& node = cluster.node(2);
  node.pause();
  EXPECT_TRUE(node.paused());
  RedisProbe probe = node.probe(milliseconds(100));
  EXPECT_FALSE(probe.ping());
  EXPECT_FALSE(probe.last_error().empty());
  node.resume();
  EXPECT_TRUE(probe.ping());
}

TEST(RedisClusterTest, TeardownLeavesNoProcessAndNoDirectory) {
  std::vector<pid_t> pids;
  std::vector<std::filesystem::path> directories;
  {
    RedisCluster cluster(3);
    cluster.node(0).pause();  // Teardown must cope with a stopped process.
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      pids.push_back(cluster.node(i).pid());
      directories.push_back(cluster.node(i).directory());
    }
  }
  for (const pid_t pid : pids) EXPECT_TRUE(process_is_gone(pid)) << pid;
  for (const auto& directory : directories) {
    EXPECT_FALSE(std::filesystem::exists(directory)) << directory;
  }
}

TEST(RedisServerTest, Kill9LeavesNoProcess) {
  RedisServer server;
  const pid_t pid = server.pid();
  server.kill9();
  EXPECT_FALSE(server.running());
  EXPECT_EQ(server.pid(), -1);
  EXPECT_TRUE(process_is_gone(pid));
}

TEST(RedisServerTest, CrashedTestBinaryLeavesNoServer) {
  int channel[2];
  ASSERT_EQ(::pipe(channel), 0);
  const pid_t test_process = ::fork();
  ASSERT_GE(test_process, 0);
  if (test_process == 0) {
    // Stands in for a test binary that crashes while it owns a server.
    ::close(channel[0]);
    try {
      RedisServer server;
      const std::string report =
          std::to_string(server.pid()) + " " + server.directory().string() + "\n";
      if (::write(channel[1], report.data(), report.size()) < 0) ::_exit(1);
      ::raise(SIGKILL);
    } catch (...) {
    }
    ::_exit(1);
  }
  ::close(channel[1]);
  std::string report;
  char buffer[256];
  for (ssize_t n; (n = ::read(channel[0], buffer, sizeof buffer)) > 0;) {
    report.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(channel[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(test_process, &status, 0), test_process);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the stand-in failed to start a server";

  std::istringstream fields(report);
  pid_t server_pid = -1;
  std::string directory;
  fields >> server_pid >> directory;
  ASSERT_GT(server_pid, 0) << report;
  EXPECT_TRUE(eventually([&] { return process_is_gone(server_pid); }));
  std::filesystem::remove_all(directory);  // The crash skipped the cleanup.
}

TEST(RedisServerTest, RestartFailsWhenAnotherProcessTookThePort) {
  RedisServer server;
  server.stop();
  const int squatter = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(squatter, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(server.port());
  ASSERT_EQ(::bind(squatter, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(squatter, 1), 0);
  EXPECT_THROW(server.restart(), RedisServerError);
  ::close(squatter);
  server.restart();
  EXPECT_TRUE(server.probe().ping());
}

TEST(RedisServerTest, StartupFailureReportsTheLog) {
  try {
    RedisServerOptions options;
    options.extra_arguments = {"--no-such-directive", "1"};
    RedisServer server(options);
    FAIL() << "started with a bad directive";
  } catch (const RedisServerError& error) {
    EXPECT_NE(std::string(error.what()).find("no-such-directive"), std::string::npos)
        << error.what();
  }
}

// Redis overwrites its own environment block with its process title, so
// /proc/<pid>/environ cannot tell what it was started with; a wrapper that
// records its environment and then execs redis-server can.
TEST(RedisServerTest, EnvironmentEntriesReachTheServerAndReplaceInheritedOnes) {
  const std::filesystem::path directory = std::filesystem::temp_directory_path() /
                                          ("redlock-fixture-env-" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  const std::filesystem::path wrapper = directory / "redis-server";
  const std::filesystem::path dump = directory / "environment";
  {
    std::ofstream script(wrapper);
    script << "#!/bin/sh\nenv > '" << dump.string() << "'\nexec /usr/bin/redis-server \"$@\"\n";
  }
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  const char* previous = std::getenv("REDLOCK_TEST_REDIS_SERVER");
  const std::string saved = previous != nullptr ? previous : "";
  ASSERT_EQ(::setenv("REDLOCK_TEST_REDIS_SERVER", wrapper.c_str(), 1), 0);
  ASSERT_EQ(::setenv("REDLOCK_FIXTURE_INHERITED", "test", 1), 0);
  std::vector<std::string> entries;
  {
    RedisServerOptions options;
    options.environment = {"REDLOCK_FIXTURE_ADDED=1", "REDLOCK_FIXTURE_INHERITED=server"};
    RedisServer server(options);
    std::ifstream file(dump);
    for (std::string line; std::getline(file, line);) entries.push_back(line);
  }
  ::unsetenv("REDLOCK_FIXTURE_INHERITED");
  if (saved.empty()) {
    ::unsetenv("REDLOCK_TEST_REDIS_SERVER");
  } else {
    ::setenv("REDLOCK_TEST_REDIS_SERVER", saved.c_str(), 1);
  }
  std::filesystem::remove_all(directory);
  ASSERT_FALSE(entries.empty());
  auto count = [&](const std::string& entry) {
    return std::count(entries.begin(), entries.end(), entry);
  };
  EXPECT_EQ(count("REDLOCK_FIXTURE_ADDED=1"), 1);
  EXPECT_EQ(count("REDLOCK_FIXTURE_INHERITED=server"), 1);
  EXPECT_EQ(count("REDLOCK_FIXTURE_INHERITED=test"), 0);
  // The rest of the test's environment is inherited.
  EXPECT_EQ(count("PATH=" + std::string(std::getenv("PATH"))), 1);
}

TEST(RedisServerTest, WithoutPersistenceRestartLosesKeys) {
  RedisServer server;
  ASSERT_TRUE(server.probe().set("k", "v"));
  server.restart();
  EXPECT_FALSE(server.probe().exists("k"));
}

TEST(RedisServerTest, AofAlwaysKeepsKeysAcrossKill9) {
  RedisServer server(Persistence::aof_always);
  ASSERT_TRUE(server.probe().set("k", "v"));
  server.kill9();
  server.restart();
  EXPECT_EQ(server.probe().get("k"), "v");
}

TEST(RedisServerTest, AofEverysecKeepsKeysAcrossStop) {
  RedisServer server(Persistence::aof_everysec);
  ASSERT_TRUE(server.probe().set("k", "v"));
  server.restart();  // A graceful stop flushes the AOF.
  EXPECT_EQ(server.probe().get("k"), "v");
}

TEST(RedisServerTest, ReplicaReceivesWritesOnceLinked) {
  RedisServer master;
  RedisServerOptions options;
  options.master_port = master.port();
  RedisServer replica(options);
  ASSERT_TRUE(replica.wait_for_replication_link());
  // Longer than WAIT's own 5 s bound, so WAIT decides and not the probe.
  RedisProbe master_probe = master.probe(std::chrono::seconds(10));
  ASSERT_TRUE(master_probe.set("k", "v"));
  const Reply acknowledged = master_probe.command({"WAIT", "1", "5000"});
  ASSERT_EQ(acknowledged.integer, 1) << acknowledged.text;
  EXPECT_EQ(replica.probe().get("k"), "v");
}

TEST(RedisServerTest, MasterHasNoReplicationLinkToWaitFor) {
  RedisServer master;
  EXPECT_FALSE(master.wait_for_replication_link(milliseconds(10)));
}

TEST(RedisServerTest, NoSnapshotIsConfigured) {
  RedisServer server;
  const Reply save = server.probe().command({"CONFIG", "GET", "save"});
  ASSERT_EQ(save.elements.size(), 2U);
  EXPECT_EQ(save.elements[1].text, "");
}

TEST(RedisProbeTest, ReadsWhatWasWritten) {
  RedisServer server;
  RedisProbe probe = server.probe();
  ASSERT_TRUE(probe.set("lock:a", "owner", milliseconds(60000)));
  ASSERT_TRUE(probe.set("plain", "x"));
  EXPECT_EQ(probe.get("lock:a"), "owner");
  EXPECT_EQ(probe.get("missing"), std::nullopt);
  EXPECT_TRUE(probe.exists("lock:a"));
  EXPECT_FALSE(probe.exists("missing"));
  const long long ttl = probe.pttl("lock:a");
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 60000);
  EXPECT_EQ(probe.pttl("plain"), -1);
  EXPECT_EQ(probe.pttl("missing"), -2);
  EXPECT_EQ(probe.keys("lock:*"), std::vector<std::string>{"lock:a"});
}

TEST(RedisProbeTest, ReportsRedisErrorsAsValues) {
  RedisServer server;
  RedisProbe probe = server.probe();
  const Reply reply = probe.command({"NO-SUCH-COMMAND"});
  EXPECT_EQ(reply.kind, Reply::Kind::error);
  EXPECT_TRUE(reply.failed());
  EXPECT_EQ(probe.last_error(), reply.text);
}

TEST(RedisProbeTest, ReportsUnreachableNodeAsValues) {
  RedisServer server;
  RedisProbe probe = server.probe();
  server.stop();
  EXPECT_EQ(probe.command({"PING"}).kind, Reply::Kind::io_error);
  EXPECT_EQ(probe.pttl("k"), RedisProbe::kError);
  EXPECT_EQ(probe.get("k"), std::nullopt);
  EXPECT_TRUE(probe.keys("*").empty());
  EXPECT_NE(probe.last_error().find(server.address()), std::string::npos) << probe.last_error();
}

TEST(RedisProbeTest, ReconnectsAfterRestart) {
  RedisServer server;
  RedisProbe probe = server.probe();
  ASSERT_TRUE(probe.ping());
  server.restart();
  // The first call may only learn that the old connection is dead.
  EXPECT_TRUE(probe.ping() || probe.ping());
}

TEST(RedisProbeTest, SurvivesConnectionClosedMidWrite) {
  RedisServer server;
  RedisProbe victim = server.probe();
  ASSERT_TRUE(victim.ping());
  ASSERT_EQ(server.probe().command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}).integer,
            1);
  // Twice the largest loopback send buffer (tcp_wmem), so it needs several
  // write(2) calls, the later ones after the peer's reset: without SIGPIPE
  // suppression this kills the test binary.
  EXPECT_FALSE(victim.set("big", std::string(8 << 20, 'x')));
  EXPECT_TRUE(victim.ping() || victim.ping());
}

TEST(RedisClusterTest, ConfigTomlNamesEveryNode) {
  RedisCluster cluster(2);
  const std::string expected = "[[node]]\naddress = \"" + cluster.node(0).address() +
                               "\"\n[[node]]\naddress = \"" + cluster.node(1).address() +
                               "\"\n\n[lock]\nttl_ms = 2500\nretry_count = 0\n";
  EXPECT_EQ(cluster.config_toml("retry_count = 0", milliseconds(2500)),
            expected + "release_at_majority = false\n");
  EXPECT_EQ(cluster.config_toml("release_at_majority = true", milliseconds(2500)),
            "[[node]]\naddress = \"" + cluster.node(0).address() + "\"\n[[node]]\naddress = \"" +
                cluster.node(1).address() +
                "\"\n\n[lock]\nttl_ms = 2500\nrelease_at_majority = true\n");
  EXPECT_EQ(cluster.addresses(),
            (std::vector<std::string>{cluster.node(0).address(), cluster.node(1).address()}));
}

TEST(RedisClusterTest, WriteConfigWritesTheTomlToAFile) {
  std::filesystem::path path;
  {
    RedisCluster cluster(1);
    path = cluster.write_config();
    std::ifstream file(path);
    const std::string written((std::istreambuf_iterator<char>(file)), {});
    EXPECT_EQ(written, cluster.config_toml());
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace redlock::test
