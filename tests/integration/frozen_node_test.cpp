// Nothing of a failed attempt stays on a node that froze and came back
// (docs/engine.md, "Connections"): no request that can grant is written
// behind an unanswered handshake, and the cleanup of one that may have run
// follows it on its connection or, once that connection was reset, is sent
// again when the node is reachable. Real nodes, frozen with SIGSTOP.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "fault_proxy.hpp"
#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

TEST(FrozenNodes, ALongLivedClientStartedAgainstFrozenNodesCanTakeTheLockOnceTheyResume) {
  RedisCluster cluster{5};
  QuorumConfig config = config_for(cluster);
  config.lock.node_timeout = milliseconds(100);
  config.lock.connect_timeout = milliseconds(200);
  config.lock.reconnect_min = milliseconds(20);
  config.lock.reconnect_max = milliseconds(50);
  {
    // Every node carries its identity marker, as in a quorum in use.
    LoopRun warm_up(config);
    const AcquireResult taken = acquire_once(warm_up, Resource("warm-up"));
    ASSERT_TRUE(taken.ok()) << taken.error.message();
  }
  for (std::size_t i = 0; i < 3; ++i) cluster.node(i).pause();

  LoopRun run(config);
  AcquireResult failed;
  AcquireResult retried;
  bool reconnected = false;
  ASSERT_TRUE(run.run(
      [&] {
        run.client().acquire(Resource("r7"), {}, [&](AcquireResult result) {
          failed = std::move(result);
          for (std::size_t i = 0; i < 3; ++i) cluster.node(i).resume();
          // The same client, once its connections to the resumed nodes are up
          // again (bounded by the run's watchdog).
          when_connected(run, [&] {
            reconnected = true;
            run.client().acquire(Resource("r7"), {}, [&](AcquireResult again) {
              retried = std::move(again);
              run.done();
            });
          });
        });
      },
      std::chrono::seconds(20)));
  EXPECT_EQ(failed.error, errc::no_quorum);
  ASSERT_TRUE(reconnected);
  // Told `busy` by the resumed nodes on the old transport: they had run the
  // first attempt's requests, pipelined behind their handshake.
  EXPECT_TRUE(retried.ok()) << retried.error.message();
  for (const NodeOutcome& outcome : retried.nodes) {
    EXPECT_NE(outcome.status, NodeStatus::busy) << outcome.name;
  }
}

// The node ran the grant, its answer was held back, and then the connection
// was reset (a TCP timeout, proxy mode `timeout`): the unlock of the failed
// attempt cannot follow the grant on that connection. It is kept and sent
// once the node is reachable again, long before the grant's TTL.
TEST(FrozenNodes, AnUnlockWhoseConnectionWasResetIsSentAfterTheReconnect) {
  RedisCluster cluster{3};
  chaos::FaultProxy proxy;
  chaos::FaultProxy::LinkId link = 0;
  std::uint16_t proxied_port = 0;
  ASSERT_FALSE(proxy.add_link("n0", "127.0.0.1", cluster.node(0).port(), link, proxied_port));
  QuorumConfig config = config_for(cluster);
  config.nodes[0] = node_at(proxied_port);
  config.lock.node_timeout = milliseconds(2000);
  config.lock.reconnect_min = milliseconds(20);
  config.lock.reconnect_max = milliseconds(50);
  {
    LoopRun warm_up(config);
    const AcquireResult taken = acquire_once(warm_up, Resource("warm-up"));
    ASSERT_TRUE(taken.ok()) << taken.error.message();
  }
  // Node 1 is held by someone else: without node 0 no majority.
  ASSERT_TRUE(cluster.node(1).probe().set(key_of("ledger"), "someone-else", milliseconds(10000)));
  RedisProbe node0(cluster.node(0).port());

  LoopRun run(config);
  AcquireResult failed;
  bool released_on_node0 = false;
  // Bounded: the grant's TTL is 10 s; the unlock comes within a reconnect.
  const bool in_time = run.run(
      [&] {
        // The session is set up first: nothing would be sent behind a
        // handshake whose answers the proxy holds back.
        when_connected(run, [&] {
          proxy.set_mode(link, chaos::Direction::down, chaos::LinkMode::timeout);
          run.client().acquire(Resource("ledger"), {}, [&](AcquireResult result) {
            failed = std::move(result);
            // The same client lives on: the unlock waits for its reconnect.
            run.when([&] { return !node0.exists(key_of("ledger")); },
                     [&] {
                       released_on_node0 = true;
                       run.done();
                     },
                     milliseconds(5));
          });
          // Once node 0 has run the grant (its answer held in the proxy), the
          // timeout ends: both sides of the connection are reset.
          run.when([&] { return node0.exists(key_of("ledger")); },
                   [&] { proxy.set_mode(link, chaos::Direction::both, chaos::LinkMode::pass); });
        });
      },
      milliseconds(5000));
  EXPECT_TRUE(in_time);
  EXPECT_EQ(failed.error, errc::no_quorum) << failed.error.message();
  ASSERT_FALSE(failed.nodes.empty());
  EXPECT_EQ(failed.nodes[0].status, NodeStatus::unreachable) << failed.nodes[0].detail;
  EXPECT_TRUE(released_on_node0) << "node 0 still holds the failed attempt's grant, PTTL "
                                 << node0.pttl(key_of("ledger"));
}

// A node that had not answered when a failed attempt was decided is undone
// when its answer comes, if that answer is a grant (docs/algorithm.md,
// step 5): here node 2, stopped while the attempt went out, grants it once
// it resumes, while the acquire still retries against nodes 0 and 1, which
// someone else holds. Its grant must not stay for the TTL (60 s).
TEST(FrozenNodes, ALateGrantOfAFailedAttemptIsUndoneWhenItComes) {
  RedisCluster cluster{3};
  QuorumConfig config = config_for(cluster, milliseconds(60000));
  config.lock.node_timeout = milliseconds(5000);
  BlockingClient client(config);
  // Every connection is up and every node marked.
  const AcquireResult warm = client.acquire(Resource("warm-up"));
  ASSERT_TRUE(warm.ok()) << warm.error.message();
  EXPECT_EQ(client.release(*warm.lock).released, cluster.size());
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(cluster.node(i).probe().set(key_of("ledger"), "someone-else", milliseconds(60000)));
  }
  const std::vector<long long> before = script_calls(cluster);
  cluster.node(2).pause();
  auto waiting = std::async(std::launch::async, [&client] {
    AcquireOptions options;
    options.wait = milliseconds(1500);
    options.retry_delay = milliseconds(100);
    return client.acquire(Resource("ledger"), options);
  });
  // Nodes 0 and 1 refused the first attempt: it is decided, lost, and node
  // 2 has its request still to run.
  ASSERT_TRUE(eventually([&] {
    return script_calls(cluster.node(0)) > before[0] && script_calls(cluster.node(1)) > before[1];
  }));
  cluster.node(2).resume();
  const AcquireResult gave_up = waiting.get();
  EXPECT_EQ(gave_up.error, errc::not_acquired) << gave_up.error.message();
  EXPECT_TRUE(eventually([&] { return !cluster.node(2).probe().exists(key_of("ledger")); }))
      << "node 2 still holds a failed attempt's grant, PTTL "
      << cluster.node(2).probe().pttl(key_of("ledger"));
}

}  // namespace
}  // namespace redlock::test
