// The fair lock on real nodes: waiters served in the order of their
// tickets, no newcomer ahead of a waiter in line, a dead waiter holding the
// line up for a bounded time, and exclusion with unfair clients kept.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "redis_subscriber.hpp"

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
  // Whether every node lists `count` waiters (waited for, bounded).
  bool every_node_queues(const std::string& resource, long long count) {
    return eventually([&] {
      for (std::size_t i = 0; i < cluster.size(); ++i) {
        if (queued_on(i, resource) != count) return false;
      }
      return true;
    });
  }
  // Lists a place "earlier" (ticket 0, no claim) first in node i's queue
  // of "job", lapsing `lease` from now on the node's clock.
  void put_earlier_place(std::size_t i, milliseconds lease) {
    RedisProbe probe = cluster.node(i).probe();
    const long long ms = node_clock_ms(probe);
    ASSERT_GE(ms, 0);
    (void)probe.command({"ZADD", "redlock:queue:job", "0", "earlier"});
    (void)probe.command(
        {"ZADD", "redlock:queue-due:job", std::to_string(ms + lease.count()), "earlier"});
  }
  // How many nodes hold `value` at `resource`'s key.
  std::size_t nodes_holding_value(const std::string& resource, const std::string& value) {
    std::size_t holding = 0;
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (cluster.node(i).probe().command({"GET", key_of(resource)}).text == value) ++holding;
    }
    return holding;
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
    const long long ms = node_clock_ms(probe);
    ASSERT_GE(ms, 0);
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
  EXPECT_TRUE(every_node_queues("job", 0)) << "a place stayed in line";
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
  // (The guard's client waited, so its release also pre-claimed a place
  // for a next acquire that does not come: withdrawn 10 ms later.)
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_TRUE(eventually([&] { return queued_on(i, "job") == 0; }, milliseconds(1000)))
        << "node " << i;
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

// The holder's release grants the lock to the waiter first in the queue
// (its claim) and tells it so on that waiter's client's wake channel, and
// says nothing on the resource's channel, so the waiters behind it (here,
// of another client) are not woken to be refused. (The resource's
// channel may carry other values meanwhile: the undo of a waiter's attempt
// that a node granted after it was decided.)
TEST_F(FairTest, AReleaseGrantsTheFirstWaiterInTheQueueAndWakesNoOneElse) {
  QuorumConfig config = config_for(cluster);
  BlockingClient holder(config);
  BlockingClient first(config);
  BlockingClient second(config);
  const AcquireResult held = holder.acquire(Resource("job"), fair());
  ASSERT_TRUE(held.ok());
  // (An acquire decides at a majority: node 0, watched below, must hold it.)
  ASSERT_TRUE(eventually([&] { return nodes_holding(cluster, "job") == cluster.size(); }));
  std::vector<std::future<AcquireResult>> waiting;
  for (BlockingClient* client : {&first, &second}) {
    waiting.push_back(std::async(std::launch::async, [client] {
      AcquireOptions options = fair();
      options.retry_delay = milliseconds(60000);
      return client->acquire(Resource("job"), options);
    }));
    const long long count = static_cast<long long>(waiting.size());
    ASSERT_TRUE(every_node_queues("job", count))
        << "waiter " << count - 1 << " is not in every node's queue";
  }
  const Reply head = cluster.node(0).probe().command({"ZRANGE", "redlock:queue:job", "0", "0"});
  ASSERT_EQ(head.elements.size(), 1U);
  const std::string place = head.elements[0].text;
  const std::size_t space = place.rfind(' ');
  ASSERT_NE(space, std::string::npos) << "a queue id without a wake channel: " << place;
  const std::string channel = "redlock:released:job";
  const std::string wake = place.substr(0, space);
  RedisSubscriber heard(cluster.node(0).port(), {channel, wake});
  ASSERT_TRUE(heard.ok());

  const std::string released = held.lock->value.str();
  (void)holder.release(*held.lock);
  const AcquireResult got_first = waiting[0].get();
  ASSERT_TRUE(got_first.ok()) << got_first.error.message();
  ASSERT_GE(cluster.node(0).probe().command({"PUBLISH", channel, "marker"}).integer, 1);
  int granted = 0;
  const std::string grant_prefix = place.substr(space + 1) + "+";
  for (const RedisSubscriber::Message& message : heard.until("marker")) {
    ASSERT_FALSE(message.channel.empty()) << "the marker never came";
    if (message.channel == channel) {
      EXPECT_NE(message.payload, released) << "node 0 published the release on " << channel;
    } else if (message.payload.starts_with(grant_prefix) &&
               message.payload.ends_with(" " + released)) {
      ++granted;
      EXPECT_EQ(message.payload.find(got_first.lock->value.str()), std::string::npos)
          << "the grant published the granted value";
    }
  }
  EXPECT_EQ(granted, 1) << "node 0 did not grant the first waiter on " << wake;
  (void)first.release(*got_first.lock);
  const AcquireResult got_second = waiting[1].get();
  ASSERT_TRUE(got_second.ok()) << got_second.error.message();
  (void)second.release(*got_second.lock);
}

