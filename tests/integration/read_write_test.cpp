// The read side of a read-write lock on real nodes: readers share a
// resource and exclude its writers (a plain lock on it is its writer), a
// waiting writer keeps new readers out, readers renew, are fenced after the
// writers before them and leave nothing behind.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

AcquireOptions reader(std::optional<bool> fenced = std::nullopt) {
  AcquireOptions options;
  options.shared = true;
  options.fenced = fenced;
  return options;
}

class ReadWriteTest : public ::testing::Test {
 protected:
  RedisCluster cluster{5};

  void SetUp() override { initialise_quorum(cluster); }

  // The key's type on node i ("zset" while readers hold it).
  std::string type_on(std::size_t i, const std::string& resource) {
    return cluster.node(i).probe().command({"TYPE", key_of(resource)}).text;
  }
  // How many nodes hold `resource` reserved for a waiting writer.
  std::size_t nodes_reserved(const std::string& resource) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (cluster.node(i).probe().get(key_of(resource)) == "writer-waiting") ++count;
    }
    return count;
  }
  // How many nodes list `value` among the readers of `resource`.
  std::size_t nodes_listing(const std::string& resource, const std::string& value) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      const Reply score = cluster.node(i).probe().command({"ZSCORE", key_of(resource), value});
      if (score.kind == Reply::Kind::bulk_string) ++count;
    }
    return count;
  }
};

TEST_F(ReadWriteTest, ReadersShareAndKeepAWriterOut) {
  BlockingClient client(config_for(cluster));
  const AcquireResult first = client.acquire(Resource("doc"), reader());
  const AcquireResult second = client.acquire(Resource("doc"), reader());
  ASSERT_TRUE(first.ok()) << first.error.message();
  ASSERT_TRUE(second.ok()) << second.error.message();
  EXPECT_EQ(first.attempts, 1);
  EXPECT_EQ(second.attempts, 1) << "a second reader shares at once";
  EXPECT_TRUE(first.lock->shared);
  EXPECT_TRUE(eventually([&] { return nodes_listing("doc", second.lock->value.str()) == 5; }));
  EXPECT_EQ(type_on(0, "doc"), "zset");

  const AcquireResult writer = client.acquire(Resource("doc"));
  EXPECT_EQ(writer.error, make_error_code(errc::not_acquired));

  // One reader gone, the other still keeps the writer out.
  EXPECT_EQ(client.release(*first.lock).released, 5u);
  EXPECT_EQ(client.acquire(Resource("doc")).error, make_error_code(errc::not_acquired));
  EXPECT_EQ(client.release(*second.lock).released, 5u);
  // The writers refused meanwhile were try-locks, which reserve nothing:
  // the last reader's release leaves the resource free for a reader as for
  // a writer.
  EXPECT_EQ(nodes_reserved("doc"), 0u);
  const AcquireResult again = client.acquire(Resource("doc"), reader());
  ASSERT_TRUE(again.ok()) << again.error.message();
  EXPECT_EQ(client.release(*again.lock).released, 5u);
  const AcquireResult after = client.acquire(Resource("doc"));
  ASSERT_TRUE(after.ok()) << after.error.message();
  EXPECT_EQ(after.attempts, 1);
  (void)client.release(*after.lock);
  EXPECT_EQ(nodes_holding(cluster, "doc"), 0u);

  // Readers no writer waited for leave nothing behind.
  const AcquireResult alone = client.acquire(Resource("doc"), reader());
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ(client.release(*alone.lock).released, 5u);
  EXPECT_EQ(nodes_holding(cluster, "doc"), 0u);
}

