// Mutual exclusion end to end: threads in two blocking clients increment a
// counter with a non-atomic read-modify-write (GET, then SET) under the lock.
// Any overlap of two holders would lose an increment.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

TEST(BlockingClientContention, EightThreadsTwoClientsLoseNoIncrement) {
  RedisCluster cluster{5};
  RedisServer resource_store;  // the protected resource lives elsewhere
  QuorumConfig config = config_for(cluster);
  config.lock.retry_delay = milliseconds(2);
  BlockingClient client_a(config);
  BlockingClient client_b(config);

  constexpr int kThreads = 8;
  constexpr int kIncrements = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      BlockingClient& client = t % 2 == 0 ? client_a : client_b;
      RedisProbe store = resource_store.probe();
      AcquireOptions options;
      options.wait = milliseconds(60000);
      for (int i = 0; i < kIncrements; ++i) {
        AcquireResult held = client.acquire(Resource("counter"), options);
        if (!held.ok()) {
          ++failures;
          continue;
        }
        const auto current = store.get("counter");
        const long long value = current ? std::stoll(*current) : 0;
        if (!store.set("counter", std::to_string(value + 1))) ++failures;
        (void)client.release(*held.lock);
      }
    });
  }
  for (auto& thread : threads) thread.join();

  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(resource_store.probe().get("counter"), std::to_string(kThreads * kIncrements));
  EXPECT_EQ(nodes_holding(cluster, "counter"), 0u);
}

TEST(BlockingClientLifetime, DestroyingTheClientWhileIdleIsClean) {
  RedisCluster cluster{3};
  for (int i = 0; i < 3; ++i) {
    BlockingClient client(config_for(cluster));
    AcquireResult held = client.acquire(Resource("churn"));
    ASSERT_TRUE(held.ok());
    (void)client.release(*held.lock);
  }
}

TEST(BlockingClientLifetime, ConfigErrorsComeBackAsValues) {
  QuorumConfig empty;
  BlockingClient client(empty);
  AcquireResult result = client.acquire(Resource("x"));
  EXPECT_EQ(result.error, errc::config_error);
}

}  // namespace
}  // namespace redlock::test
