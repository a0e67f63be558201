// Session set-up on each node: AUTH, SELECT, and replica acknowledgement.
#include <gtest/gtest.h>

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
