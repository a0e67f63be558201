// TLS (and mutual TLS) and Unix sockets against real redis-server
// processes: the lock protocol over each transport (acquire, fenced
// acquire, extend, release, release wake-ups, the guard), and every way a
// TLS connection can fail, each with its error and no hang. Certificates
// are made at test time with the openssl command (test_certificates.hpp).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "test_certificates.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

const TestCertificates& certs() { return TestCertificates::shared(); }

RedisServerOptions tls_server(bool auth_clients = false, bool wrong_name = false) {
  RedisServerOptions options;
  options.tls = TlsServerOptions{wrong_name ? certs().wrong_name_cert() : certs().server_cert(),
                                 wrong_name ? certs().wrong_name_key() : certs().server_key(),
                                 certs().ca_file(), auth_clients};
  return options;
}

NodeConfig tls_node(const RedisServer& server) {
  NodeConfig node = node_at(server.tls_port());
  node.tls.enabled = true;
  node.tls.ca_file = certs().ca_file();
  return node;
}

NodeConfig unix_node(const RedisServer& server) {
  NodeConfig node;
  node.unix_path = server.unix_path().string();
  node.name = server.unix_address();
  return node;
}

QuorumConfig quorum_of(std::vector<NodeConfig> nodes, milliseconds ttl = milliseconds(10000)) {
  QuorumConfig config;
  config.nodes = std::move(nodes);
  config.lock.ttl = ttl;
  config.lock.max_ttl = milliseconds(20000);  // the extend's
  config.lock.node_timeout = milliseconds(500);
  config.lock.connect_timeout = milliseconds(2000);
  config.lock.retry_count = 0;
  config.lock.release_at_majority = false;
  config.source = "test";
  return config;
}

// The outcome of one acquire on a single node that is expected to fail:
// its detail, after checking that it failed as unreachable, in bounded time.
std::string failure_detail(const QuorumConfig& config) {
  BlockingClient client(config);
  const auto started = std::chrono::steady_clock::now();
  const AcquireResult result = client.acquire(Resource("refused"));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5)) << "hung";
  EXPECT_FALSE(result.ok());
  if (result.nodes.size() != 1) return "no node outcome";
  EXPECT_EQ(result.nodes[0].status, NodeStatus::unreachable) << result.nodes[0].detail;
  return result.nodes[0].detail;
}

// The whole protocol on one quorum: plain and fenced acquires, extend,
// release, and what the nodes hold after each.
void exercise_protocol(RedisCluster& cluster, const QuorumConfig& config) {
  BlockingClient client(config);
  AcquireResult held = client.acquire(Resource("over-the-wire"));
  ASSERT_TRUE(held.ok()) << held.error.message() << ": " << held.nodes[0].detail;
  EXPECT_EQ(cluster.node(0).probe().get(key_of("over-the-wire")), held.lock->value.str());

  ExtendOptions longer;
  longer.ttl = milliseconds(20000);
  const ExtendResult extended = client.extend(*held.lock, longer);
  ASSERT_TRUE(extended.ok()) << extended.error.message();
  EXPECT_GT(cluster.node(0).probe().pttl(key_of("over-the-wire")), 10000);
  EXPECT_EQ(client.release(*extended.lock).released, cluster.size());
  EXPECT_FALSE(cluster.node(0).probe().exists(key_of("over-the-wire")));

  AcquireOptions fenced;
  fenced.fenced = true;
  AcquireResult first = client.acquire(Resource("fenced"), fenced);
  ASSERT_TRUE(first.ok()) << first.error.message();
  (void)client.release(*first.lock);
  AcquireResult second = client.acquire(Resource("fenced"), fenced);
  ASSERT_TRUE(second.ok()) << second.error.message();
  ASSERT_TRUE(first.lock->fence && second.lock->fence);
  EXPECT_GT(*second.lock->fence, *first.lock->fence);
  (void)client.release(*second.lock);
}

// A waiter wakes on the holder's release (the subscriber connections use
// the same transport), and a guard renews past its TTL.
void exercise_wakeup_and_guard(RedisCluster& cluster, const QuorumConfig& config) {
  BlockingClient holder(config);
  BlockingClient waiter_client(config);
  AcquireResult held = holder.acquire(Resource("handoff"));
  ASSERT_TRUE(held.ok()) << held.error.message();
  auto waiting = acquire_when_woken(waiter_client, Resource("handoff"));
  EXPECT_TRUE(line_becomes(cluster, "handoff", 1));
  EXPECT_TRUE(wake_listeners_become(cluster, 1));
  const auto released_at = std::chrono::steady_clock::now();
  (void)holder.release(*held.lock);
  const AcquireResult waited = waiting.get();
  ASSERT_TRUE(waited.ok()) << waited.error.message();
  EXPECT_LT(std::chrono::steady_clock::now() - released_at, std::chrono::seconds(5));
  (void)waiter_client.release(*waited.lock);

  QuorumConfig short_lived = config;
  short_lived.lock.ttl = milliseconds(300);
  short_lived.lock.node_timeout = milliseconds(50);
  BlockingClient guarded(short_lived);
  Guard guard = guarded.lock(Resource("renewing"));
  ASSERT_TRUE(guard.owns_lock()) << guard.error().message();
  ASSERT_TRUE(eventually([&] { return guard.renewals() >= 4; }));
  EXPECT_TRUE(guard.valid());
  EXPECT_EQ(cluster.node(0).probe().get(key_of("renewing")), guard.lock().value.str());
}