TEST_F(ReadWriteTest, AWriterKeepsReadersOut) {
  BlockingClient client(config_for(cluster));
  const AcquireResult writer = client.acquire(Resource("doc"));
  ASSERT_TRUE(writer.ok());
  const AcquireResult refused = client.acquire(Resource("doc"), reader());
  EXPECT_EQ(refused.error, make_error_code(errc::not_acquired));
  for (const NodeOutcome& node : refused.nodes) {
    EXPECT_TRUE(node.status == NodeStatus::busy || node.status == NodeStatus::pending)
        << to_string(node.status) << " " << node.detail;
  }
  // Nothing of the refused reader on any node: the key is the writer's.
  EXPECT_TRUE(eventually([&] {
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (cluster.node(i).probe().get(key_of("doc")) != writer.lock->value.str()) return false;
    }
    return true;
  }));
  (void)client.release(*writer.lock);
  const AcquireResult now = client.acquire(Resource("doc"), reader());
  ASSERT_TRUE(now.ok()) << now.error.message();
  (void)client.release(*now.lock);
}

TEST_F(ReadWriteTest, AWaitingWriterKeepsNewReadersOutButLetsReadersInRenew) {
  BlockingClient client(config_for(cluster));
  const AcquireResult in = client.acquire(Resource("doc"), reader());
  ASSERT_TRUE(in.ok());
  // A waiting writer's attempt, refused by the reader, marks it waiting
  // (for its own ttl) on the nodes it asked; the mark outlives its wait.
  AcquireOptions writer;
  writer.ttl = milliseconds(3000);
  writer.fair = false;
  writer.wait = milliseconds(300);
  EXPECT_FALSE(client.acquire(Resource("doc"), writer).ok());
  EXPECT_TRUE(eventually([&] { return nodes_listing("doc", "writer-waiting") == 5; }));

  const AcquireResult late = client.acquire(Resource("doc"), reader());
  EXPECT_EQ(late.error, make_error_code(errc::not_acquired)) << "a new reader overtook a writer";
  // The reader already in renews.
  const ExtendResult renewed = client.extend(*in.lock);
  EXPECT_TRUE(renewed.ok()) << renewed.error.message();

  // Once the last reader leaves, the resource is reserved for the writer
  // (for what is left of its mark): readers are still refused, the writer
  // is next.
  EXPECT_EQ(client.release(*in.lock).released, 5u);
  EXPECT_EQ(nodes_reserved("doc"), 5u);
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    const long long left = cluster.node(i).probe().pttl(key_of("doc"));
    EXPECT_GT(left, 0) << "node " << i;
    EXPECT_LE(left, 3000) << "node " << i << ": the reservation outlives the writer's mark";
  }
  EXPECT_EQ(client.acquire(Resource("doc"), reader()).error, make_error_code(errc::not_acquired));
  const AcquireResult taken = client.acquire(Resource("doc"), writer);
  ASSERT_TRUE(taken.ok()) << taken.error.message();
  (void)client.release(*taken.lock);
}

TEST_F(ReadWriteTest, TheReadersKeyExpiresWithTheLatestReader) {
  BlockingClient client(config_for(cluster));
  AcquireOptions brief = reader();
  brief.ttl = milliseconds(400);
  AcquireOptions longer = reader();
  longer.ttl = milliseconds(4000);
  // The long one first: the key must not take the newer, shorter deadline.
  const AcquireResult long_one = client.acquire(Resource("doc"), longer);
  const AcquireResult short_one = client.acquire(Resource("doc"), brief);
  ASSERT_TRUE(short_one.ok());
  ASSERT_TRUE(long_one.ok());
  EXPECT_TRUE(eventually([&] { return nodes_listing("doc", short_one.lock->value.str()) == 5; }));
  // Every node granted the short reader before now, so its deadline on
  // every node has passed 400 ms from now (a majority's view may say so
  // earlier than the last node's).
  const auto short_ended_everywhere = std::chrono::steady_clock::now() + milliseconds(400);
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    const long long left = cluster.node(i).probe().pttl(key_of("doc"));
    EXPECT_GT(left, 1000) << "node " << i << ": the key must live as long as its latest reader";
  }
  // The short reader's time runs out on the nodes (an inspection lists
  // live readers only): extending it fails, the other holds.
  EXPECT_TRUE(eventually([&] { return client.inspect(Resource("doc")).readers.size() == 1; },
                         milliseconds(3000)));
  EXPECT_EQ(client.extend(*short_one.lock).error, make_error_code(errc::lost));
  EXPECT_TRUE(client.extend(*long_one.lock).ok());
  // The last live reader gone, the key goes with it (and with it the
  // expired one's entry), once the short reader has expired on every node.
  std::this_thread::sleep_until(short_ended_everywhere + milliseconds(20));
  EXPECT_EQ(client.release(*long_one.lock).released, 5u);
  EXPECT_EQ(nodes_holding(cluster, "doc"), 0u);
}

