// README's quickstart, as built against the installed package by the
// downstream_find_package test, run against real nodes. tests/CMakeLists.txt
// compiles this file a second time, as shared_library.Quickstart, for the
// program shared_library_quickstart links to the shared library, and a third
// time for deb_packages, which runs it for the program built against the
// installed Debian packages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "redis_fixture.hpp"
#include "test_certificates.hpp"

namespace redlock::test {
namespace {

// Runs the quickstart program with REDLOCK_CONFIG=config; its output, and
// whether it exited 0 (a gtest failure otherwise).
std::string run_quickstart(const std::filesystem::path& config) {
  const std::string command = "REDLOCK_CONFIG='" + config.string() + "' '" QUICKSTART_APP "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return {};
  }
  std::string output;
  std::array<char, 256> buffer{};
  while (fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) {
    output += buffer.data();
  }
  const int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  return output;
}

TEST(Quickstart, TakesAFencedGuardedLockAndReleasesIt) {
  RedisCluster cluster{3};
  const std::string output = run_quickstart(cluster.write_config());
  EXPECT_NE(output.find("holding nightly-report as "), std::string::npos) << output;
  EXPECT_NE(output.find("with fencing token 1\n"), std::string::npos) << output;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_FALSE(cluster.node(i).probe().exists("redlock:lock:nightly-report")) << "node " << i;
  }
}

// The same program against TLS nodes: only the quorum file differs
// (rediss:// addresses and the CA that signed the nodes' certificates).
TEST(Quickstart, RunsOverTlsWithOnlyTheQuorumFileChanged) {
  const TestCertificates& certs = TestCertificates::shared();
  RedisServerOptions options;
  options.tls = TlsServerOptions{certs.server_cert(), certs.server_key(), certs.ca_file()};
  RedisCluster cluster(std::vector<RedisServerOptions>(3, options));
  std::string text = "[tls]\ntls_ca_file = \"" + certs.ca_file() + "\"\n";
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    text += "[[node]]\naddress = \"" + cluster.node(i).tls_address() + "\"\n";
  }
  text += "[lock]\nrelease_at_majority = false\n";
  const std::filesystem::path config =
      std::filesystem::path(cluster.node(0).directory()) / "quickstart-tls.toml";
  std::ofstream(config) << text;
  const std::string output = run_quickstart(config);
  EXPECT_NE(output.find("holding nightly-report as "), std::string::npos) << output;
  EXPECT_NE(output.find("with fencing token 1\n"), std::string::npos) << output;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_FALSE(cluster.node(i).probe().exists("redlock:lock:nightly-report")) << "node " << i;
  }
}

}  // namespace
}  // namespace redlock::test