// A waiter refused by a majority drew its ticket in that refusal: what it
// sends the nodes while it waits is its refused attempt and then the
// ticket's records (its claims), not a draw round as well. Counted on the
// nodes.
TEST_F(FairTest, AWaitersTicketIsDrawnInTheRoundThatRefusedIt) {
  QuorumConfig config = config_for(cluster);
  BlockingClient holder(config);
  BlockingClient waiter(config);
  // Both clients' connections are up and their scripts loaded (a release
  // here waits for every node), and the holder's lock is on every node.
  for (BlockingClient* client : {&holder, &waiter}) {
    const AcquireResult warm = client->acquire(Resource("warm-up"), fair());
    ASSERT_TRUE(warm.ok());
    EXPECT_EQ(client->release(*warm.lock).released, cluster.size());
  }
  const AcquireResult held = holder.acquire(Resource("job"));
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(eventually([&] { return nodes_holding(cluster, "job") == cluster.size(); }));
  const std::vector<long long> before = script_calls(cluster);

  const AcquireResult gave_up = waiter.acquire(Resource("job"), fair(milliseconds(300)));
  ASSERT_EQ(gave_up.error, make_error_code(errc::not_acquired));
  ASSERT_TRUE(gave_up.ticket.has_value()) << "no ticket was recorded";
  // The place's leave is the waiter's last request: once it is everywhere,
  // the counts are final.
  ASSERT_TRUE(every_node_queues("job", 0));
  const std::vector<long long> after = script_calls(cluster);
  ASSERT_EQ(gave_up.nodes.size(), cluster.size());
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    // Each attempt (the refused one, then the ticket's records, each of
    // which renews the place and the claim) and the leave (the claim's
    // release); the listening mark is a plain SET, not a script. The
    // refused attempt needs no undo: every node refused it
    // (an undo waits for an answer that may have stored the value).
    const long long sent = after[i] - before[i];
    EXPECT_EQ(sent, gave_up.attempts + 1) << "node " << i;
  }
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    const Reply counter = cluster.node(i).probe().command({"HGET", "redlock:fence", "queue:job"});
    EXPECT_EQ(counter.text, std::to_string(gave_up.ticket->number)) << "node " << i;
  }
  (void)holder.release(*held.lock);
}

