// Session set-up on each node: AUTH, SELECT, and replica acknowledgement.
#include <gtest/gtest.h>
#include <netdb.h>

#include <chrono>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

QuorumConfig single_node(const RedisServer& server) {
  QuorumConfig config;
  config.nodes.push_back(node_at(server.port()));
  config.lock.node_timeout = milliseconds(300);
  config.lock.retry_count = 0;
  return config;
}

TEST(Connection, AuthenticatesWithAnAclUser) {
  RedisServer server;
  ASSERT_TRUE(server.probe()
                  .command({"ACL", "SETUSER", "locker", "on", ">s3cret", "~*", "&*", "+@all"})
                  .is_ok());
  QuorumConfig config = single_node(server);
  config.nodes[0].username = "locker";
  config.nodes[0].password = "s3cret";
  BlockingClient client(config);
  AcquireResult held = client.acquire(Resource("authed"));
  ASSERT_TRUE(held.ok()) << held.nodes[0].detail;
  EXPECT_EQ(client.release(*held.lock).released, 1u);
}

TEST(Connection, WrongPasswordIsReportedWithTheNodesError) {
  RedisServer server;
  ASSERT_TRUE(server.probe()
                  .command({"ACL", "SETUSER", "locker", "on", ">s3cret", "~*", "&*", "+@all"})
                  .is_ok());
  QuorumConfig config = single_node(server);
  config.nodes[0].username = "locker";
  config.nodes[0].password = "wrong";
  BlockingClient client(config);
  AcquireResult result = client.acquire(Resource("denied"));
  EXPECT_EQ(result.error, errc::no_quorum);
  ASSERT_EQ(result.nodes.size(), 1u);
  EXPECT_EQ(result.nodes[0].status, NodeStatus::unreachable);
  EXPECT_NE(result.nodes[0].detail.find("AUTH failed"), std::string::npos)
      << result.nodes[0].detail;
  EXPECT_EQ(result.nodes[0].detail.find("wrong"), std::string::npos) << "never print the password";
}

TEST(Connection, SelectsTheConfiguredDatabase) {
  RedisServer server;
  QuorumConfig config = single_node(server);
  config.nodes[0].db = 3;
  BlockingClient client(config);
  AcquireResult held = client.acquire(Resource("in-db-3"));
  ASSERT_TRUE(held.ok()) << held.nodes[0].detail;
  RedisProbe probe = server.probe();
  EXPECT_FALSE(probe.exists(key_of("in-db-3")));
  ASSERT_TRUE(probe.command({"SELECT", "3"}).is_ok());
  EXPECT_EQ(probe.get(key_of("in-db-3")), held.lock->value.str());
  (void)client.release(*held.lock);
}

TEST(Connection, MinReplicasCountsTheVoteOnlyWithReplicaAcks) {
  RedisServer master;
  QuorumConfig config = single_node(master);
  config.nodes[0].min_replicas = 1;
  config.nodes[0].replica_timeout = milliseconds(200);
  {
    BlockingClient client(config);
    AcquireResult alone = client.acquire(Resource("replicated"));
    EXPECT_EQ(alone.error, errc::no_quorum);
    EXPECT_EQ(alone.nodes[0].status, NodeStatus::replicas_short);
    EXPECT_EQ(alone.nodes[0].detail, "0 of 1 replicas acknowledged");
    // The unacknowledged grant was undone (the unlock ran after WAIT).
    (void)client.release(Lock{Resource("replicated"), LockValue("x"), milliseconds(1), {}, {}, {}});
    EXPECT_FALSE(master.probe().exists(key_of("replicated")));
  }

  RedisServerOptions replica_options;
  replica_options.master_port = master.port();
  RedisServer replica(replica_options);
  ASSERT_TRUE(replica.wait_for_replication_link());
  // WAIT returns as soon as the replica acknowledges; the timeout is only a
  // bound, generous for a loaded machine.
  config.nodes[0].replica_timeout = milliseconds(5000);
  BlockingClient client(config);
  AcquireResult held = client.acquire(Resource("replicated"));
  ASSERT_TRUE(held.ok()) << held.nodes[0].detail;
  EXPECT_EQ(held.nodes[0].status, NodeStatus::granted);
  (void)client.release(*held.lock);
}

}  // namespace
}  // namespace redlock::test

