// Mutual exclusion end to end: threads in two blocking clients increment a
// counter with a non-atomic read-modify-write (GET, then SET) under the lock.
// Any overlap of two holders would lose an increment.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
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
  // (A contended release pre-claims its client's next place; the last
  // ones, granted and never adopted, are withdrawn 10 ms later.)
  EXPECT_TRUE(
      eventually([&] { return nodes_holding(cluster, "counter") == 0u; }, milliseconds(1000)));
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

TEST(BlockingClientLifetime, AQuorumBuiltInCodeWithTooManyNodesIsAConfigError) {
  QuorumConfig too_many;
  for (std::size_t i = 0; i <= kMaxNodes; ++i) too_many.nodes.push_back(node_at(1));
  BlockingClient client(too_many);
  AcquireResult result = client.acquire(Resource("x"));
  EXPECT_EQ(result.error, errc::config_error);
}

}  // namespace
}  // namespace redlock::test

namespace redlock::test {
namespace {

// lock_async: the guard arrives on the loop thread, renews like any guard,
// and a cancel while the lock is busy ends the wait with errc::cancelled.
TEST(BlockingClientLockAsync, DeliversARenewingGuardAndCancelsAWait) {
  RedisCluster cluster{3};
  BlockingClient client(config_for(cluster, milliseconds(300)));
  std::promise<Guard> arrived;
  std::thread::id delivered_on;
  (void)client.lock_async(Resource("async"), {}, [&](Guard guard) {
    delivered_on = std::this_thread::get_id();
    arrived.set_value(std::move(guard));
  });
  Guard guard = arrived.get_future().get();
  ASSERT_TRUE(guard.owns_lock()) << guard.error().message();
  EXPECT_NE(delivered_on, std::this_thread::get_id());
  ASSERT_TRUE(eventually([&] { return guard.renewals() >= 2; }));
  EXPECT_TRUE(guard.valid());

  std::promise<Guard> waited;
  GuardOptions patient;
  patient.acquire.wait = milliseconds(30000);
  const BlockingClient::CancelLock cancel = client.lock_async(
      Resource("async"), patient, [&](Guard late) { waited.set_value(std::move(late)); });
  std::future<Guard> result = waited.get_future();
  EXPECT_EQ(result.wait_for(milliseconds(200)), std::future_status::timeout) << "still busy";
  const auto cancelled_at = std::chrono::steady_clock::now();
  cancel();
  cancel();  // a second call does nothing
  const Guard refused = result.get();
  EXPECT_LT(std::chrono::steady_clock::now() - cancelled_at, std::chrono::seconds(2));
  EXPECT_FALSE(refused.owns_lock());
  EXPECT_EQ(refused.error(), errc::cancelled);
  std::promise<ReleaseResult> released;
  guard.release_async([&](ReleaseResult outcome) { released.set_value(std::move(outcome)); });
  EXPECT_FALSE(guard.owns_lock()) << "empty at once";
  EXPECT_EQ(released.get_future().get().released, cluster.size());
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_FALSE(cluster.node(i).probe().exists(key_of("async"))) << "node " << i;
  }
}

// acquire_async: the result arrives on the loop thread with the lock on
// every node; a cancel while the lock is busy ends the wait with
// errc::cancelled and leaves nothing of the waiter's on the nodes; and
// release_async frees the lock on every node.
TEST(BlockingClientAcquireAsync, DeliversTheResultAndCancelsAWait) {
  RedisCluster cluster{3};
  BlockingClient client(config_for(cluster, milliseconds(10000)));
  std::promise<AcquireResult> arrived;
  std::thread::id delivered_on;
  (void)client.acquire_async(Resource("plain"), {}, [&](AcquireResult result) {
    delivered_on = std::this_thread::get_id();
    arrived.set_value(std::move(result));
  });
  const AcquireResult held = arrived.get_future().get();
  ASSERT_TRUE(held.ok()) << held.error.message();
  EXPECT_NE(delivered_on, std::this_thread::get_id());
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_EQ(cluster.node(i).probe().get(key_of("plain")), held.lock->value.str()) << i;
  }

  std::promise<AcquireResult> waited;
  AcquireOptions patient;
  patient.wait = milliseconds(30000);
  const BlockingClient::CancelAcquire cancel = client.acquire_async(
      Resource("plain"), patient, [&](AcquireResult late) { waited.set_value(std::move(late)); });
  std::future<AcquireResult> result = waited.get_future();
  EXPECT_EQ(result.wait_for(milliseconds(200)), std::future_status::timeout) << "still busy";
  cancel();
  const AcquireResult refused = result.get();
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.error, errc::cancelled);
  std::promise<ReleaseResult> released;
  client.release_async(*held.lock, [&](ReleaseResult outcome) { released.set_value(outcome); });
  EXPECT_EQ(released.get_future().get().released, cluster.size());
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_FALSE(cluster.node(i).probe().exists(key_of("plain"))) << "node " << i;
  }
}

}  // namespace
}  // namespace redlock::test