// A client that waited for a fair lock and releases it draws its next
// ticket in the release, and records its next place there at that ticket
// with a claim, so that its next acquire adopts both instead of first
// sending an attempt the next holder's grant refuses (and which drew it),
// or a record. The ticket is drawn before the next acquire is even called,
// and still comes after the waiter that was recorded before the release.
TEST_F(FairTest, AReleaserThatWaitedDrawsItsNextTicketInItsRelease) {
  BlockingClient holder(config_for(cluster));
  BlockingClient b(config_for(cluster));
  const AcquireResult held = holder.acquire(Resource("again"), fair());
  ASSERT_TRUE(held.ok());
  // A runs on a loop of its own: its release and its next acquire follow
  // each other on that loop, as a worker's do that releases and at once
  // wants the lock again — the next acquire comes within the pre-claim's
  // short life however loaded the machine is.
  LoopRun a(config_for(cluster));
  std::promise<AcquireResult> a_first;
  std::promise<void> a_again_called;
  AcquireResult a_won_again;
  std::string pre_claimed;
  TimePoint called_again{};
  std::thread a_thread([&] {
    (void)a.run([&] {
      a.client().acquire(Resource("again"), fair(), [&](AcquireResult won) {
        const std::optional<Lock> lock = won.lock;
        a_first.set_value(std::move(won));
        if (!lock) {
          a_again_called.set_value();
          return a.done();
        }
        // A's release names B and draws A's next ticket; A at once wants
        // the lock again.
        a.client().release(*lock, [&](const ReleaseResult& /*released*/) {
          // The pre-claim that release recorded: "<ttl>:<tag>:<defence>:<value>".
          const Reply claims =
              cluster.node(0).probe().command({"HVALS", "redlock:queue-claim:again"});
          if (claims.elements.size() == 1) {
            pre_claimed = claims.elements[0].text;
            for (int field = 0; field < 3; ++field) pre_claimed.erase(0, pre_claimed.find(':') + 1);
          }
          called_again = SteadyClock::now();
          a.client().acquire(Resource("again"), fair(), [&](AcquireResult again) {
            a_won_again = std::move(again);
            a.done();
          });
          a_again_called.set_value();
        });
      });
    });
  });
  // (EXPECT, not ASSERT, until A's thread is joined.)
  EXPECT_TRUE(every_node_queues("again", 1));
  std::future<AcquireResult> b_first =
      std::async(std::launch::async, [&] { return b.acquire(Resource("again"), fair()); });
  EXPECT_TRUE(every_node_queues("again", 2));
  (void)holder.release(*held.lock);
  const AcquireResult a_won = a_first.get_future().get();
  a_again_called.get_future().wait();
  const AcquireResult b_won = b_first.get();
  if (b_won.ok()) (void)b.release(*b_won.lock);
  a_thread.join();
  ASSERT_TRUE(a_won.ok()) << a_won.error.message();
  ASSERT_GE(a_won.attempts, 2);  // it waited: its client finds the lock contended
  ASSERT_FALSE(pre_claimed.empty()) << "no pre-claim on node 0";
  ASSERT_TRUE(b_won.ok()) << b_won.error.message();
  ASSERT_TRUE(a_won_again.ok()) << a_won_again.error.message();
  ASSERT_TRUE(a_won_again.ticket.has_value());
  ASSERT_TRUE(b_won.ticket.has_value());
  EXPECT_LT(a_won_again.ticket->drawn_at, called_again)
      << "the ticket was drawn by the acquire, not by the release before it";
  // The release also recorded A's next place at that ticket with a claim,
  // which the acquire adopted: its lock is the pre-claimed value.
  EXPECT_EQ(a_won_again.attempts, 1);
  EXPECT_EQ(a_won_again.lock->value.str(), pre_claimed);
  EXPECT_GT(a_won_again.ticket->number, b_won.ticket->number);
  EXPECT_TRUE(every_node_queues("again", 0));
}