namespace redlock::test {
namespace {

TEST(Persistence, ReportedPerNodeFromTheHandshake) {
  RedisCluster durable{3, test::Persistence::aof_always};
  BlockingClient client(config_for(durable));
  AcquireResult held = client.acquire(Resource("p"));  // handshakes are done by now
  ASSERT_TRUE(held.ok());
  for (const NodeHealth& node : client.node_health()) {
    EXPECT_TRUE(node.connected) << node.name;
    EXPECT_EQ(node.persistence, redlock::Persistence::aof_always) << node.name;
  }
  (void)client.release(*held.lock);
}

TEST(Persistence, StrictModeRefusesVotesOfNodesThatCanForget) {
  RedisCluster volatile_nodes{3};
  QuorumConfig config = config_for(volatile_nodes);
  config.lock.strict_persistence = true;
  BlockingClient client(config);
  AcquireResult result = client.acquire(Resource("strict"));
  EXPECT_EQ(result.error, errc::no_quorum);
  bool named = false;
  for (const NodeOutcome& node : result.nodes) {
    named = named || node.detail.find("cannot keep fencing promises") != std::string::npos;
  }
  EXPECT_TRUE(named);
  // The refused grants were undone like any failed attempt's.
  (void)client.release(Lock{Resource("strict"), LockValue("x"), milliseconds(1), {}, {}, {}});
  EXPECT_EQ(nodes_holding(volatile_nodes, "strict"), 0u);

  RedisCluster durable{3, test::Persistence::aof_always};
  QuorumConfig durable_config = config_for(durable);
  durable_config.lock.strict_persistence = true;
  BlockingClient durable_client(durable_config);
  AcquireResult held = durable_client.acquire(Resource("strict"));
  EXPECT_TRUE(held.ok()) << held.error.message();
}

TEST(Persistence, ReadAgainWhileConnectedSoAChangeAtRunTimeIsRefused) {
  RedisCluster durable{3, test::Persistence::aof_always};
  QuorumConfig config = config_for(durable);
  config.lock.strict_persistence = true;
  ClientOptions options;
  options.persistence_recheck = milliseconds(50);
  BlockingClient client(config, options);
  AcquireResult held = client.acquire(Resource("recheck"));
  ASSERT_TRUE(held.ok()) << held.error.message();
  (void)client.release(*held.lock);
  // Two nodes stop fsyncing every write, without a restart: the same
  // connections must notice.
  ASSERT_TRUE(
      durable.node(0).probe().command({"CONFIG", "SET", "appendfsync", "everysec"}).is_ok());
  ASSERT_TRUE(durable.node(1)
                  .probe()
                  .command({"CONFIG", "SET", "no-appendfsync-on-rewrite", "yes"})
                  .is_ok());
  ASSERT_TRUE(eventually([&] {
    const std::vector<NodeHealth> health = client.node_health();
    return health[0].persistence == redlock::Persistence::aof_everysec &&
           health[1].persistence == redlock::Persistence::aof_always_but_rewrite;
  })) << "persistence was not read again";
  const AcquireResult refused = client.acquire(Resource("recheck"));
  EXPECT_EQ(refused.error, errc::no_quorum);
  EXPECT_NE(refused.nodes[1].detail.find("aof-always-no-fsync-on-rewrite"), std::string::npos)
      << refused.nodes[1].detail;
  for (const NodeHealth& node : client.node_health()) EXPECT_TRUE(node.connected) << node.name;
}

TEST(Persistence, UnknownWhenConfigIsDeniedAndLockingStillWorks) {
  RedisServer server;
  ASSERT_TRUE(
      server.probe()
          .command({"ACL", "SETUSER", "narrow", "on", ">pw", "~*", "&*", "+@all", "-config"})
          .is_ok());
  QuorumConfig config = single_node(server);
  config.nodes[0].username = "narrow";
  config.nodes[0].password = "pw";
  BlockingClient client(config);
  AcquireResult held = client.acquire(Resource("narrow"));
  ASSERT_TRUE(held.ok()) << held.nodes[0].detail;
  EXPECT_EQ(client.node_health()[0].persistence, redlock::Persistence::unknown);
}

TEST(Metrics, CountAcquisitionsAndNodeReplies) {
  RedisCluster cluster{3};
  BlockingClient client(config_for(cluster));
  for (int i = 0; i < 5; ++i) {
    AcquireResult held = client.acquire(Resource("counted"));
    ASSERT_TRUE(held.ok());
    (void)client.release(*held.lock);
  }
  const MetricsSnapshot snapshot = client.metrics()->snapshot();
  EXPECT_EQ(snapshot.acquire_wins, 5u);
  EXPECT_EQ(snapshot.releases, 5u);
  EXPECT_EQ(snapshot.acquire_wait.count, 5u);
  ASSERT_EQ(snapshot.nodes.size(), 3u);
  for (const auto& node : snapshot.nodes) EXPECT_GE(node.replies, 5u) << node.node;
  const std::string text = client.metrics()->prometheus();
  EXPECT_NE(text.find("redlock_acquires_total{result=\"won\"} 5"), std::string::npos) << text;
  EXPECT_NE(text.find("node=\"" + config_for(cluster).nodes[0].name + "\""), std::string::npos);
}

// Every address a host name resolves to is tried, in order, within the
// connect timeout: with "localhost" resolving to ::1 first and the node
// listening on 127.0.0.1 only, the first attempt is refused and the second
// connects.
TEST(Connection, EveryAddressOfAHostNameIsTriedInOrder) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  ASSERT_EQ(::getaddrinfo("localhost", "6379", &hints, &found), 0);
  std::vector<int> families;
  for (const addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    families.push_back(entry->ai_family);
  }
  ::freeaddrinfo(found);
  if (families.size() < 2 || families.front() != AF_INET6) {
    GTEST_SKIP() << "localhost does not resolve to ::1 before another address on this machine";
  }
  RedisServer server;  // listens on 127.0.0.1 only
  QuorumConfig config = single_node(server);
  config.nodes[0].host = "localhost";
  BlockingClient client(config);
  const AcquireResult held = client.acquire(Resource("every-address"));
  ASSERT_TRUE(held.ok()) << held.nodes[0].detail;
  (void)client.release(*held.lock);
}

// One server named twice — here as 127.0.0.1:P and localhost:P — looks like
// two masters to the quorum arithmetic; the client reads each server's
// run_id at connect and names the pair, so the false fault tolerance can be
// seen (docs/operations.md).
TEST(Connection, OneServerUnderTwoNamesIsReported) {
  RedisServer first;
  RedisServer second;
  QuorumConfig config = single_node(first);
  NodeConfig alias = config.nodes[0];
  alias.host = "localhost";
  alias.name = "localhost:" + std::to_string(first.port());
  config.nodes.push_back(alias);
  config.nodes.push_back(single_node(second).nodes[0]);
  BlockingClient client(config);
  const AcquireResult held = client.acquire(Resource("named-twice"));
  ASSERT_TRUE(held.ok()) << held.error.message();
  (void)client.release(*held.lock);
  const std::vector<NodeHealth> health = client.node_health();
  ASSERT_EQ(health.size(), 3U);
  EXPECT_EQ(health[0].run_id.size(), 40U) << health[0].run_id;
  EXPECT_EQ(health[1].run_id, health[0].run_id);
  EXPECT_NE(health[2].run_id, health[0].run_id);
  EXPECT_TRUE(health[0].same_server_as.empty());
  EXPECT_EQ(health[1].same_server_as, config.nodes[0].name);
  EXPECT_TRUE(health[2].same_server_as.empty());
}

}  // namespace
}  // namespace redlock::test
