// The command-line tool over TLS and Unix sockets, end to end: check-config
// describes the transport and warns of unsafe ones, status probes TLS and
// Unix-socket nodes, and acquire / release run over them with only the
// quorum file changed.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "cli_test_support.hpp"
#include "test_certificates.hpp"

namespace redlock::test {
namespace {

const TestCertificates& certs() { return TestCertificates::shared(); }

RedisServerOptions tls_and_unix() {
  RedisServerOptions options;
  options.tls = TlsServerOptions{certs().server_cert(), certs().server_key(), certs().ca_file()};
  options.unix_socket = true;
  return options;
}

class TransportCliTest : public ::testing::Test {
 protected:
  TransportCliTest() : cluster_(std::vector<RedisServerOptions>(3, tls_and_unix())) {}

  std::filesystem::path write(const std::string& name, const std::string& text) {
    const std::filesystem::path file = dir_ / name;
    std::ofstream(file) << text;
    return file;
  }

  // Two TLS nodes and one over its Unix socket.
  std::filesystem::path mixed_quorum() {
    return write("mixed.toml", "[tls]\ntls_ca_file = \"" + certs().ca_file() +
                                   "\"\n[[node]]\naddress = \"" + cluster_.node(0).tls_address() +
                                   "\"\n[[node]]\naddress = \"" + cluster_.node(1).tls_address() +
                                   "\"\n[[node]]\naddress = \"" + cluster_.node(2).unix_address() +
                                   "\"\n[lock]\nnode_timeout_ms = 200\nretry_delay_ms = 20\n"
                                   "release_at_majority = false\n");
  }

  RedisCluster cluster_;
  TempDir dir_;
};

TEST_F(TransportCliTest, CheckConfigDescribesEachTransport) {
  const CliResult result = run_cli({"check-config", mixed_quorum().string()});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find(", TLS verified against \"" + certs().ca_file() + "\""),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("  \"" + cluster_.node(2).unix_address() + "\", request timeout"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(result.out.find("warning"), std::string::npos) << result.out;
}

TEST_F(TransportCliTest, StatusProbesTlsAndUnixNodes) {
  const CliResult result = run_cli(cli_command("status", mixed_quorum()));
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("quorum 2 of 3: 3 reachable"), std::string::npos) << result.out;
  EXPECT_TRUE(result.err.empty()) << result.err;
}

TEST_F(TransportCliTest, StatusNamesAFailedVerification) {
  const auto file =
      write("untrusted.toml", "[[node]]\naddress = \"" + cluster_.node(0).tls_address() +
                                  "\"\ntls_ca_file = \"" + certs().other_ca_file() + "\"\n");
  const CliResult result = run_cli(cli_command("status", file));
  EXPECT_EQ(result.exit_code, 75) << describe(result);
  EXPECT_NE(result.err.find("connect: TLS handshake failed: certificate verify failed"),
            std::string::npos)
      << result.err;
}

TEST_F(TransportCliTest, AcquireAndReleaseRunOverTlsAndUnixSockets) {
  const auto file = mixed_quorum();
  const CliResult acquired = run_cli(cli_command("acquire", file, {"--resource", "job"}));
  ASSERT_EQ(acquired.exit_code, 0) << describe(acquired);
  const JsonValue json = parse_output(acquired);
  const std::string value = json["value"].text;
  ASSERT_FALSE(value.empty()) << acquired.out;
  for (std::size_t i = 0; i < cluster_.size(); ++i) {
    EXPECT_EQ(cluster_.node(i).probe().get("redlock:lock:job"), value) << "node " << i;
  }
  const CliResult released =
      run_cli(cli_command("release", file, {"--resource", "job", "--value", value}));
  EXPECT_EQ(released.exit_code, 0) << describe(released);
  for (std::size_t i = 0; i < cluster_.size(); ++i) {
    EXPECT_FALSE(cluster_.node(i).probe().exists("redlock:lock:job")) << "node " << i;
  }
}

TEST_F(TransportCliTest, ClearTextPasswordsAreWarnedOfAndStrictTransportRefusesThem) {
  const std::string remote = "[[node]]\naddress = \"192.0.2.7:6379\"\npassword_env = \"PW\"\n";
  CliOptions options;
  options.environment = {{"PW", "hunter2"}};
  const CliResult warned =
      run_cli({"check-config", write("remote.toml", remote).string()}, options);
  ASSERT_EQ(warned.exit_code, 0) << describe(warned);
  EXPECT_NE(warned.out.find("warning: node \"192.0.2.7:6379\": password sent in clear text"),
            std::string::npos)
      << warned.out;
  EXPECT_EQ(warned.out.find("hunter2"), std::string::npos);

  const CliResult refused = run_cli(
      {"check-config", write("strict.toml", remote + "[lock]\nstrict_transport = true\n").string()},
      options);
  EXPECT_EQ(refused.exit_code, 78) << describe(refused);
  EXPECT_NE(refused.err.find("strict.toml:2:11: node[0].address: lock.strict_transport refuses"),
            std::string::npos)
      << refused.err;
}

}  // namespace
}  // namespace redlock::test