// A release may grant a waiter on a node that does not list an earlier
// ticket yet (its record is on the way): the waiter holds that node while
// the earlier waiter is first everywhere else. Its next record, which that
// node answers with "another waiter is first", gives the grant back, and
// comes about a round trip after the grant, not at the 100 ms refresh:
// here the earlier waiter is a place written by hand (ticket 0, no claim,
// lapsing after 1.5 s), first on nodes 0-2 at the release and on 3-4 only
// after the real waiter's claim was granted there.
TEST_F(FairTest, AGrantOnANodeThatNowPutsAnotherWaiterFirstIsGivenBack) {
  QuorumConfig config = config_for(cluster);
  BlockingClient holder(config);
  BlockingClient waiter(config);
  const AcquireResult held = holder.acquire(Resource("job"), fair());
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(eventually([&] { return nodes_holding(cluster, "job") == cluster.size(); }));
  std::future<AcquireResult> waiting = std::async(std::launch::async, [&] {
    return waiter.acquire(Resource("job"), fair(milliseconds(10000)));
  });
  ASSERT_TRUE(every_node_queues("job", 1));
  for (std::size_t i = 0; i < 3; ++i) put_earlier_place(i, milliseconds(1500));
  const std::string released = held.lock->value.str();
  (void)holder.release(*held.lock);
  // Nodes 3 and 4 granted the waiter's claim (its value on both).
  std::string claimed;
  ASSERT_TRUE(eventually([&] {
    const Reply three = cluster.node(3).probe().command({"GET", key_of("job")});
    const Reply four = cluster.node(4).probe().command({"GET", key_of("job")});
    if (three.kind != Reply::Kind::bulk_string || three.text != four.text) return false;
    claimed = three.text;
    return claimed != released;
  })) << "the release did not grant the claim on nodes 3 and 4";
  for (std::size_t i = 3; i < 5; ++i) put_earlier_place(i, milliseconds(1500));
  const TimePoint placed = SteadyClock::now();
  // Given back on both, long before the earlier place lapses.
  EXPECT_TRUE(eventually(
      [&] {
        for (std::size_t i = 3; i < 5; ++i) {
          if (cluster.node(i).probe().command({"GET", key_of("job")}).text == claimed) return false;
        }
        return true;
      },
      milliseconds(700)))
      << "the grants stayed while another waiter was first";
  EXPECT_EQ(waiting.wait_for(milliseconds(0)), std::future_status::timeout)
      << "the waiter won ahead of an earlier place";
  const AcquireResult got = waiting.get();
  ASSERT_TRUE(got.ok()) << got.error.message();
  EXPECT_GT(SteadyClock::now() - placed, milliseconds(700)) << "it won before the place lapsed";
  (void)waiter.release(*got.lock);
}