// Whether OpenSSL is mapped into this process.
bool openssl_mapped() {
  std::ifstream maps("/proc/self/maps");
  const std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  return text.find("libssl") != std::string::npos || text.find("libcrypto") != std::string::npos;
}

// A process whose clients speak plain TCP maps no OpenSSL (a megabyte of
// resident memory and its start-up); its first TLS node loads it. Run in a
// process of its own (a death test re-runs the binary), since the other
// tests load it.
TEST(Tls, OpenSslIsLoadedOnlyForATlsNode) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        int status = 0;
        {
          RedisCluster plain{1};
          BlockingClient client(config_for(plain));
          const AcquireResult held = client.acquire(Resource("plain"));
          if (!held.ok()) status |= 1;
          if (openssl_mapped()) status |= 2;
          RedisCluster tls(std::vector<RedisServerOptions>(1, tls_server()));
          BlockingClient tls_client(quorum_of({tls_node(tls.node(0))}));
          if (!tls_client.acquire(Resource("tls")).ok()) status |= 4;
          if (!openssl_mapped()) status |= 8;
        }
        std::exit(status);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Tls, TheProtocolRunsOverTls) {
  RedisCluster cluster(std::vector<RedisServerOptions>(3, tls_server()));
  std::vector<NodeConfig> nodes;
  for (std::size_t i = 0; i < cluster.size(); ++i) nodes.push_back(tls_node(cluster.node(i)));
  const QuorumConfig config = quorum_of(nodes);
  exercise_protocol(cluster, config);
  exercise_wakeup_and_guard(cluster, config);
  BlockingClient client(config);
  // An acquire decides at a majority: the last session may still be in its
  // handshake when it returns, so the check waits (bounded) for all three.
  (void)client.acquire(Resource("health"));
  const auto all_connected = [&] {
    for (const NodeHealth& health : client.node_health()) {
      if (!health.connected) return false;
    }
    return true;
  };
  EXPECT_TRUE(eventually(all_connected));
  for (const NodeHealth& health : client.node_health()) {
    EXPECT_TRUE(health.connected) << health.name << ": " << health.last_error;
    EXPECT_TRUE(health.warnings.empty());
  }
}

TEST(Tls, MutualTlsPresentsTheClientCertificate) {
  RedisCluster cluster(std::vector<RedisServerOptions>(3, tls_server(true)));
  std::vector<NodeConfig> nodes;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    nodes.push_back(tls_node(cluster.node(i)));
    nodes.back().tls.cert_file = certs().client_cert();
    nodes.back().tls.key_file = certs().client_key();
  }
  exercise_protocol(cluster, quorum_of(nodes));
}

TEST(Tls, ACaDirectoryServesAsWellAsACaFile) {
  RedisServer server(tls_server());
  NodeConfig node = tls_node(server);
  node.tls.ca_file.clear();
  node.tls.ca_dir = certs().ca_dir();
  BlockingClient client(quorum_of({node}));
  const AcquireResult held = client.acquire(Resource("by-dir"));
  ASSERT_TRUE(held.ok()) << held.nodes[0].detail;
  (void)client.release(*held.lock);
}

TEST(Tls, AServerWithoutTheClientsCertificateIsRefusedWithItsReason) {
  RedisServer server(tls_server(true));
  const std::string detail = failure_detail(quorum_of({tls_node(server)}));
  // TLS 1.3: the server's alert arrives after the client's handshake ends.
  EXPECT_NE(detail.find("certificate required"), std::string::npos) << detail;
}

TEST(Tls, AnUntrustedCertificateFailsVerification) {
  RedisServer server(tls_server());
  NodeConfig node = tls_node(server);
  node.tls.ca_file = certs().other_ca_file();
  const std::string detail = failure_detail(quorum_of({node}));
  EXPECT_NE(detail.find("TLS handshake failed: certificate verify failed"), std::string::npos)
      << detail;
}

