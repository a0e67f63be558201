// The quorum file's TLS and Unix-socket settings: rediss:// and unix://
// addresses, the [tls] table's defaults and a node's own keys, the files
// they name (checked at load, with the key's position), and the transport
// warnings and lock.strict_transport. No network.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "redlock/config.hpp"

// NOLINTBEGIN(concurrency-mt-unsafe)

namespace redlock {
namespace {

constexpr const char* kTlsSource = "redlock.toml";

class TlsConfigTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "redlock-tls-XXXXXX");
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    ca_ = write("ca.pem");
    cert_ = write("client.pem");
    key_ = write("client.key");
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string write(const std::string& name) {
    const std::filesystem::path file = dir_ / name;
    std::ofstream(file) << "not parsed at load time\n";
    return file.string();
  }
  static ConfigResult parse(const std::string& text) { return parse_config(text, kTlsSource); }
  static QuorumConfig parse_ok(const std::string& text) {
    ConfigResult result = parse(text);
    EXPECT_TRUE(result.ok()) << result.error.to_string();
    return result.ok() ? *result.config : QuorumConfig{};
  }

  std::filesystem::path dir_;
  std::string ca_;
  std::string cert_;
  std::string key_;
};

TEST_F(TlsConfigTest, RedissTurnsTlsOnWithVerificationByDefault) {
  const QuorumConfig config = parse_ok("[[node]]\naddress = \"rediss://h:6380\"\n");
  const NodeConfig& node = config.nodes.at(0);
  EXPECT_TRUE(node.tls.enabled);
  EXPECT_TRUE(node.tls.verify);
  EXPECT_TRUE(node.tls.ca_file.empty());  // the system store
  EXPECT_EQ(node.host, "h");
  EXPECT_EQ(node.port, 6380);
}

TEST_F(TlsConfigTest, TheTlsTableGivesDefaultsThatANodeOverrides) {
  const QuorumConfig config = parse_ok("[tls]\ntls = true\ntls_ca_file = \"" + ca_ +
                                       "\"\ntls_server_name = \"redis.internal\"\n"
                                       "[[node]]\naddress = \"10.0.0.1:6380\"\n"
                                       "[[node]]\naddress = \"10.0.0.2:6380\"\n"
                                       "tls_server_name = \"other.internal\"\n"
                                       "tls_cert_file = \"" +
                                       cert_ + "\"\ntls_key_file = \"" + key_ +
                                       "\"\n"
                                       "[[node]]\naddress = \"10.0.0.3:6379\"\ntls = false\n");
  ASSERT_EQ(config.nodes.size(), 3U);
  EXPECT_TRUE(config.nodes[0].tls.enabled);
  EXPECT_EQ(config.nodes[0].tls.ca_file, ca_);
  EXPECT_EQ(config.nodes[0].tls.server_name, "redis.internal");
  EXPECT_TRUE(config.nodes[0].tls.cert_file.empty());
  EXPECT_EQ(config.nodes[1].tls.server_name, "other.internal");
  EXPECT_EQ(config.nodes[1].tls.cert_file, cert_);
  EXPECT_EQ(config.nodes[1].tls.key_file, key_);
  EXPECT_EQ(config.nodes[1].tls.ca_file, ca_);
  EXPECT_FALSE(config.nodes[2].tls.enabled);
}