TEST_F(ReadWriteTest, AGuardedReaderRenewsAndItsLastReleaseWakesAWaitingWriter) {
  QuorumConfig config = config_for(cluster, milliseconds(300));
  BlockingClient readers(config);
  BlockingClient writers(config);
  GuardOptions shared;
  shared.acquire.shared = true;
  Guard guard = readers.lock(Resource("doc"), shared);
  ASSERT_TRUE(guard.owns_lock()) << guard.error().message();
  EXPECT_TRUE(eventually([&] { return guard.renewals() >= 4; }));
  EXPECT_TRUE(guard.valid()) << "renewed past its ttl";

  AcquireResult written;
  std::atomic<bool> done{false};
  std::thread waiting([&] {
    AcquireOptions patient;
    patient.retry_delay = milliseconds(60000);  // the fallback would take ~a minute
    patient.wait = milliseconds(10000);
    written = writers.acquire(Resource("doc"), patient);
    done = true;
  });
  // Released once the writer is in the fair queue and listens on every
  // node (bounded wait).
  EXPECT_TRUE(eventually([&] {
    std::size_t queued = 0;
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (cluster.node(i).probe().command({"ZCARD", "redlock:queue:doc"}).integer == 1) ++queued;
    }
    return queued > cluster.size() / 2;
  }));
  EXPECT_TRUE(wake_listeners_become(cluster, 1));
  EXPECT_FALSE(done.load()) << "the writer got in while a reader held the resource";
  (void)guard.release();
  EXPECT_TRUE(eventually([&] { return done.load(); }, milliseconds(3000)))
      << "not woken by the last reader's release";
  waiting.join();
  ASSERT_TRUE(written.ok()) << written.error.message();
  (void)writers.release(*written.lock);
}

TEST_F(ReadWriteTest, AReaderLosingItsPlaceIsToldByItsGuard) {
  BlockingClient client(config_for(cluster, milliseconds(300)));
  std::atomic<bool> lost{false};
  GuardOptions shared;
  shared.acquire.shared = true;
  shared.on_lost = [&](std::error_code) { lost = true; };
  Guard guard = client.lock(Resource("doc"), shared);
  ASSERT_TRUE(guard.owns_lock());
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    (void)cluster.node(i).probe().command({"ZREM", key_of("doc"), guard.lock().value.str()});
  }
  EXPECT_TRUE(eventually([&] { return lost.load(); }, milliseconds(3000)));
  EXPECT_FALSE(guard.valid());
}

TEST_F(ReadWriteTest, FencedReadersAreOrderedAfterTheWritersBeforeThem) {
  BlockingClient client(config_for(cluster));
  AcquireOptions fenced_writer;
  fenced_writer.fenced = true;
  const AcquireResult w1 = client.acquire(Resource("doc"), fenced_writer);
  ASSERT_TRUE(w1.ok() && w1.lock->fence);
  (void)client.release(*w1.lock);
  const AcquireResult r1 = client.acquire(Resource("doc"), reader(true));
  const AcquireResult r2 = client.acquire(Resource("doc"), reader(true));
  ASSERT_TRUE(r1.ok() && r1.lock->fence) << r1.error.message();
  ASSERT_TRUE(r2.ok() && r2.lock->fence) << r2.error.message();
  EXPECT_GT(*r1.lock->fence, *w1.lock->fence);
  EXPECT_GT(*r2.lock->fence, *r1.lock->fence) << "two readers never share a token";
  (void)client.release(*r1.lock);
  (void)client.release(*r2.lock);
  const AcquireResult w2 = client.acquire(Resource("doc"), fenced_writer);
  ASSERT_TRUE(w2.ok() && w2.lock->fence);
  EXPECT_GT(*w2.lock->fence, *r2.lock->fence);
  (void)client.release(*w2.lock);
}