TEST(Tls, TheHostNameIsChecked) {
  RedisServer server(tls_server(false, true));  // a certificate for wrong.example
  const std::string detail = failure_detail(quorum_of({tls_node(server)}));
  EXPECT_NE(detail.find("certificate verify failed: IP address mismatch"), std::string::npos)
      << detail;

  NodeConfig named = tls_node(server);
  named.tls.server_name = "another.example";
  const std::string by_name = failure_detail(quorum_of({named}));
  EXPECT_NE(by_name.find("certificate verify failed: hostname mismatch"), std::string::npos)
      << by_name;

  // The name the certificate carries passes.
  named.tls.server_name = "wrong.example";
  BlockingClient client(quorum_of({named}));
  const AcquireResult held = client.acquire(Resource("named"));
  ASSERT_TRUE(held.ok()) << held.nodes[0].detail;
  (void)client.release(*held.lock);
}

TEST(Tls, WithoutVerificationAnyCertificatePassesAndIsWarnedOf) {
  RedisServer server(tls_server(false, true));
  NodeConfig node = tls_node(server);
  node.tls.ca_file = certs().other_ca_file();
  node.tls.verify = false;
  BlockingClient client(quorum_of({node}));
  const AcquireResult held = client.acquire(Resource("unverified"));
  ASSERT_TRUE(held.ok()) << held.nodes[0].detail;
  const std::vector<NodeHealth> health = client.node_health();
  ASSERT_EQ(health.size(), 1U);
  ASSERT_EQ(health[0].warnings.size(), 1U);
  EXPECT_EQ(health[0].warnings[0],
            "TLS certificate not verified (tls_verify = false); next step: "
            "docs/operations.md#tls-certificates");
  (void)client.release(*held.lock);
}

// Redis reads a ClientHello as an inline command: it answers an error when
// the hello's random bytes hold a newline, else it waits for one. Either
// way the message names the likely cause.
TEST(Tls, APlainServerOnATlsAddressIsNamed) {
  RedisServer server;
  NodeConfig node = node_at(server.port());
  node.tls.enabled = true;
  node.tls.ca_file = certs().ca_file();
  QuorumConfig config = quorum_of({node});
  config.lock.connect_timeout = milliseconds(300);
  const std::string detail = failure_detail(config);
  EXPECT_NE(detail.find("TLS handshake"), std::string::npos) << detail;
  EXPECT_NE(detail.find("plain TCP"), std::string::npos) << detail;
}

TEST(Tls, ATlsServerOnAPlainAddressIsNamed) {
  RedisServer server(tls_server());
  const std::string detail = failure_detail(quorum_of({node_at(server.tls_port())}));
  EXPECT_NE(detail.find("rediss:// or tls = true"), std::string::npos) << detail;
}

TEST(Tls, AHandshakeThatNeverEndsTimesOut) {
  RedisServer server(tls_server());
  server.pause();  // the kernel accepts; nobody answers the ClientHello
  QuorumConfig config = quorum_of({tls_node(server)});
  config.lock.connect_timeout = milliseconds(300);
  const std::string detail = failure_detail(config);
  server.resume();
  EXPECT_NE(detail.find("connect timeout after 300 ms (in the TLS handshake"), std::string::npos)
      << detail;
}

TEST(Tls, AClientKeyThatIsNoKeyIsNamed) {
  RedisServer server(tls_server(true));
  NodeConfig node = tls_node(server);
  node.tls.cert_file = certs().client_cert();
  node.tls.key_file = certs().ca_file();  // a certificate, not a key
  const std::string detail = failure_detail(quorum_of({node}));
  EXPECT_NE(detail.find("TLS: cannot load the client key"), std::string::npos) << detail;
}

TEST(Tls, TheSessionComesBackAfterTheNodeRestarts) {
  RedisCluster cluster(std::vector<RedisServerOptions>(1, tls_server()));
  QuorumConfig config = quorum_of({tls_node(cluster.node(0))});
  config.lock.reconnect_min = milliseconds(20);
  config.lock.reconnect_max = milliseconds(100);
  BlockingClient client(config);
  ASSERT_TRUE(client.acquire(Resource("before")).ok());
  cluster.node(0).restart();
  AcquireOptions patient;
  patient.retry_count = -1;
  patient.retry_delay = milliseconds(50);
  patient.wait = milliseconds(5000);
  const AcquireResult after = client.acquire(Resource("after"), patient);
  ASSERT_TRUE(after.ok()) << after.nodes[0].detail;
  (void)client.release(*after.lock);
}

