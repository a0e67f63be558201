// A round decided at or after the lock's deadline decides nothing: an extend
// or a guard's renewal whose deciding answer comes once the lock has lapsed
// is a loss, whatever the nodes answered (docs/engine.md, "The quorum
// round"). Real nodes; the client's clock is moved by hand, so "after the
// deadline" is exact and does not depend on how fast the machine is.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>

#include "client/blocking_client_impl.hpp"
#include "harness.hpp"
#include "holding/guard_state.hpp"
#include "manual_clock.hpp"
#include "operations/launch.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

// Three nodes with a 200 ms TTL, as a holder of a short lease would run
// them, and the third node stopped: every round needs both of the others.
QuorumConfig short_lease_config(RedisCluster& cluster) {
  initialise_quorum(cluster);
  cluster.node(2).stop();
  QuorumConfig config = config_for(cluster, milliseconds(200));
  config.lock.node_timeout = milliseconds(150);
  return config;
}

ClientOptions on_clock(const ManualClock& clock) {
  ClientOptions options;
  options.clock = &clock;
  return options;
}

TEST(RoundDeadline, AnExtendAnsweredAfterTheDeadlineIsLost) {
  RedisCluster cluster{3};
  ManualClock clock;
  LoopRun run(short_lease_config(cluster), on_clock(clock));
  AcquireResult acquired;
  std::optional<ExtendResult> extended;
  ASSERT_TRUE(run.run([&] {
    run.client().acquire(Resource("r-extend"), {}, [&](AcquireResult result) {
      acquired = result;
      if (!result.ok()) return run.done();
      const Lock lock = *result.lock;
      // Sent 40 ms before the deadline...
      clock.advance(lock.valid_until - milliseconds(40) - clock.now());
      run.client().extend(lock, {}, [&](ExtendResult answer) {
        extended = std::move(answer);
        run.done();
      });
      // ...and answered 2 ms after it: the requests leave at the end of this
      // loop turn, the answers are counted on a clock that reads later.
      clock.advance(milliseconds(42));
    });
  }));
  ASSERT_TRUE(acquired.ok()) << acquired.error.message();
  ASSERT_TRUE(extended.has_value());
  EXPECT_EQ(extended->error, errc::lost);
  // Both live nodes said yes: only the deadline decides here.
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(extended->nodes.at(i).status, NodeStatus::extended) << "node " << i;
  }
  // The lock handed back is the one passed in, not a renewed one.
  ASSERT_TRUE(extended->lock.has_value());
  EXPECT_EQ(extended->lock->valid_until, acquired.lock->valid_until);
}

TEST(RoundDeadline, AGuardWhoseRenewalIsAnsweredAfterTheDeadlineIsLostOnce) {
  RedisCluster cluster{3};
  ManualClock clock;
  LoopRun run(short_lease_config(cluster), on_clock(clock));
  RedisProbe slow_node(cluster.node(1).port());
  std::shared_ptr<detail::GuardState> guard;
  AcquireResult acquired;
  int losses = 0;
  std::error_code loss;
  ASSERT_TRUE(run.run([&] {
    run.client().acquire(Resource("r-guard"), {}, [&](AcquireResult result) {
      acquired = result;
      if (!result.ok()) return run.done();
      GuardOptions guard_options;
      // The first renewal comes about 100 ms (of the loop's time) from now.
      guard_options.renew_interval = milliseconds(100);
      guard_options.on_lost = [&](std::error_code why) {
        ++losses;
        loss = why;
      };
      detail::ClientCore& core = detail::ClientAccess::core(run.client());
      guard = detail::launch<detail::GuardState>(core, *result.lock, guard_options);
      // By the client's clock the renewal then starts 40 ms before the
      // deadline; node 1 holds its answer back until ~150 ms from now.
      clock.advance(result.lock->valid_until - milliseconds(40) - clock.now());
      const auto paused = slow_node.command({"CLIENT", "PAUSE", "150", "ALL"});
      if (!paused.is_ok()) return run.done();
      // Between the renewal's requests (~100 ms) and node 1's answer, the
      // client's clock passes the deadline by 2 ms.
      run.after(milliseconds(115), [&] { clock.advance(milliseconds(42)); });
      // Well after node 1 answered and after the deadline timer armed at
      // the start would have fired: a second loss would have shown by now.
      run.after(milliseconds(400), [&] { run.done(); });
    });
  }));
  ASSERT_TRUE(acquired.ok()) << acquired.error.message();
  ASSERT_NE(guard, nullptr);
  EXPECT_EQ(losses, 1);
  EXPECT_EQ(loss, errc::lost);
  EXPECT_TRUE(guard->lost());
  EXPECT_EQ(guard->renewals(), 0);
  EXPECT_EQ(guard->valid_until(), acquired.lock->valid_until);
}

}  // namespace
}  // namespace redlock::test
