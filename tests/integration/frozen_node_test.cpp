// Nothing of a failed attempt stays on a node that froze and came back
// (docs/engine.md, "Connections"): no request that can grant is written
// behind an unanswered handshake, and the cleanup of one that may have run
// follows it on its connection or, once that connection was reset, is sent
// again when the node is reachable. Real nodes, frozen with SIGSTOP.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

bool all_connected(const AsyncClient& client) {
  for (const NodeHealth& health : client.node_health()) {
    if (!health.connected) return false;
  }
  return true;
}

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
  std::function<void()> acquire_when_connected;
  ASSERT_TRUE(run.run(
      [&] {
        run.client().acquire(Resource("r7"), {}, [&](AcquireResult result) {
          failed = std::move(result);
          for (std::size_t i = 0; i < 3; ++i) cluster.node(i).resume();
          // The same client, once its connections to the resumed nodes are up
          // again (bounded by the run's watchdog).
          acquire_when_connected = [&] {
            if (!all_connected(run.client())) {
              run.after(milliseconds(10), acquire_when_connected);
              return;
            }
            reconnected = true;
            run.client().acquire(Resource("r7"), {}, [&](AcquireResult again) {
              retried = std::move(again);
              run.done();
            });
          };
          acquire_when_connected();
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

}  // namespace
}  // namespace redlock::test