TEST_F(ReadWriteTest, AWritersStaleRecordOnAReadersKeyIsNotHeldRatherThanAnError) {
  BlockingClient client(config_for(cluster));
  AcquireOptions brief;
  brief.ttl = milliseconds(200);
  const AcquireResult writer = client.acquire(Resource("doc"), brief);
  ASSERT_TRUE(writer.ok());
  // The writer's lock expires and readers take the resource.
  EXPECT_TRUE(eventually([&] { return nodes_holding(cluster, "doc") == 0; }));
  const AcquireResult readers = client.acquire(Resource("doc"), reader());
  ASSERT_TRUE(readers.ok());
  const ExtendResult extended = client.extend(*writer.lock);
  EXPECT_EQ(extended.error, make_error_code(errc::lost));
  for (const NodeOutcome& node : extended.nodes) {
    EXPECT_NE(node.status, NodeStatus::error) << node.detail;
  }
  const ReleaseResult released = client.release(*writer.lock);
  EXPECT_EQ(released.released, 0u);
  for (const NodeOutcome& node : released.nodes) {
    EXPECT_NE(node.status, NodeStatus::error) << node.detail;
  }
  // The readers are untouched.
  EXPECT_EQ(nodes_listing("doc", readers.lock->value.str()), 5u);
  (void)client.release(*readers.lock);
}

TEST_F(ReadWriteTest, ASetOfResourcesIsAWriterOfEachOfThem) {
  BlockingClient client(config_for(cluster));
  const AcquireResult read_b = client.acquire(Resource("b"), reader());
  ASSERT_TRUE(read_b.ok());
  const AcquireResult both = client.acquire(std::vector<Resource>{Resource("a"), Resource("b")});
  EXPECT_EQ(both.error, make_error_code(errc::not_acquired));
  EXPECT_TRUE(eventually([&] { return nodes_holding(cluster, "a") == 0; }))
      << "the refused set left a key behind";
  (void)client.release(*read_b.lock);
  const AcquireResult now = client.acquire(std::vector<Resource>{Resource("a"), Resource("b")});
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(client.acquire(Resource("a"), reader()).error, make_error_code(errc::not_acquired));
  (void)client.release(*now.lock);
}

TEST_F(ReadWriteTest, AReentrantWriterNeverJoinsAReadHoldOfItsOwner) {
  BlockingClient client(config_for(cluster));
  GuardOptions read;
  read.reentrant = true;
  read.acquire.shared = true;
  Guard outer = client.lock(Resource("doc"), read);
  ASSERT_TRUE(outer.owns_lock());
  // A nested reader joins: no round trip, the same lock.
  Guard nested = client.lock(Resource("doc"), read);
  ASSERT_TRUE(nested.owns_lock());
  EXPECT_EQ(nested.lock().value, outer.lock().value);
  GuardOptions write;
  write.reentrant = true;
  write.acquire.wait = milliseconds(0);
  Guard writer = client.lock(Resource("doc"), write);
  EXPECT_FALSE(writer.owns_lock()) << "a write hold joined a read hold";
  EXPECT_EQ(writer.error(), make_error_code(errc::not_acquired));
}

TEST_F(ReadWriteTest, InspectListsTheReadersAMajorityHolds) {
  BlockingClient client(config_for(cluster));
  const AcquireResult r1 = client.acquire(Resource("doc"), reader());
  const AcquireResult r2 = client.acquire(Resource("doc"), reader());
  ASSERT_TRUE(r1.ok() && r2.ok());
  EXPECT_TRUE(eventually([&] { return nodes_listing("doc", r2.lock->value.str()) == 5; }));
  const Inspection seen = client.inspect(Resource("doc"));
  ASSERT_TRUE(seen.ok()) << seen.error.message();
  EXPECT_FALSE(seen.holder.has_value()) << "readers are no single holder";
  std::set<std::string> values;
  for (const HolderView& holder : seen.readers) {
    values.insert(holder.value);
    EXPECT_GT(holder.validity.count(), 0);
    EXPECT_LE(holder.validity, milliseconds(10000));
  }
  EXPECT_EQ(values, (std::set<std::string>{r1.lock->value.str(), r2.lock->value.str()}));
  for (const NodeInspection& node : seen.nodes) {
    EXPECT_TRUE(node.answered) << node.detail;
    EXPECT_EQ(node.key.readers.size(), 2u) << node.name;
  }
  (void)client.release(*r1.lock);
  (void)client.release(*r2.lock);
}

