// The fair lock on real nodes: waiters served in the order of their
// tickets, no newcomer ahead of a waiter in line, a dead waiter holding the
// line up for a bounded time, and exclusion with unfair clients kept.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

AcquireOptions fair(milliseconds wait = milliseconds(10000)) {
  AcquireOptions options;
  options.fair = true;
  options.wait = wait;
  return options;
}

class FairTest : public ::testing::Test {
 protected:
  RedisCluster cluster{5};
  void SetUp() override { initialise_quorum(cluster); }

  // How many waiters node i lists in `resource`'s queue.
  long long queued_on(std::size_t i, const std::string& resource) {
    return cluster.node(i).probe().command({"ZCARD", "redlock:queue:" + resource}).integer;
  }
  // Whether a majority lists `count` waiters.
  bool majority_queued(const std::string& resource, long long count) {
    std::size_t nodes = 0;
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (queued_on(i, resource) == count) ++nodes;
    }
    return nodes >= 3;
  }
};

TEST_F(FairTest, AFreeResourceIsTakenInOneRoundAndLeavesNoQueue) {
  BlockingClient client(config_for(cluster));
  const AcquireResult held = client.acquire(Resource("job"), fair());
  ASSERT_TRUE(held.ok()) << held.error.message();
  EXPECT_EQ(held.attempts, 1);
  EXPECT_FALSE(held.lock->queue_id.empty());
  EXPECT_EQ(client.release(*held.lock).released, 5u);
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_EQ(queued_on(i, "job"), 0) << "node " << i;
  }
}

TEST_F(FairTest, WaitersAreServedInTheOrderTheyCame) {
  QuorumConfig config = config_for(cluster);
  BlockingClient holder(config);
  const AcquireResult held = holder.acquire(Resource("job"), fair());
  ASSERT_TRUE(held.ok());
  constexpr int kWaiters = 5;
  std::vector<std::unique_ptr<BlockingClient>> clients;
  for (int i = 0; i < kWaiters; ++i) clients.push_back(std::make_unique<BlockingClient>(config));
  std::mutex order_mutex;
  std::vector<int> order;
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&, i] {
      AcquireOptions options = fair();
      // Only the release wakes them in time: their own retries are slow.
      options.retry_delay = milliseconds(2000);
      const AcquireResult got =
          clients[static_cast<std::size_t>(i)]->acquire(Resource("job"), options);
      if (!got.ok()) return;
      {
        std::lock_guard<std::mutex> lock(order_mutex);
        order.push_back(i);
      }
      std::this_thread::sleep_for(milliseconds(10));
      (void)clients[static_cast<std::size_t>(i)]->release(*got.lock);
    });
    // The next one comes once this one's ticket is recorded on a majority.
    ASSERT_TRUE(eventually([&] { return majority_queued("job", i + 1); })) << "waiter " << i;
  }
  (void)holder.release(*held.lock);
  for (std::thread& thread : waiters) thread.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST_F(FairTest, ANewcomerDoesNotGoAheadOfAWaiterInLine) {
  QuorumConfig config = config_for(cluster);
  BlockingClient holder(config);
  BlockingClient waiter(config);
  BlockingClient newcomer(config);
  const AcquireResult held = holder.acquire(Resource("job"), fair());
  ASSERT_TRUE(held.ok());
  AcquireResult waited;
  std::thread line([&] { waited = waiter.acquire(Resource("job"), fair()); });
  ASSERT_TRUE(eventually([&] { return majority_queued("job", 1); }));
  // The resource is free on the nodes, but the waiter is first in line.
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    (void)cluster.node(i).probe().command({"DEL", key_of("job")});
  }
  const AcquireResult jumped = newcomer.acquire(Resource("job"), fair(milliseconds(0)));
  EXPECT_EQ(jumped.error, make_error_code(errc::not_acquired)) << "the newcomer went first";
  line.join();
  ASSERT_TRUE(waited.ok()) << waited.error.message();
  (void)waiter.release(*waited.lock);
}

