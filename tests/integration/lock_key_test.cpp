// lock_key on real nodes: each lock kind that keeps its lock at the lock
// key (the mutex, the read-write lock, the fair lock, a lock over several
// resources, an election) puts it where the pattern says, and the
// library's own keys (fence counters, queues, semaphores, channels) stay
// under key_prefix; a resource whose lock key would be one of those is
// refused; a holder that is not this library (a plain SET NX PX of another
// value, as node-redlock writes) keeps this library out.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness.hpp"

namespace redlock::test {
namespace {

class LockKeyTest : public ::testing::Test {
 protected:
  RedisCluster cluster{3};

  QuorumConfig config(const std::string& lock_key) {
    QuorumConfig result = config_for(cluster);
    result.lock.lock_key = lock_key;
    return result;
  }
  // Whether every node's `key` holds `value` (the last grants land after
  // the acquire's decision at a majority).
  bool every_node_holds(const std::string& key, const std::string& value) {
    return eventually([&] {
      for (std::size_t i = 0; i < cluster.size(); ++i) {
        if (cluster.node(i).probe().get(key) != value) return false;
      }
      return true;
    });
  }
  bool no_node_has(const std::string& key) {
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (cluster.node(i).probe().exists(key)) return false;
    }
    return true;
  }
  std::size_t keys_matching(const std::string& pattern) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      count += cluster.node(i).probe().keys(pattern).size();
    }
    return count;
  }
};

TEST_F(LockKeyTest, AMutexLivesAtTheResourcesOwnKeyAndItsCounterUnderThePrefix) {
  BlockingClient client(config("{resource}"));
  AcquireOptions fenced;
  fenced.fenced = true;
  const AcquireResult taken = client.acquire(Resource("orders:42"), fenced);
  ASSERT_TRUE(taken.ok()) << taken.error.message();
  EXPECT_TRUE(every_node_holds("orders:42", taken.lock->value.str()));
  EXPECT_EQ(keys_matching("redlock:lock:*"), 0U);
  // The fencing counter is the fence hash's field, under the prefix.
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    const Reply counter = cluster.node(i).probe().command({"HGET", "redlock:fence", "orders:42"});
    EXPECT_EQ(counter.text, std::to_string(*taken.lock->fence)) << "node " << i;
  }
  const Inspection seen = client.inspect(Resource("orders:42"));
  ASSERT_TRUE(seen.ok());
  ASSERT_TRUE(seen.holder.has_value());
  EXPECT_EQ(seen.holder->value, taken.lock->value.str());

  EXPECT_FALSE(client.release(*taken.lock).error);
  EXPECT_TRUE(no_node_has("orders:42"));
}

TEST_F(LockKeyTest, AnotherLibrarysHolderKeepsThisOneOutUntilItDeletesItsValue) {
  // Marked first: unmarked nodes that hold keys are recovered with a delay.
  initialise_quorum(cluster);
  // What node-redlock, redsync and RedLock.net write: SET key value NX PX.
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    ASSERT_TRUE(cluster.node(i).probe().set("report", "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
                                            std::chrono::milliseconds(10000)));
  }
  BlockingClient client(config("{resource}"));
  EXPECT_EQ(client.acquire(Resource("report")).error, make_error_code(errc::not_acquired));
  const Inspection seen = client.inspect(Resource("report"));
  ASSERT_TRUE(seen.holder.has_value());
  EXPECT_EQ(seen.holder->value, "0f1e2d3c4b5a69788796a5b4c3d2e1f0");
  // Its compare-and-delete.
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    const Reply deleted = cluster.node(i).probe().command(
        {"EVAL",
         "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
         "else return 0 end",
         "1", "report", "0f1e2d3c4b5a69788796a5b4c3d2e1f0"});
    EXPECT_EQ(deleted.integer, 1) << "node " << i;
  }
  const AcquireResult taken = client.acquire(Resource("report"));
  ASSERT_TRUE(taken.ok()) << taken.error.message();
  // And the library's release is a compare-and-delete the other library's
  // holder survives: a stale record of ours never deletes its value.
  EXPECT_TRUE(every_node_holds("report", taken.lock->value.str()));
}