TEST_F(ReadWriteTest, AStreamOfOverlappingReadersDoesNotStarveAWriter) {
  // Four readers that always overlap (each re-enters as soon as it
  // leaves, three others inside): without the waiting writer's mark some
  // reader would always hold the resource.
  QuorumConfig config = config_for(cluster);
  BlockingClient readers(config);
  BlockingClient writers(config);
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::this_thread::sleep_for(milliseconds(10 * t));  // staggered entries
      AcquireOptions options = reader();
      options.wait = milliseconds(5000);
      options.retry_delay = milliseconds(5);
      for (int i = 0; i < 400 && !stop.load(); ++i) {
        const AcquireResult held = readers.acquire(Resource("doc"), options);
        if (!held.ok()) continue;
        ++reads;
        std::this_thread::sleep_for(milliseconds(40));
        (void)readers.release(*held.lock);
      }
    });
  }
  ASSERT_TRUE(eventually([&] { return reads.load() >= 6; }));
  AcquireOptions writer;
  // A generous bound (here it takes tens of milliseconds: the readers
  // inside hold 40 ms each); without the mark the writer waits for a gap
  // in the stream, seconds.
  writer.wait = milliseconds(1000);
  writer.retry_delay = milliseconds(10);
  const AcquireResult written = writers.acquire(Resource("doc"), writer);
  if (written.ok()) (void)writers.release(*written.lock);
  stop = true;
  for (std::thread& thread : threads) thread.join();
  EXPECT_TRUE(written.ok()) << "the writer starved: " << written.error.message() << " after "
                            << written.attempts << " attempts";
}

TEST_F(ReadWriteTest, ConcurrentReadersAndWritersNeverOverlapAWriter) {
  // Threads of two clients take the read or the write side of one resource
  // for a short while, and count who is inside; a writer inside must be
  // alone.
  QuorumConfig config = config_for(cluster);
  config.lock.retry_count = -1;
  BlockingClient a(config);
  BlockingClient b(config);
  std::atomic<int> readers_in{0};
  std::atomic<int> writers_in{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> reads{0};
  std::atomic<int> writes{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      BlockingClient& client = t % 2 == 0 ? a : b;
      const bool shared = t < 4;
      AcquireOptions options;
      options.shared = shared;
      options.wait = milliseconds(5000);
      options.retry_delay = milliseconds(5);
      for (int i = 0; i < 15; ++i) {
        const AcquireResult held = client.acquire(Resource("doc"), options);
        if (!held.ok()) continue;
        if (shared) {
          ++readers_in;
          if (writers_in.load() != 0) ++overlaps;
          std::this_thread::sleep_for(milliseconds(2));
          if (writers_in.load() != 0) ++overlaps;
          --readers_in;
          ++reads;
        } else {
          if (++writers_in != 1 || readers_in.load() != 0) ++overlaps;
          std::this_thread::sleep_for(milliseconds(2));
          if (writers_in.load() != 1 || readers_in.load() != 0) ++overlaps;
          --writers_in;
          ++writes;
        }
        (void)client.release(*held.lock);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_GT(writes.load(), 0) << "writers starved";
  // No reader or writer is left on any node (once the undos of the last
  // failed attempts landed). A writer's reservation may be: a writer that
  // marked itself waiting and then won elsewhere leaves it to expire with
  // its mark.
  EXPECT_TRUE(eventually([&] {
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      RedisProbe probe = cluster.node(i).probe();
      if (probe.exists(key_of("doc")) && probe.get(key_of("doc")) != "writer-waiting") {
        return false;
      }
    }
    return true;
  })) << nodes_holding(cluster, "doc")
      << " nodes hold the resource";
}

}  // namespace
}  // namespace redlock::test