TEST_F(FairTest, AWaiterThatDiedHoldsTheLineUpOnlyUntilItsPlaceExpires) {
  BlockingClient client(config_for(cluster));
  // A waiter that died in line: ticket 1, its place renewed last just now.
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    RedisProbe probe = cluster.node(i).probe();
    const Reply now = probe.command({"TIME"});
    ASSERT_EQ(now.elements.size(), 2u);
    const long long ms =
        std::stoll(now.elements[0].text) * 1000 + std::stoll(now.elements[1].text) / 1000;
    (void)probe.command({"ZADD", "redlock:queue:job", "1", "ghost"});
    (void)probe.command({"ZADD", "redlock:queue-due:job", std::to_string(ms + 400), "ghost"});
  }
  const AcquireResult got = client.acquire(Resource("job"), fair(milliseconds(3000)));
  ASSERT_TRUE(got.ok()) << "the dead waiter held the line: " << got.error.message();
  EXPECT_GT(got.attempts, 1) << "it went ahead of a live place";
  (void)client.release(*got.lock);
}

TEST_F(FairTest, AFairAcquireThatGivesUpLeavesItsPlace) {
  QuorumConfig config = config_for(cluster);
  BlockingClient holder(config);
  BlockingClient waiter(config);
  const AcquireResult held = holder.acquire(Resource("job"));
  ASSERT_TRUE(held.ok());
  const AcquireResult gave_up = waiter.acquire(Resource("job"), fair(milliseconds(300)));
  EXPECT_EQ(gave_up.error, make_error_code(errc::not_acquired));
  EXPECT_TRUE(eventually([&] {
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (queued_on(i, "job") != 0) return false;
    }
    return true;
  })) << "a place stayed in line";
  (void)holder.release(*held.lock);
}

TEST_F(FairTest, AGuardedFairLockRenewsAndItsReleaseLeavesTheLine) {
  BlockingClient client(config_for(cluster, milliseconds(300)));
  GuardOptions options;
  options.acquire.fair = true;
  options.acquire.wait = milliseconds(5000);
  {
    BlockingClient other(config_for(cluster, milliseconds(300)));
    const AcquireResult first = other.acquire(Resource("job"), fair());
    ASSERT_TRUE(first.ok());
    std::thread releaser([&] {
      std::this_thread::sleep_for(milliseconds(100));
      (void)other.release(*first.lock);
    });
    Guard guard = client.lock(Resource("job"), options);  // waits in line
    releaser.join();
    ASSERT_TRUE(guard.owns_lock()) << guard.error().message();
    EXPECT_TRUE(eventually([&] { return guard.renewals() >= 3; }));
    EXPECT_TRUE(guard.valid());
  }
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_EQ(queued_on(i, "job"), 0) << "node " << i;
  }
}

TEST_F(FairTest, FairAndUnfairClientsKeepExclusion) {
  QuorumConfig config = config_for(cluster);
  config.lock.retry_count = -1;
  BlockingClient a(config);
  BlockingClient b(config);
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      BlockingClient& client = t % 2 == 0 ? a : b;
      AcquireOptions options;
      options.fair = t < 2;
      options.wait = milliseconds(5000);
      options.retry_delay = milliseconds(5);
      for (int i = 0; i < 12; ++i) {
        const AcquireResult held = client.acquire(Resource("job"), options);
        if (!held.ok()) continue;
        if (++inside != 1) ++overlaps;
        std::this_thread::sleep_for(milliseconds(2));
        --inside;
        ++done;
        (void)client.release(*held.lock);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_GT(done.load(), 0);
}

TEST_F(FairTest, FairAndSharedTogetherAreRefused) {
  BlockingClient client(config_for(cluster));
  AcquireOptions options = fair();
  options.shared = true;
  EXPECT_EQ(client.acquire(Resource("job"), options).error,
            make_error_code(errc::invalid_argument));
}

}  // namespace
}  // namespace redlock::test
