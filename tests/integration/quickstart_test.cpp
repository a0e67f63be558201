// README's quickstart, as built against the installed package by the
// downstream_find_package test, run against real nodes. tests/CMakeLists.txt
// compiles this file a second time, as shared_library.Quickstart, for the
// program shared_library_quickstart links to the shared library.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "redis_fixture.hpp"

namespace redlock::test {
namespace {

TEST(Quickstart, TakesAFencedGuardedLockAndReleasesIt) {
  RedisCluster cluster{3};
  const auto config = cluster.write_config();
  const std::string command = "REDLOCK_CONFIG='" + config.string() + "' '" QUICKSTART_APP "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  std::array<char, 256> buffer{};
  while (fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) {
    output += buffer.data();
  }
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;
  EXPECT_NE(output.find("holding nightly-report as "), std::string::npos) << output;
  EXPECT_NE(output.find("with fencing token 1\n"), std::string::npos) << output;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_FALSE(cluster.node(i).probe().exists("redlock:lock:nightly-report")) << "node " << i;
  }
}

}  // namespace
}  // namespace redlock::test
