// Node amnesia (docs/algorithm.md, "The amnesia defence"): a node restarted without its data must
// not let a second client take a lock that the first still holds, and fencing tokens must not go
// backwards. The control test shows the fault is real.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;
using Stopwatch = SteadyClock;

class Amnesia : public ::testing::Test {
 protected:
  RedisCluster cluster{5};  // no persistence: a restart loses everything

  QuorumConfig config(bool defence) {
    QuorumConfig quorum = config_for(cluster, milliseconds(1500));
    quorum.lock.amnesia_defence = defence;
    return quorum;
  }

  // A's view of the quorum during a partition: nodes 3 and 4 unreachable
  // (their addresses refuse connections), the same keys everywhere else.
  QuorumConfig partitioned(bool defence) {
    QuorumConfig quorum = config(defence);
    for (std::size_t i : {3u, 4u}) {
      quorum.nodes[i] = node_at(unreachable_.port());
      quorum.nodes[i].name = "partitioned-" + std::to_string(i);
    }
    return quorum;
  }

  // The quorum is initialised; A, cut off from nodes 3 and 4, takes the
  // lock on 0, 1, 2; then node 2 is killed and restarts empty.
  AcquireResult hold_then_restart(bool defence) {
    {
      BlockingClient setup(config(defence));
      AcquireResult warm = setup.acquire(Resource("warm-up"));
      EXPECT_TRUE(warm.ok());
      if (warm.ok()) (void)setup.release(*warm.lock);
    }
    BlockingClient a(partitioned(defence));
    AcquireOptions fenced;
    fenced.fenced = true;
    AcquireResult held = a.acquire(Resource("doc"), fenced);
    cluster.node(2).kill9();
    cluster.node(2).restart();
    return held;
  }

  void SetUp() override { unreachable_.stop(); }  // its port now refuses connections

  RedisServer unreachable_;
};

TEST_F(Amnesia, RestartedNodeCannotGrantWhileTheHolderIsValid) {
  const AcquireResult held = hold_then_restart(true);
  ASSERT_TRUE(held.ok());
  ASSERT_EQ(held.nodes[2].status, NodeStatus::granted);
  BlockingClient b(config(true));  // connects to the restarted node afresh

  AcquireOptions once;
  once.fenced = true;
  once.wait = milliseconds(0);
  const AcquireResult refused = b.acquire(Resource("doc"), once);
  const TimePoint checked_at = Stopwatch::now();
  ASSERT_LT(checked_at, held.lock->valid_until) << "the check must happen while A is valid";
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.nodes[2].status, NodeStatus::recovering) << refused.nodes[2].detail;

  // B gets the lock only once A's hold has run out.
  AcquireOptions wait = once;
  wait.wait = milliseconds(10000);
  wait.retry_delay = milliseconds(20);
  const AcquireResult later = b.acquire(Resource("doc"), wait);
  ASSERT_TRUE(later.ok()) << later.error.message();
  EXPECT_GE(later.lock->started, held.lock->valid_until);
  EXPECT_GT(*later.lock->fence, *held.lock->fence) << "tokens never go backwards";
  // Node 2 took the merged counter back.
  const Reply counter = cluster.node(2).probe().command({"HGET", "redlock:fence", "doc"});
  ASSERT_EQ(counter.kind, Reply::Kind::bulk_string);
  EXPECT_GE(std::stoull(counter.text), *held.lock->fence);
}

TEST_F(Amnesia, RestartedNodeCannotGrantAPermitWhileItsHolderIsValid) {
  {
    BlockingClient setup(config(true));
    AcquireResult warm = setup.acquire(Resource("warm-up"));
    ASSERT_TRUE(warm.ok());
    (void)setup.release(*warm.lock);
  }
  BlockingClient a(partitioned(true));
  const AcquireResult held = a.acquire(Semaphore("seat", 1));
  ASSERT_TRUE(held.ok()) << held.error.message();
  ASSERT_EQ(held.nodes[2].status, NodeStatus::granted);
  cluster.node(2).kill9();
  cluster.node(2).restart();

  BlockingClient b(config(true));
  AcquireOptions once;
  once.wait = milliseconds(0);
  const AcquireResult refused = b.acquire(Semaphore("seat", 1), once);
  ASSERT_LT(Stopwatch::now(), held.lock->valid_until) << "the check must happen while A is valid";
  EXPECT_FALSE(refused.ok()) << "a second holder of the only permit";
  EXPECT_EQ(refused.nodes[2].status, NodeStatus::recovering) << refused.nodes[2].detail;
}

TEST_F(Amnesia, WithoutTheDefenceARestartedNodeGrantsTwice) {
  // The control: the same faults with the defence off produce the double
  // grant and a token that goes backwards — proof that the test above
  // exercises a real danger.
  const AcquireResult held = hold_then_restart(false);
  ASSERT_TRUE(held.ok());
  BlockingClient b(config(false));
  AcquireOptions once;
  once.fenced = true;
  once.wait = milliseconds(0);
  const AcquireResult second = b.acquire(Resource("doc"), once);
  ASSERT_LT(Stopwatch::now(), held.lock->valid_until);
  ASSERT_TRUE(second.ok()) << "expected the unsafe double grant: " << second.error.message();
  EXPECT_LE(*second.lock->fence, *held.lock->fence) << "the token went backwards";
}

TEST_F(Amnesia, BrandNewQuorumIsInitialisedWithoutDelay) {
  BlockingClient client(config(true));
  const auto start = Stopwatch::now();
  AcquireOptions once;
  once.wait = milliseconds(0);
  AcquireResult first = client.acquire(Resource("fresh"), once);
  ASSERT_TRUE(first.ok()) << first.error.message();
  EXPECT_LT(Stopwatch::now() - start, milliseconds(1500)) << "no max_ttl delay for a new quorum";
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_TRUE(cluster.node(i).probe().exists("redlock:node")) << "node " << i;
    EXPECT_FALSE(cluster.node(i).probe().exists("redlock:recovering")) << "node " << i;
  }
  (void)client.release(*first.lock);
}

TEST_F(Amnesia, ConcurrentRecoveriesAgree) {
  BlockingClient setup(config(true));
  AcquireOptions fenced;
  fenced.fenced = true;
  for (int i = 0; i < 3; ++i) {
    AcquireResult held = setup.acquire(Resource("counted"), fenced);
    ASSERT_TRUE(held.ok());
    (void)setup.release(*held.lock);
  }
  cluster.node(1).kill9();
  cluster.node(1).restart();
  // Two clients see the amnesiac node at once and both recover it.
  BlockingClient c1(config(true));
  BlockingClient c2(config(true));
  std::thread t1([&] { (void)c1.acquire(Resource("other-1")); });
  std::thread t2([&] { (void)c2.acquire(Resource("other-2")); });
  t1.join();
  t2.join();
  // The recovery runs beside the acquires; wait (bounded) for its marker.
  RedisProbe probe = cluster.node(1).probe();
  EXPECT_TRUE(eventually([&] { return probe.exists("redlock:node"); }));
  EXPECT_GT(probe.pttl("redlock:recovering"), 0);
  const Reply counter = probe.command({"HGET", "redlock:fence", "counted"});
  EXPECT_EQ(counter.text, "3");
}

}  // namespace
}  // namespace redlock::test
