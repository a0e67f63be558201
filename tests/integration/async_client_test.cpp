// The async client's contract: callbacks exactly once, never from inside the
// starting call, cancellable, many operations in flight on one loop.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "manual_clock.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

class AsyncClientTest : public ::testing::Test {
 protected:
  RedisCluster cluster{3};
};

TEST_F(AsyncClientTest, CallbackNeverRunsInsideTheStartingCall) {
  LoopRun run(QuorumConfig{});  // invalid: decided at once
  bool returned = false;
  bool called_before_return = false;
  int calls = 0;
  std::error_code error;
  ASSERT_TRUE(run.run([&] {
    run.client().acquire(Resource("r"), {}, [&](AcquireResult result) {
      ++calls;
      called_before_return = !returned;
      error = result.error;
      run.done();
    });
    returned = true;
  }));
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(called_before_return);
  EXPECT_EQ(error, errc::config_error);
}

TEST_F(AsyncClientTest, SixtyFourInFlightOnDistinctKeysAllSucceed) {
  LoopRun run(config_for(cluster));
  constexpr int kInFlight = 64;
  int acquired = 0;
  int released = 0;
  int callbacks = 0;
  ASSERT_TRUE(run.run([&] {
    for (int i = 0; i < kInFlight; ++i) {
      run.client().acquire(Resource("key-" + std::to_string(i)), {}, [&](AcquireResult result) {
        ++callbacks;
        if (!result.ok()) {
          if (callbacks == kInFlight * 2) run.done();
          return;
        }
        ++acquired;
        run.client().release(*result.lock, [&](ReleaseResult release) {
          if (release.released == 3) ++released;
          if (++callbacks == kInFlight * 2) run.done();
        });
      });
    }
  }));
  EXPECT_EQ(acquired, kInFlight);
  EXPECT_EQ(released, kInFlight);
}

TEST_F(AsyncClientTest, CancelWhileWaitingCompletesWithCancelled) {
  BlockingClient holder(config_for(cluster));
  AcquireResult held = holder.acquire(Resource("busy"));
  ASSERT_TRUE(held.ok());

  LoopRun run(config_for(cluster));
  std::error_code error;
  int calls = 0;
  ASSERT_TRUE(run.run([&] {
    AcquireOptions options;
    options.wait = milliseconds(60000);
    options.retry_delay = milliseconds(50);
    OperationHandle handle =
        run.client().acquire(Resource("busy"), options, [&](AcquireResult result) {
          ++calls;
          error = result.error;
          run.done();
        });
    run.after(milliseconds(150), [handle] { handle.cancel(); });
  }));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(error, errc::cancelled);
  (void)holder.release(*held.lock);
}

TEST_F(AsyncClientTest, CloseCompletesPendingOperationsWithShuttingDown) {
  BlockingClient holder(config_for(cluster));
  AcquireResult held = holder.acquire(Resource("closing"));
  ASSERT_TRUE(held.ok());

  LoopRun run(config_for(cluster));
  std::error_code error;
  int calls = 0;
  ASSERT_TRUE(run.run([&] {
    AcquireOptions options;
    options.wait = milliseconds(60000);
    run.client().acquire(Resource("closing"), options, [&](AcquireResult result) {
      ++calls;
      error = result.error;
    });
    run.after(milliseconds(100), [&] { run.done(); });
  }));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(error, errc::shutting_down);
  (void)holder.release(*held.lock);
}

TEST_F(AsyncClientTest, TooSlowAMajorityIsRefusedAndUndone) {
  // Every clock reading leaps 20 s, more than the 10 s TTL: the quorum forms
  // "too late", so the grants must be undone and the lock refused.
  LeapingClock slow(std::chrono::seconds(20));
  ClientOptions options;
  options.clock = &slow;
  LoopRun run(config_for(cluster), options);
  AcquireResult result = acquire_once(run, Resource("too-slow"));
  EXPECT_EQ(result.error, errc::validity_too_short);
  EXPECT_FALSE(result.lock.has_value());

  BlockingClient checker(config_for(cluster));
  (void)checker.release(Lock{Resource("too-slow"), LockValue("x"), milliseconds(1), {}, {}, {}});
  // The unlock was written before the client closed; give the nodes a
  // bounded moment to have run it.
  EXPECT_TRUE(eventually([&] { return nodes_holding(cluster, "too-slow") == 0; }));
}

TEST_F(AsyncClientTest, ValidityIsMeasuredOnTheInjectedClock) {
  // A clock that stands still: however long the network took in real time,
  // elapsed is zero, so validity is exactly ttl - drift (10 s - 102 ms).
  ManualClock frozen;
  ClientOptions options;
  options.clock = &frozen;
  LoopRun run(config_for(cluster), options);
  AcquireResult result = acquire_once(run, Resource("measured"));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.validity, milliseconds(9898));
  EXPECT_EQ(result.lock->valid_until - result.lock->started, milliseconds(9898));
  BlockingClient cleaner(config_for(cluster));
  (void)cleaner.release(*result.lock);
}

}  // namespace
}  // namespace redlock::test