// A grant given back is never counted again, whichever connection brings
// word of it. The interleaving, played on 5 nodes: node 2 grants the
// waiter's claim without its message (the script's SET and HDEL, by hand)
// while an earlier place is first there and on nodes 3-4; the waiter's
// record finds it held behind that place and gives it back; the holder's
// release grants the claim on nodes 0-1; then the message node 2 would
// have published with its grant arrives, late, on the subscriber
// connection. Counting it would make a majority of 3 out of a value held
// on 2 nodes. The acquire must not end with its value on fewer than a
// majority (here it wins once the earlier place lapses).
TEST_F(FairTest, AGrantGivenBackIsNotCountedWhenItsMessageComesLate) {
  QuorumConfig config = config_for(cluster);
  BlockingClient holder(config);
  BlockingClient waiter(config);
  const AcquireResult held = holder.acquire(Resource("job"), fair());
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(eventually([&] { return nodes_holding(cluster, "job") == cluster.size(); }));
  std::future<AcquireResult> waiting = std::async(std::launch::async, [&] {
    return waiter.acquire(Resource("job"), fair(milliseconds(10000)));
  });
  ASSERT_TRUE(every_node_queues("job", 1));
  const std::string queue = "redlock:queue:job";
  const std::string claims = "redlock:queue-claim:job";
  const Reply head = cluster.node(0).probe().command({"ZRANGE", queue, "0", "0"});
  ASSERT_EQ(head.elements.size(), 1U);
  const std::string place = head.elements[0].text;
  const std::size_t space = place.rfind(' ');
  ASSERT_NE(space, std::string::npos) << "a queue id without a wake channel: " << place;
  // The claim node 2 holds: "<ttl>:<tag>:<defence>:<value>".
  std::string claim;
  ASSERT_TRUE(eventually([&] {
    claim = cluster.node(2).probe().command({"HGET", claims, place}).text;
    return !claim.empty();
  })) << "no claim recorded on node 2";
  const std::size_t first = claim.find(':');
  const std::size_t second = claim.find(':', first + 1);
  const std::size_t third = claim.find(':', second + 1);
  ASSERT_NE(third, std::string::npos) << claim;
  const std::string ttl = claim.substr(0, first);
  const std::string tag = claim.substr(first + 1, second - first - 1);
  const std::string value = claim.substr(third + 1);
  const std::string ticket = cluster.node(2).probe().command({"ZSCORE", queue, place}).text;
  ASSERT_FALSE(ticket.empty());

  // An earlier place, first on nodes 2-4 for 2 s.
  for (std::size_t i = 2; i < 5; ++i) put_earlier_place(i, milliseconds(2000));
  // Node 2's grant, without its message.
  {
    RedisProbe probe = cluster.node(2).probe();
    (void)probe.command({"DEL", key_of("job")});
    ASSERT_EQ(probe.command({"SET", key_of("job"), value, "PX", ttl}).text, "OK");
    (void)probe.command({"HDEL", claims, place});
  }
  // The waiter's next record gives it back.
  ASSERT_TRUE(eventually([&] {
    return cluster.node(2).probe().command({"GET", key_of("job")}).text != value;
  })) << "node 2's grant was not given back";

  const std::string released = held.lock->value.str();
  (void)holder.release(*held.lock);
  ASSERT_TRUE(eventually([&] {
    return cluster.node(0).probe().command({"GET", key_of("job")}).text == value &&
           cluster.node(1).probe().command({"GET", key_of("job")}).text == value;
  })) << "the release did not grant the claim on nodes 0 and 1";
  // The message of node 2's grant, late.
  const std::string message = place.substr(space + 1) + "+" + tag + ":" + ticket + " " + released;
  ASSERT_GE(cluster.node(2).probe().command({"PUBLISH", place.substr(0, space), message}).integer,
            1);

  const AcquireResult got = waiting.get();
  ASSERT_TRUE(got.ok()) << got.error.message();
  const std::size_t holding = nodes_holding_value("job", got.lock->value.str());
  EXPECT_GE(holding, 3U) << "the acquire won with its value on " << holding << " of 5 nodes";
  (void)waiter.release(*got.lock);
}