// The CA file is read again when a connection opens once it changed on
// disk: a client that could not verify the node reaches it after the file
// is replaced, without a restart of its own.
TEST(Tls, AReplacedCaFileIsUsedFromTheNextConnectionOn) {
  RedisServer server(tls_server());
  const std::filesystem::path ca = server.directory() / "rotating-ca.pem";
  std::filesystem::copy_file(certs().other_ca_file(), ca);
  NodeConfig node = tls_node(server);
  node.tls.ca_file = ca.string();
  QuorumConfig config = quorum_of({node});
  config.lock.reconnect_min = milliseconds(20);
  config.lock.reconnect_max = milliseconds(50);
  BlockingClient client(config);
  const AcquireResult refused = client.acquire(Resource("rotated"));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.nodes[0].detail.find("certificate verify failed"), std::string::npos)
      << refused.nodes[0].detail;

  const std::filesystem::path next = server.directory() / "next-ca.pem";
  std::filesystem::copy_file(certs().ca_file(), next);
  std::filesystem::rename(next, ca);  // atomically, as a rotation should
  AcquireOptions patient;
  patient.retry_count = -1;
  patient.retry_delay = milliseconds(20);
  patient.wait = milliseconds(5000);
  const AcquireResult held = client.acquire(Resource("rotated"), patient);
  ASSERT_TRUE(held.ok()) << held.nodes[0].detail;
  (void)client.release(*held.lock);
}

// The resource store behind a FenceGate takes the same settings.
TEST(Tls, AFenceGateReachesItsStoreOverMutualTls) {
  RedisServer store(tls_server(true));
  NodeConfig node = tls_node(store);
  node.tls.cert_file = certs().client_cert();
  node.tls.key_file = certs().client_key();
  FenceGate gate(node);
  ASSERT_TRUE(gate.set("doc", 34, "newer").ok());
  EXPECT_EQ(gate.set("doc", 33, "older").error, errc::fenced_out);
  EXPECT_EQ(store.probe().get("doc"), "newer");

  NodeConfig untrusted = tls_node(store);
  untrusted.tls.ca_file = certs().other_ca_file();
  FenceGate refused(untrusted);
  const FencedResult result = refused.set("doc", 35, "x");
  EXPECT_EQ(result.error, errc::node_error);
  EXPECT_NE(result.detail.find("connect: TLS handshake failed: certificate verify failed"),
            std::string::npos)
      << result.detail;
  EXPECT_EQ(store.probe().get("doc"), "newer");
}

TEST(UnixSocket, AFenceGateReachesItsStoreOverAUnixSocket) {
  RedisServerOptions options;
  options.unix_socket = true;
  RedisServer store(options);
  FenceGate gate(unix_node(store));
  ASSERT_TRUE(gate.set("doc", 2, "v").ok());
  EXPECT_EQ(gate.get("doc", 2).value, "v");
}

TEST(UnixSocket, TheProtocolRunsOverAUnixSocket) {
  RedisServerOptions options;
  options.unix_socket = true;
  RedisCluster cluster(std::vector<RedisServerOptions>(3, options));
  std::vector<NodeConfig> nodes;
  for (std::size_t i = 0; i < cluster.size(); ++i) nodes.push_back(unix_node(cluster.node(i)));
  const QuorumConfig config = quorum_of(nodes);
  exercise_protocol(cluster, config);
  exercise_wakeup_and_guard(cluster, config);
}

TEST(UnixSocket, AMissingSocketIsNamed) {
  NodeConfig node;
  node.unix_path = "/nonexistent-redlock-dir/redis.sock";
  node.name = "unix:///nonexistent-redlock-dir/redis.sock";
  const std::string detail = failure_detail(quorum_of({node}));
  EXPECT_NE(detail.find("connect: no such file or directory"), std::string::npos) << detail;
}

TEST(UnixSocket, AQuorumFileWithUnixAndTlsNodesLoads) {
  RedisServerOptions unix_options;
  unix_options.unix_socket = true;
  RedisServer local(unix_options);
  RedisServer remote(tls_server());
  RedisServer plain;
  const std::string text = "[tls]\ntls_ca_file = \"" + certs().ca_file() +
                           "\"\n[[node]]\naddress = \"" + local.unix_address() +
                           "\"\n[[node]]\naddress = \"" + remote.tls_address() +
                           "\"\n[[node]]\naddress = \"" + plain.address() + "\"\n";
  const ConfigResult loaded = parse_config(text, "mixed.toml");
  ASSERT_TRUE(loaded.ok()) << loaded.error.to_string();
  QuorumConfig config = *loaded.config;
  config.lock.release_at_majority = false;
  BlockingClient client(config);
  const AcquireResult held = client.acquire(Resource("mixed"));
  ASSERT_TRUE(held.ok()) << held.error.message();
  // Each transport reached its node: all three delete the lock's value.
  EXPECT_EQ(client.release(*held.lock).released, 3U);
}

}  // namespace
}  // namespace redlock::test
