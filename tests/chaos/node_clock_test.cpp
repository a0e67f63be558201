// The chaos harness's node clock faults against real redis-server
// processes: libfaketime moving a node's wall clock (and with it the
// expiry of its keys), and the emulation that moves only the keys.
#include "node_clock.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "node_supervisor.hpp"
#include "redis_probe.hpp"

namespace redlock::chaos {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kPrefix = "clocktest:";
const std::string kKey = std::string(kPrefix) + "lock:a";

std::optional<FaketimeLibraries> libraries(std::string& error) {
  // The preload is built next to the harness; find_faketime_libraries
  // looks beside the path it is given.
  return find_faketime_libraries(std::filesystem::path(CHAOS_MALLOC_PRELOAD), error);
}

// The node's wall clock in seconds (TIME), or -1.
long long node_time(std::uint16_t port) {
  test::RedisProbe probe(port);
  const test::Reply reply = probe.command({"TIME"});
  if (reply.kind != test::Reply::Kind::array || reply.elements.empty()) return -1;
  return std::stoll(reply.elements[0].text);
}

long long wall_seconds() {
  return std::chrono::duration_cast<seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class FaketimeNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    found_ = libraries(error);
    if (!found_) GTEST_SKIP() << error;
    nodes_ =
        std::make_unique<NodeSupervisor>(NodesSpec{1, NodePersistence::always}, kPrefix, 0, found_);
  }

  std::optional<FaketimeLibraries> found_;
  std::unique_ptr<NodeSupervisor> nodes_;
};

TEST_F(FaketimeNodeTest, NodeStartsWithItsRealClock) {
  const long long node = node_time(nodes_->port(0));
  ASSERT_GT(node, 0);
  EXPECT_LE(std::llabs(node - wall_seconds()), 2);
}

TEST_F(FaketimeNodeTest, JumpMovesTheNodesWallClock) {
  const std::string done = nodes_->clock_jump(0, seconds(3600));
  EXPECT_NE(done.find("libfaketime offset now +3600.000 s"), std::string::npos) << done;
  EXPECT_GE(node_time(nodes_->port(0)) - wall_seconds(), 3598);
}

TEST_F(FaketimeNodeTest, ForwardJumpExpiresKeysEarly) {
  test::RedisProbe probe(nodes_->port(0));
  ASSERT_TRUE(probe.set(kKey, "v", milliseconds(20'000)));
  nodes_->clock_jump(0, seconds(15));
  const long long left = probe.pttl(kKey);
  EXPECT_GT(left, 0);
  EXPECT_LE(left, 5'000);
  nodes_->clock_jump(0, seconds(10));
  EXPECT_FALSE(probe.exists(kKey));
}

TEST_F(FaketimeNodeTest, BackwardJumpLengthensTheTtl) {
  test::RedisProbe probe(nodes_->port(0));
  ASSERT_TRUE(probe.set(kKey, "v", milliseconds(5'000)));
  nodes_->clock_jump(0, seconds(-10));
  EXPECT_GT(probe.pttl(kKey), 10'000);
}

TEST_F(FaketimeNodeTest, RestartedNodeKeepsItsClockOffset) {
  nodes_->clock_jump(0, seconds(3600));
  nodes_->kill(0);
  ASSERT_TRUE(nodes_->down(0));
  EXPECT_NE(nodes_->restart(0).find("restarted"), std::string::npos);
  EXPECT_GE(node_time(nodes_->port(0)) - wall_seconds(), 3598);
}

TEST_F(FaketimeNodeTest, KilledNodeLeavesNoLibfaketimeFiles) {
  const pid_t pid = nodes_->pid(0);
  ASSERT_GT(pid, 0);
  const std::filesystem::path shm = "/dev/shm/faketime_shm_" + std::to_string(pid);
  const std::filesystem::path semaphore = "/dev/shm/sem.faketime_sem_" + std::to_string(pid);
  // The files exist while the node runs, so their absence below means
  // something.
  ASSERT_TRUE(std::filesystem::exists(shm));
  nodes_->kill(0);
  EXPECT_FALSE(std::filesystem::exists(shm));
  EXPECT_FALSE(std::filesystem::exists(semaphore));
}

TEST(EmulatedNodeClockTest, JumpMovesTheKeysNotTheClock) {
  NodeSupervisor nodes(NodesSpec{1, NodePersistence::none}, kPrefix, 0);
  test::RedisProbe probe(nodes.port(0));
  ASSERT_TRUE(probe.set(kKey, "v", milliseconds(20'000)));
  ASSERT_TRUE(probe.set("other:key", "v", milliseconds(20'000)));
  const std::string done = nodes.clock_jump(0, seconds(15));
  EXPECT_NE(done.find("1 keys moved"), std::string::npos) << done;
  EXPECT_LE(probe.pttl(kKey), 5'000);
  EXPECT_GT(probe.pttl("other:key"), 15'000);  // not the library's key: untouched
  EXPECT_LE(std::llabs(node_time(nodes.port(0)) - wall_seconds()), 2);
}

TEST(FaketimeLibrariesTest, MissingLibfaketimeIsNamed) {
  ::setenv("REDLOCK_CHAOS_LIBFAKETIME", "/nonexistent/libfaketime.so.1", 1);
  std::string error;
  const auto found = libraries(error);
  ::unsetenv("REDLOCK_CHAOS_LIBFAKETIME");
  EXPECT_FALSE(found);
  EXPECT_NE(error.find("/nonexistent/libfaketime.so.1"), std::string::npos) << error;
  EXPECT_NE(error.find("libfaketime package"), std::string::npos) << error;
}

TEST(FaketimeLibrariesTest, MissingPreloadIsNamed) {
  std::string error;
  const auto found = find_faketime_libraries("/nonexistent/bin/redlock-chaos", error);
  if (!found && error.find("needs libfaketime") != std::string::npos) {
    GTEST_SKIP() << error;  // libfaketime itself is not installed
  }
  EXPECT_FALSE(found);
  EXPECT_NE(error.find("/nonexistent/lib/redlock/libredlock-chaos-libc-malloc.so"),
            std::string::npos)
      << error;
}

TEST(ClockModeTest, NamesRoundTrip) {
  EXPECT_EQ(clock_mode_from("emulated"), ClockMode::emulated);
  EXPECT_EQ(clock_mode_from("faketime"), ClockMode::faketime);
  EXPECT_FALSE(clock_mode_from("fake"));
  EXPECT_EQ(to_string(ClockMode::faketime), "faketime");
}

}  // namespace
}  // namespace redlock::chaos