// A releaser that stops right after its release (SIGSTOP, a long pause:
// here its loop thread blocked in the release's callback) cannot withdraw
// the next place its release pre-claimed, and its subscriber connection
// still hears a grant. Its pre-claimed place lapses after a short lease
// unless an acquire of its renews it, so a release that comes later
// serves the waiter behind it: A waited and holds, B waits; A releases
// (granting B, pre-claiming its next place) and stops for 3 s; C waits;
// B releases 250 ms after it got the lock. C must not wait for A.
TEST_F(FairTest, AReleaserStoppedAfterItsReleaseHoldsNoOneUp) {
  QuorumConfig config = config_for(cluster);
  BlockingClient holder(config);
  BlockingClient b(config);
  BlockingClient c(config);
  const AcquireResult held = holder.acquire(Resource("job"), fair());
  ASSERT_TRUE(held.ok());
  LoopRun a(config);
  std::string pre_claimed_place;
  TimePoint b_released{};
  std::optional<AcquireResult> c_got;
  TimePoint c_got_at{};
  std::thread driver([&] {
    if (!every_node_queues("job", 1)) return;  // A waits
    std::future<AcquireResult> b_waiting =
        std::async(std::launch::async, [&] { return b.acquire(Resource("job"), fair()); });
    if (!every_node_queues("job", 2)) return;  // B waits behind A
    // A's first place and B's: the pre-claim A's release makes is a third.
    const Reply places =
        cluster.node(0).probe().command({"ZRANGE", "redlock:queue:job", "0", "-1"});
    std::set<std::string> known;
    for (const Reply& place : places.elements) known.insert(place.text);
    (void)holder.release(*held.lock);
    // Watched from the release on: the pre-claim lives a short lease unless
    // an acquire of A's renews it, and A is stopped.
    (void)eventually(
        [&] {
          for (std::size_t i = 0; i < cluster.size(); ++i) {
            const Reply claims =
                cluster.node(i).probe().command({"HKEYS", "redlock:queue-claim:job"});
            for (const Reply& claim : claims.elements) {
              if (known.count(claim.text) == 0) pre_claimed_place = claim.text;
            }
          }
          return !pre_claimed_place.empty();
        },
        milliseconds(5000));
    const AcquireResult b_got = b_waiting.get();
    if (!b_got.ok()) return;
    const TimePoint b_got_at = SteadyClock::now();
    std::future<AcquireResult> c_waiting = std::async(std::launch::async, [&] {
      AcquireResult got = c.acquire(Resource("job"), fair());
      c_got_at = SteadyClock::now();
      return got;
    });
    // C's place is recorded on every node before B releases.
    (void)eventually([&] {
      for (std::size_t i = 0; i < cluster.size(); ++i) {
        const Reply line =
            cluster.node(i).probe().command({"ZRANGE", "redlock:queue:job", "0", "-1"});
        bool other = false;
        for (const Reply& place : line.elements) other |= place.text != pre_claimed_place;
        if (!other) return false;
      }
      return true;
    });
    std::this_thread::sleep_until(b_got_at + milliseconds(250));
    b_released = SteadyClock::now();
    (void)b.release(*b_got.lock);
    c_got = c_waiting.get();
    if (c_got->ok()) (void)c.release(*c_got->lock);
  });
  std::optional<AcquireResult> a_got;
  ASSERT_TRUE(a.run(
      [&] {
        a.client().acquire(Resource("job"), fair(), [&](AcquireResult got) {
          a_got = std::move(got);
          if (!a_got->ok()) return a.done();
          a.client().release(*a_got->lock, [&](ReleaseResult) {
            std::this_thread::sleep_for(milliseconds(3000));  // stopped
            a.done();
          });
        });
      },
      std::chrono::seconds(30)));
  driver.join();
  ASSERT_TRUE(a_got.has_value() && a_got->ok());
  ASSERT_FALSE(pre_claimed_place.empty()) << "A's release pre-claimed no next place";
  ASSERT_TRUE(c_got.has_value());
  ASSERT_TRUE(c_got->ok()) << c_got->error.message();
  EXPECT_LT(c_got_at - b_released, milliseconds(1500))
      << "C waited for the stopped releaser's pre-claimed place";
}

// A holder whose lock was taken without a place in the fair line (its
// first attempt, the transaction) releases with the plain release, which
// grants the fair line's first waiter as a fair release does: there is no
// moment in which the key is free and a newcomer's SET NX takes it ahead
// of the waiter. On each node the holder's release (its script, with the
// arguments its client sends) and a newcomer's SET NX run back to back in
// one transaction: the newcomer comes in the very next instant.
TEST_F(FairTest, APlainReleaseGrantsTheFairLinesFirstWaiter) {
  QuorumConfig config = config_for(cluster);
  BlockingClient holder(config);
  BlockingClient waiter(config);
  AcquireOptions plain;
  plain.fair = false;
  const AcquireResult held = holder.acquire(Resource("job"), plain);
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(held.lock->queue_id.empty()) << "the holder took a place in the fair line";
  ASSERT_TRUE(eventually([&] { return nodes_holding(cluster, "job") == cluster.size(); }));
  std::future<AcquireResult> waiting =
      std::async(std::launch::async, [&] { return waiter.acquire(Resource("job"), fair()); });
  ASSERT_TRUE(every_node_queues("job", 1));
  // Its claim is recorded on every node (a record renews it, a grant takes it).
  ASSERT_TRUE(eventually([&] {
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (cluster.node(i).probe().command({"HLEN", "redlock:queue-claim:job"}).integer != 1) {
        return false;
      }
    }
    return true;
  }));
  const std::vector<std::string> release =
      release_request("job", held.lock->value.str(), "redlock:released:job", "redlock:waiting:job");
  std::size_t taken = 0;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    RedisProbe probe = cluster.node(i).probe();
    ASSERT_EQ(probe.command({"MULTI"}).kind, Reply::Kind::status);
    (void)probe.command(release);
    (void)probe.command({"SET", key_of("job"), "newcomer", "NX", "PX", "10000"});
    const Reply done = probe.command({"EXEC"});
    ASSERT_EQ(done.kind, Reply::Kind::array);
    ASSERT_EQ(done.elements.size(), 2U);
    ASSERT_EQ(done.elements[0].elements.size(), 1U);
    ASSERT_EQ(done.elements[0].elements[0].integer, 1)
        << "node " << i << " did not release the holder's value";
    if (done.elements[1].text == "OK") ++taken;
  }
  EXPECT_EQ(taken, 0U) << "a newcomer took the key between the release and the waiter's grant";
  const AcquireResult got = waiting.get();
  ASSERT_TRUE(got.ok()) << got.error.message();
  (void)waiter.release(*got.lock);
}