TEST_F(TlsConfigTest, AMissingFileIsAnErrorAtItsKey) {
  const ConfigResult result = parse("[[node]]\naddress = \"rediss://h\"\ntls_ca_file = \"" +
                                    (dir_ / "absent.pem").string() + "\"\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.line, 3U);
  EXPECT_EQ(result.error.column, 15U);
  EXPECT_NE(result.error.message.find("node[0].tls_ca_file: cannot use "), std::string::npos)
      << result.error.message;
  EXPECT_NE(result.error.message.find("No such file or directory"), std::string::npos);
}

TEST_F(TlsConfigTest, AMissingFileInTheTlsTableIsAnErrorThere) {
  const ConfigResult result =
      parse("[tls]\ntls = true\ntls_cert_file = \"" + (dir_ / "absent.pem").string() +
            "\"\ntls_key_file = \"" + key_ + "\"\n[[node]]\naddress = \"h:6380\"\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.line, 3U);
  EXPECT_EQ(result.error.message.rfind("tls.tls_cert_file: cannot use ", 0), 0U)
      << result.error.message;
}

TEST_F(TlsConfigTest, AFileThatCannotBeReadIsAnError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  ::chmod(key_.c_str(), 0);
  const ConfigResult result = parse("[[node]]\naddress = \"rediss://h\"\ntls_cert_file = \"" +
                                    cert_ + "\"\ntls_key_file = \"" + key_ + "\"\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.line, 4U);
  EXPECT_EQ(result.error.message.rfind("node[0].tls_key_file: cannot read ", 0), 0U)
      << result.error.message;
}

TEST_F(TlsConfigTest, ADirectoryIsNoFileAndAFileNoDirectory) {
  ConfigResult result =
      parse("[[node]]\naddress = \"rediss://h\"\ntls_ca_file = \"" + dir_.string() + "\"\n");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error.message.find("expected a file"), std::string::npos);
  result = parse("[[node]]\naddress = \"rediss://h\"\ntls_ca_dir = \"" + ca_ + "\"\n");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error.message.find("expected a directory"), std::string::npos);
  EXPECT_TRUE(
      parse("[[node]]\naddress = \"rediss://h\"\ntls_ca_dir = \"" + dir_.string() + "\"\n").ok());
}

TEST_F(TlsConfigTest, ACertificateNeedsItsKey) {
  const ConfigResult result =
      parse("[[node]]\naddress = \"rediss://h\"\ntls_cert_file = \"" + cert_ + "\"\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.line, 3U);
  EXPECT_EQ(result.error.message,
            "node[0].tls_cert_file: a client certificate needs its key: set tls_key_file too");
}

TEST_F(TlsConfigTest, FilesOfANodeWithoutTlsAreNotChecked) {
  // The [tls] table may serve some nodes only; a plain node ignores it.
  EXPECT_TRUE(parse("[tls]\ntls_ca_file = \"/nonexistent/ca.pem\"\n"
                    "[[node]]\naddress = \"h:6379\"\n")
                  .ok());
}

TEST_F(TlsConfigTest, RedissWithTlsFalseIsAContradiction) {
  const ConfigResult result = parse("[[node]]\naddress = \"rediss://h\"\ntls = false\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.line, 3U);
  EXPECT_EQ(result.error.message.rfind("node[0].tls: the rediss:// address asks for TLS", 0), 0U);
}

TEST_F(TlsConfigTest, UnknownKeysInTheTlsTableAreErrors) {
  const ConfigResult result = parse("[tls]\nca_file = \"x\"\n[[node]]\naddress = \"h\"\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.line, 2U);
  EXPECT_EQ(result.error.message.rfind("tls.ca_file: unknown key", 0), 0U) << result.error.message;
}

TEST_F(TlsConfigTest, AUnixSocketTakesNoTls) {
  const QuorumConfig config = parse_ok(
      "[tls]\ntls = true\n[[node]]\naddress = \"unix:///run/redis.sock\"\n"
      "[[node]]\naddress = \"h:6380\"\n");
  EXPECT_EQ(config.nodes.at(0).unix_path, "/run/redis.sock");
  EXPECT_EQ(config.nodes.at(0).name, "unix:///run/redis.sock");
  EXPECT_FALSE(config.nodes.at(0).tls.enabled);
  EXPECT_TRUE(config.nodes.at(1).tls.enabled);
  const ConfigResult result = parse("[[node]]\naddress = \"unix:///run/redis.sock\"\ntls = true\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.line, 3U);
  EXPECT_EQ(result.error.message.rfind("node[0].tls: a Unix socket carries no TLS", 0), 0U);
}

TEST_F(TlsConfigTest, OneSocketNamedTwiceIsOneNode) {
  const ConfigResult result = parse(
      "[[node]]\naddress = \"unix:///run/redis/a.sock\"\n"
      "[[node]]\naddress = \"unix:///run/redis/./a.sock\"\nname = \"again\"\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.line, 4U);
}

TEST_F(TlsConfigTest, APasswordInClearTextIsWarnedOfOrRefused) {
  ::setenv("REDLOCK_TEST_TLS_PASSWORD", "pw", 1);
  const std::string remote =
      "[[node]]\naddress = \"10.1.2.3:6379\"\npassword_env = \"REDLOCK_TEST_TLS_PASSWORD\"\n";
  const QuorumConfig config = parse_ok(remote);
  EXPECT_TRUE(password_in_clear(config.nodes.at(0)));
  ASSERT_EQ(transport_warnings(config.nodes.at(0)).size(), 1U);
  EXPECT_EQ(transport_warnings(config.nodes.at(0))[0].rfind("password sent in clear text", 0), 0U);

  const ConfigResult strict = parse(remote + "[lock]\nstrict_transport = true\n");
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.error.line, 2U);
  EXPECT_EQ(strict.error.message.rfind("node[0].address: lock.strict_transport refuses", 0), 0U)
      << strict.error.message;

  // TLS, loopback and Unix sockets keep the password off the network.
  for (const std::string address : {"rediss://10.1.2.3:6380", "127.0.0.1:6379", "[::1]:6379",
                                    "localhost:6379", "unix:///run/redis.sock"}) {
    const ConfigResult result = parse("[[node]]\naddress = \"" + address +
                                      "\"\npassword_env = \"REDLOCK_TEST_TLS_PASSWORD\"\n"
                                      "[lock]\nstrict_transport = true\n");
    ASSERT_TRUE(result.ok()) << address << ": " << result.error.to_string();
    EXPECT_TRUE(transport_warnings(result.config->nodes.at(0)).empty()) << address;
  }
  // No password, nothing to leak.
  EXPECT_FALSE(password_in_clear(parse_ok("[[node]]\naddress = \"10.1.2.3\"\n").nodes.at(0)));
  ::unsetenv("REDLOCK_TEST_TLS_PASSWORD");
}

TEST_F(TlsConfigTest, UnverifiedTlsIsWarnedOf) {
  const QuorumConfig config = parse_ok("[[node]]\naddress = \"rediss://h\"\ntls_verify = false\n");
  const auto warnings = transport_warnings(config.nodes.at(0));
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_EQ(warnings[0],
            "TLS certificate not verified (tls_verify = false); next step: "
            "docs/operations.md#tls-certificates");
}

TEST(LoopbackHost, KnowsTheLoopbackSpellings) {
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("127.8.9.10"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_TRUE(is_loopback_host("::ffff:127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("LocalHost."));
  EXPECT_FALSE(is_loopback_host("128.0.0.1"));
  EXPECT_FALSE(is_loopback_host("localhost.example"));
  EXPECT_FALSE(is_loopback_host("::2"));
}

}  // namespace
}  // namespace redlock

// NOLINTEND(concurrency-mt-unsafe)
