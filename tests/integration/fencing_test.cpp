// Quorum fencing tokens on real nodes: unique, and increasing across
// acquisitions that do not overlap — also across node restarts.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

AcquireOptions fenced_wait() {
  AcquireOptions options;
  options.fenced = true;
  options.wait = milliseconds(30000);
  options.retry_delay = milliseconds(2);
  return options;
}

TEST(Fencing, TokensIncreaseStrictlyAcrossClientsAndRestarts) {
  RedisCluster cluster{5, Persistence::aof_always};
  QuorumConfig config = config_for(cluster);
  config.lock.reconnect_min = milliseconds(10);
  config.lock.reconnect_max = milliseconds(100);
  std::vector<std::unique_ptr<BlockingClient>> clients;
  for (int i = 0; i < 4; ++i) clients.push_back(std::make_unique<BlockingClient>(config));

  constexpr int kAcquisitions = 1000;
  std::vector<std::uint64_t> tokens;
  tokens.reserve(kAcquisitions);
  for (int i = 0; i < kAcquisitions; ++i) {
    if (i == 300) {
      cluster.node(1).kill9();
      cluster.node(1).restart();
    }
    if (i == 650) {
      cluster.node(3).kill9();
      cluster.node(3).restart();
    }
    BlockingClient& client = *clients[static_cast<std::size_t>(i % 4)];
    AcquireResult held = client.acquire(Resource("fenced"), fenced_wait());
    ASSERT_TRUE(held.ok()) << "acquisition " << i << ": " << held.error.message();
    ASSERT_TRUE(held.lock->fence.has_value());
    tokens.push_back(*held.lock->fence);
    (void)client.release(*held.lock);
  }
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    ASSERT_GT(tokens[i], tokens[i - 1]) << "acquisition " << i;
  }
  EXPECT_EQ(tokens.front(), 1u);
}

TEST(Fencing, ConcurrentContendersNeverShareAToken) {
  RedisCluster cluster{5};
  QuorumConfig config = config_for(cluster);
  std::vector<std::unique_ptr<BlockingClient>> clients;
  for (int i = 0; i < 4; ++i) clients.push_back(std::make_unique<BlockingClient>(config));

  std::mutex mutex;
  std::vector<std::uint64_t> tokens;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 150; ++i) {
        AcquireResult held = clients[t]->acquire(Resource("shared"), fenced_wait());
        if (!held.ok() || !held.lock->fence) {
          ++failures;
          continue;
        }
        {
          std::lock_guard<std::mutex> guard(mutex);
          // Under the lock, tokens are handed out in order.
          if (!tokens.empty() && *held.lock->fence <= tokens.back()) ++failures;
          tokens.push_back(*held.lock->fence);
        }
        (void)clients[t]->release(*held.lock);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  const std::set<std::uint64_t> unique(tokens.begin(), tokens.end());
  EXPECT_EQ(unique.size(), tokens.size());
}

TEST(Fencing, PhaseTwoStoresTheTokenOnAMajority) {
  RedisCluster cluster{3};
  BlockingClient client(config_for(cluster));
  AcquireOptions options;
  options.fenced = true;
  AcquireResult first = client.acquire(Resource("doc-17"), options);
  ASSERT_TRUE(first.ok());
  (void)client.release(*first.lock);
  AcquireResult second = client.acquire(Resource("doc-17"), options);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second.lock->fence, *first.lock->fence + 1);
  std::size_t storing = 0;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    const Reply reply = cluster.node(i).probe().command({"HGET", "redlock:fence", "doc-17"});
    if (reply.kind == Reply::Kind::bulk_string &&
        reply.text == std::to_string(*second.lock->fence)) {
      ++storing;
    }
  }
  EXPECT_GE(storing, 2u);
  (void)client.release(*second.lock);
}

TEST(Fencing, UnfencedLocksCarryNoToken) {
  RedisCluster cluster{3};
  BlockingClient client(config_for(cluster));
  AcquireResult held = client.acquire(Resource("plain"));
  ASSERT_TRUE(held.ok());
  EXPECT_FALSE(held.lock->fence.has_value());
  EXPECT_FALSE(cluster.node(0).probe().exists("redlock:fence"));
  (void)client.release(*held.lock);
}

}  // namespace
}  // namespace redlock::test