// By default (AcquireOptions::fair unset, [lock] fair = false) an acquire
// that has to wait joins the fair queue at its first refusal: it waited
// with a ticket, its lock is a fair one, and a waiter that came later goes
// after it. With fair = false it waits in the mutex's line: no ticket.
TEST_F(FairTest, ByDefaultAWaiterJoinsTheFairQueueAtItsFirstRefusal) {
  QuorumConfig config = config_for(cluster);
  BlockingClient holder(config);
  BlockingClient first(config);
  BlockingClient second(config);
  BlockingClient unfair(config);
  const AcquireResult held = holder.acquire(Resource("job"));
  ASSERT_TRUE(held.ok());
  AcquireOptions by_default;
  by_default.wait = milliseconds(10000);
  std::future<AcquireResult> first_wait =
      std::async(std::launch::async, [&] { return first.acquire(Resource("job"), by_default); });
  ASSERT_TRUE(every_node_queues("job", 1));
  std::future<AcquireResult> second_wait =
      std::async(std::launch::async, [&] { return second.acquire(Resource("job"), by_default); });
  ASSERT_TRUE(every_node_queues("job", 2));
  (void)holder.release(*held.lock);
  const AcquireResult got_first = first_wait.get();
  ASSERT_TRUE(got_first.ok()) << got_first.error.message();
  ASSERT_TRUE(got_first.ticket.has_value()) << "it did not wait in the fair queue";
  EXPECT_FALSE(got_first.lock->queue_id.empty());
  EXPECT_EQ(second_wait.wait_for(milliseconds(0)), std::future_status::timeout)
      << "the later waiter went first";
  // With fair = false a waiter waits in the mutex's line, not the queue.
  AcquireOptions not_fair = by_default;
  not_fair.fair = false;
  std::future<AcquireResult> unfair_wait =
      std::async(std::launch::async, [&] { return unfair.acquire(Resource("job"), not_fair); });
  ASSERT_TRUE(eventually([&] {
    return cluster.node(0).probe().command({"ZCARD", "redlock:waiting:job"}).integer >= 1;
  }));
  (void)first.release(*got_first.lock);
  const AcquireResult got_second = second_wait.get();
  ASSERT_TRUE(got_second.ok()) << got_second.error.message();
  ASSERT_TRUE(got_second.ticket.has_value());
  EXPECT_GT(got_second.ticket->number, got_first.ticket->number);
  (void)second.release(*got_second.lock);
  const AcquireResult got_unfair = unfair_wait.get();
  ASSERT_TRUE(got_unfair.ok()) << got_unfair.error.message();
  EXPECT_FALSE(got_unfair.ticket.has_value()) << "fair = false waited in the fair queue";
  EXPECT_TRUE(got_unfair.lock->queue_id.empty());
  (void)unfair.release(*got_unfair.lock);
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
