// Release wake-ups: a waiter retries when the holder releases, not when its
// (long) retry delay runs out; and its subscriptions go away afterwards.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;
using Stopwatch = std::chrono::steady_clock;

TEST(Wakeup, WaiterWithALongRetryDelayAcquiresPromptlyAfterRelease) {
  RedisCluster cluster{3};
  BlockingClient holder_client(config_for(cluster));
  BlockingClient waiter_client(config_for(cluster));
  AcquireResult held = holder_client.acquire(Resource("handoff"));
  ASSERT_TRUE(held.ok());

  AcquireResult waited;
  Stopwatch::time_point acquired_at{};
  std::thread waiter([&] {
    AcquireOptions options;
    options.retry_delay = milliseconds(60000);  // the fallback would take ~a minute
    options.wait = milliseconds(10000);
    waited = waiter_client.acquire(Resource("handoff"), options);
    acquired_at = Stopwatch::now();
  });
  // Release once the waiter is subscribed on every node (bounded wait).
  const std::string channel = "redlock:released:handoff";
  EXPECT_TRUE(subscribers_become(cluster, channel, 1));
  const auto released_at = Stopwatch::now();
  (void)holder_client.release(*held.lock);
  waiter.join();

  ASSERT_TRUE(waited.ok()) << waited.error.message();
  EXPECT_LT(acquired_at - released_at, milliseconds(1000));
  (void)waiter_client.release(*waited.lock);

  // The waiter left: no subscription lingers on any node.
  EXPECT_TRUE(subscribers_become(cluster, channel, 0));
}

// The subscriber connections of a client come up with its first waiter;
// a waiter on another resource later is subscribed on them at once, not
// only at their next reconnect.
TEST(Wakeup, AWaiterOnASecondResourceIsSubscribedOnTheConnectionsAlreadyUp) {
  RedisCluster cluster{3};
  BlockingClient holder_client(config_for(cluster));
  BlockingClient waiter_client(config_for(cluster));
  AcquireOptions options;
  options.retry_delay = milliseconds(60000);  // the fallback would take ~a minute
  options.wait = milliseconds(10000);
  for (const std::string resource : {"first", "second"}) {
    AcquireResult held = holder_client.acquire(Resource(resource));
    ASSERT_TRUE(held.ok()) << resource;
    AcquireResult waited;
    std::thread waiter([&] { waited = waiter_client.acquire(Resource(resource), options); });
    const std::string channel = "redlock:released:" + resource;
    EXPECT_TRUE(subscribers_become(cluster, channel, 1)) << resource << " never subscribed";
    (void)holder_client.release(*held.lock);
    waiter.join();
    ASSERT_TRUE(waited.ok()) << resource << ": " << waited.error.message();
    (void)waiter_client.release(*waited.lock);
  }
}

TEST(Wakeup, SubscriptionsAreDroppedWhenAWaiterGivesUp) {
  RedisCluster cluster{3};
  BlockingClient client(config_for(cluster));
  AcquireResult held = client.acquire(Resource("held"));
  ASSERT_TRUE(held.ok());
  AcquireOptions options;
  options.wait = milliseconds(300);
  options.retry_delay = milliseconds(50);
  AcquireResult gave_up = client.acquire(Resource("held"), options);
  EXPECT_EQ(gave_up.error, errc::not_acquired);
  const std::string channel = "redlock:released:held";
  EXPECT_TRUE(subscribers_become(cluster, channel, 0));
  (void)client.release(*held.lock);
}

}  // namespace
}  // namespace redlock::test
