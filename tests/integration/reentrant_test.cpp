// Reentrant holds: an owner taking a lock it holds gets a second hold at
// once; the lock goes when the last hold ends; a loss reaches every hold.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "harness.hpp"
#include "manual_clock.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

GuardOptions reentrant() {
  GuardOptions options;
  options.reentrant = true;
  options.acquire.wait = milliseconds(0);
  return options;
}

class ReentrantTest : public ::testing::Test {
 protected:
  RedisCluster cluster{3};
};

TEST_F(ReentrantTest, TheSameThreadTakesItAgainWithoutARoundTripAndTheLastHoldReleases) {
  BlockingClient client(config_for(cluster));
  Guard outer = client.lock(Resource("job"), reentrant());
  ASSERT_TRUE(outer.owns_lock()) << outer.error().message();
  const auto attempts = client.metrics()->acquire_attempts.load();
  {
    Guard inner = client.lock(Resource("job"), reentrant());
    ASSERT_TRUE(inner.owns_lock()) << inner.error().message();
    EXPECT_EQ(inner.lock().value, outer.lock().value);
    EXPECT_EQ(inner.acquired().attempts, 0);
    EXPECT_EQ(client.metrics()->acquire_attempts.load(), attempts) << "no round was run";
  }
  // The inner hold ended; the outer still holds the lock on the nodes.
  EXPECT_TRUE(eventually([&] { return nodes_holding(cluster, "job") == cluster.size(); }));
  EXPECT_TRUE(outer.valid());
  (void)outer.release();
  EXPECT_EQ(nodes_holding(cluster, "job"), 0u);
}

TEST_F(ReentrantTest, OffByDefaultASecondLockWaitsForTheFirst) {
  BlockingClient client(config_for(cluster));
  GuardOptions plain;
  plain.acquire.wait = milliseconds(0);
  Guard outer = client.lock(Resource("plain"), plain);
  ASSERT_TRUE(outer.owns_lock());
  const Guard inner = client.lock(Resource("plain"), plain);
  EXPECT_FALSE(inner.owns_lock());
  EXPECT_EQ(inner.error(), make_error_code(errc::not_acquired));
}

TEST_F(ReentrantTest, AnotherThreadIsAnotherOwnerUnlessBothNameOne) {
  BlockingClient client(config_for(cluster));
  Guard outer = client.lock(Resource("shared"), reentrant());
  ASSERT_TRUE(outer.owns_lock());
  bool other_thread_got_it = true;
  std::thread([&] {
    other_thread_got_it = client.lock(Resource("shared"), reentrant()).owns_lock();
  }).join();
  EXPECT_FALSE(other_thread_got_it);

  GuardOptions named = reentrant();
  named.owner = "request-42";
  Guard first = client.lock(Resource("handed"), named);
  ASSERT_TRUE(first.owns_lock());
  Guard second;
  std::thread([&] { second = client.lock(Resource("handed"), named); }).join();
  ASSERT_TRUE(second.owns_lock()) << second.error().message();
  EXPECT_EQ(second.lock().value, first.lock().value);
  (void)first.release();
  EXPECT_TRUE(eventually([&] { return nodes_holding(cluster, "handed") == cluster.size(); }))
      << "the second hold remains";
  (void)second.release();
  EXPECT_EQ(nodes_holding(cluster, "handed"), 0u);
}

TEST_F(ReentrantTest, ALossReachesEveryHoldAndALaterLockTakesItAnew) {
  BlockingClient client(config_for(cluster, milliseconds(300)));
  std::atomic<int> signals{0};
  GuardOptions options = reentrant();
  options.on_lost = [&](std::error_code) { ++signals; };
  Guard outer = client.lock(Resource("lost"), options);
  Guard inner = client.lock(Resource("lost"), options);
  ASSERT_TRUE(outer.owns_lock() && inner.owns_lock());
  const std::string value = outer.lock().value.str();
  // Taken over on every node: the next renewal is refused.
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    ASSERT_TRUE(cluster.node(i).probe().set(key_of("lost"), "thief", milliseconds(10000)));
  }
  ASSERT_TRUE(eventually([&] { return signals.load() == 2; })) << signals.load();
  EXPECT_TRUE(outer.stop_token().stop_requested());
  EXPECT_TRUE(inner.stop_token().stop_requested());
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    (void)cluster.node(i).probe().command({"DEL", key_of("lost")});
  }
  Guard fresh = client.lock(Resource("lost"), reentrant());
  ASSERT_TRUE(fresh.owns_lock()) << "a lost hold is not joined";
  EXPECT_NE(fresh.lock().value.str(), value);
  EXPECT_GE(fresh.acquired().attempts, 1);
}

TEST_F(ReentrantTest, AHoldPastItsDeadlineIsNotJoinedEvenBeforeItsLossIsDeclared) {
  // A client clock that never moves, set a minute before the steady clock
  // (more than the lock's 10 s TTL; not a fixed instant, which a machine
  // up for less time than it would not have reached yet): the hold's
  // deadline is already past as Guard::valid() sees it, while the client,
  // reading its own clock, has not declared the loss.
  const TimePoint steady_now = SteadyClock::now();
  ASSERT_GT(steady_now.time_since_epoch(), std::chrono::minutes(2)) << "the machine just booted";
  const FrozenClock frozen(steady_now - std::chrono::minutes(1));
  ClientOptions options;
  options.clock = &frozen;
  BlockingClient client(config_for(cluster), options);
  Guard outer = client.lock(Resource("stale"), reentrant());
  ASSERT_TRUE(outer.owns_lock()) << outer.error().message();
  ASSERT_FALSE(outer.stop_token().stop_requested());
  ASSERT_FALSE(outer.valid());
  const Guard inner = client.lock(Resource("stale"), reentrant());
  EXPECT_FALSE(inner.owns_lock()) << "joined a hold past its deadline";
  EXPECT_EQ(inner.error(), make_error_code(errc::not_acquired));
}

TEST_F(ReentrantTest, ASemaphorePermitIsHeldOnceByItsOwner) {
  BlockingClient client(config_for(cluster));
  Guard first = client.lock(Semaphore("pool", 2), reentrant());
  Guard again = client.lock(Semaphore("pool", 2), reentrant());
  ASSERT_TRUE(first.owns_lock() && again.owns_lock());
  EXPECT_EQ(first.lock().permit, again.lock().permit) << "a second hold, not a second permit";
  const Inspection seen = client.inspect(Semaphore("pool", 2));
  EXPECT_EQ(seen.holders.size(), 1u);
}

}  // namespace
}  // namespace redlock::test