TEST_F(LockKeyTest, EveryKindThatKeepsALockKeyKeepsItWhereThePatternSays) {
  BlockingClient client(config("app/{resource}/lock"));

  // A lock over several resources.
  const AcquireResult both = client.acquire({Resource("a"), Resource("b")});
  ASSERT_TRUE(both.ok()) << both.error.message();
  EXPECT_TRUE(every_node_holds("app/a/lock", both.lock->value.str()));
  EXPECT_TRUE(every_node_holds("app/b/lock", both.lock->value.str()));
  // It excludes a plain lock on one of its names, on the same key.
  EXPECT_EQ(client.acquire(Resource("a")).error, make_error_code(errc::not_acquired));
  EXPECT_FALSE(client.release(*both.lock).error);
  EXPECT_TRUE(no_node_has("app/a/lock"));

  // Readers: their set at the same key; a writer is kept out.
  AcquireOptions reader;
  reader.shared = true;
  const AcquireResult read = client.acquire(Resource("doc"), reader);
  ASSERT_TRUE(read.ok()) << read.error.message();
  EXPECT_TRUE(eventually([&] {
    return cluster.node(0).probe().command({"TYPE", "app/doc/lock"}).text == "zset";
  }));
  EXPECT_EQ(client.acquire(Resource("doc")).error, make_error_code(errc::not_acquired));
  EXPECT_FALSE(client.release(*read.lock).error);

  // The fair lock: its lock at the key, its queue under the prefix.
  AcquireOptions fair;
  fair.fair = true;
  const AcquireResult first = client.acquire(Resource("line"), fair);
  ASSERT_TRUE(first.ok()) << first.error.message();
  EXPECT_TRUE(every_node_holds("app/line/lock", first.lock->value.str()));
  AcquireOptions waiting = fair;
  waiting.retry_count = 1;
  waiting.retry_delay = std::chrono::milliseconds(20);
  EXPECT_EQ(client.acquire(Resource("line"), waiting).error, make_error_code(errc::not_acquired));
  // At the pattern's key only the lock; the queue is under the prefix.
  EXPECT_EQ(keys_matching("app/line*"), cluster.size());
  EXPECT_EQ(keys_matching("app/*queue*"), 0U);
  EXPECT_FALSE(client.release(*first.lock).error);

  // An election: its lock is the resource "election:NAME"'s.
  Guard leader = client.campaign(Election("primary"));
  ASSERT_TRUE(leader) << leader.error().message();
  EXPECT_TRUE(every_node_holds("app/election:primary/lock", leader.lock().value.str()));
  const LeaderResult seen = client.leader(Election("primary"));
  ASSERT_TRUE(seen.leader.has_value()) << seen.error.message();
  EXPECT_FALSE(leader.release().error);

  EXPECT_EQ(keys_matching("redlock:lock:*"), 0U);
}

TEST_F(LockKeyTest, ASemaphoreKeepsItsOwnKeysWhateverThePattern) {
  BlockingClient client(config("{resource}"));
  const AcquireResult permit = client.acquire(Semaphore("pool", 2));
  ASSERT_TRUE(permit.ok()) << permit.error.message();
  EXPECT_TRUE(every_node_holds("redlock:sem:pool:" + std::to_string(*permit.lock->permit),
                               permit.lock->value.str()));
  EXPECT_TRUE(no_node_has("pool"));
  EXPECT_FALSE(client.release(*permit.lock).error);
}

TEST_F(LockKeyTest, UnmarkedNodesHoldingAnyKeyAreRecoveredWithTheDelay) {
  // With "{resource}" the recovery probe's glob is "*": application data
  // (or another library's locks) on nodes without a marker is taken for
  // lock data, and the nodes are recovered with the max_ttl delay rather
  // than initialised as a brand-new quorum.
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    ASSERT_TRUE(cluster.node(i).probe().set("orders:42", "application data"));
  }
  BlockingClient client(config("{resource}"));
  EXPECT_FALSE(client.acquire(Resource("job")).ok());
  EXPECT_TRUE(eventually([&] {
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (cluster.node(i).probe().pttl("redlock:recovering") <= 0) return false;
    }
    return true;
  }));
}

TEST_F(LockKeyTest, AResourceWhoseLockKeyIsOneOfTheLibrarysOwnKeysIsRefused) {
  initialise_quorum(cluster);
  BlockingClient client(config("{resource}"));
  for (const char* name : {"redlock:node", "redlock:fence", "redlock:recovering", "redlock:queue:x",
                           "redlock:sem:pool:0", "redlock:permits:pool"}) {
    EXPECT_EQ(client.acquire(Resource(name)).error, make_error_code(errc::invalid_argument))
        << name;
    EXPECT_EQ(client.inspect(Resource(name)).error, make_error_code(errc::invalid_argument))
        << name;
  }
  EXPECT_EQ(client.acquire({Resource("a"), Resource("redlock:node")}).error,
            make_error_code(errc::invalid_argument));
  // A stale or forged record naming one is refused too: the marker stays.
  const TimePoint now = SteadyClock::now();
  const Lock forged{Resource("redlock:node"),        LockValue("v"),
                    std::chrono::milliseconds(1000), now,
                    now + std::chrono::seconds(1),   std::nullopt};
  EXPECT_EQ(client.release(forged).error, make_error_code(errc::invalid_argument));
  EXPECT_EQ(client.extend(forged).error, make_error_code(errc::invalid_argument));
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_TRUE(cluster.node(i).probe().exists("redlock:node")) << "node " << i;
  }
  // The same names under the default pattern are ordinary locks.
  BlockingClient usual(config_for(cluster));
  const AcquireResult taken = usual.acquire(Resource("redlock:node"));
  ASSERT_TRUE(taken.ok()) << taken.error.message();
  EXPECT_TRUE(every_node_holds("redlock:lock:redlock:node", taken.lock->value.str()));
}

}  // namespace
}  // namespace redlock::test
