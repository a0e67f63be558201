// Release wake-ups: a waiter retries when the holder releases, not when its
// (long) retry delay runs out; and its subscriptions go away afterwards. A
// release wakes only the waiter whose turn it is, whichever client it
// belongs to: the first in the nodes' waiting line.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "harness.hpp"
#include "redis_subscriber.hpp"
#include "scripts/scripts.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;
using Stopwatch = SteadyClock;

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
    options.fair = false;                       // the mutex's waiting line, not the fair queue
    options.retry_delay = milliseconds(60000);  // the fallback would take ~a minute
    options.wait = milliseconds(10000);
    waited = waiter_client.acquire(Resource("handoff"), options);
    acquired_at = Stopwatch::now();
  });
  // Release once the waiter is in line and listens on every node (bounded
  // wait).
  EXPECT_TRUE(line_becomes(cluster, "handoff", 1));
  EXPECT_TRUE(wake_listeners_become(cluster, 1));
  const auto released_at = Stopwatch::now();
  (void)holder_client.release(*held.lock);
  waiter.join();

  ASSERT_TRUE(waited.ok()) << waited.error.message();
  EXPECT_LT(acquired_at - released_at, milliseconds(1000));
  (void)waiter_client.release(*waited.lock);

  // The waiter left the line; its client listens on its wake channel for
  // its life, one subscription per node, and on no resource's channel.
  EXPECT_TRUE(line_becomes(cluster, "handoff", 0));
  EXPECT_TRUE(subscribers_become(cluster, "redlock:released:handoff", 0));
}

// A release that reaches the nodes one at a time: the first node's name
// wakes the waiter, whose attempt the other nodes still refuse. Their names
// come later, copies of the same release ("number value"), and each is news
// (the node took the waiter's place out of its line after refusing it): the
// waiter tries again at once instead of sleeping until its retry timer,
// here a minute away.
TEST(Wakeup, ALaterCopyOfANameFromANodeThatRefusedTheWaiterWakesItAgain) {
  RedisCluster cluster{3};
  BlockingClient holder_client(config_for(cluster));
  const std::optional<Lock> held = hold_on_every_node(cluster, holder_client, "one-by-one");
  ASSERT_TRUE(held.has_value());

  BlockingClient waiter_client(config_for(cluster));
  std::future<AcquireResult> waited = acquire_when_woken(waiter_client, Resource("one-by-one"));
  ASSERT_TRUE(line_becomes(cluster, "one-by-one", 1, /*every_node=*/true));
  ASSERT_TRUE(wake_listeners_become(cluster, 1));

  // The holder's release, by hand, one node at a time. On node 0 someone
  // else takes the key in the same transaction, so the attempt that node
  // 0's name starts is refused by every node (no split vote, whose quick
  // retries would hide a dropped name) and the waiter sleeps again.
  const std::vector<std::string> release = release_request(
      "one-by-one", held->value.str(), "redlock:released:one-by-one", "redlock:waiting:one-by-one");
  ASSERT_TRUE(release_and_hand_to_someone_else(cluster.node(0), "one-by-one", release));
  // Node 0's name woke the waiter; every node refused its attempt, and
  // node 0 lined it up again.
  const auto attempts = [&] { return waiter_client.metrics()->snapshot().acquire_attempts; };
  ASSERT_TRUE(eventually([&] {
    return attempts() >= 2 &&
           cluster.node(0).probe().command({"ZCARD", "redlock:waiting:one-by-one"}).integer == 1;
  }));
  ASSERT_EQ(waited.wait_for(milliseconds(0)), std::future_status::timeout);

  const auto released_at = Stopwatch::now();
  for (const std::size_t node : {std::size_t{1}, std::size_t{2}}) {
    ASSERT_EQ(cluster.node(node).probe().command(release).kind, Reply::Kind::array);
  }
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(5)), std::future_status::ready)
      << "the later names were dropped: the waiter sleeps until its retry timer";
  AcquireResult result = waited.get();
  ASSERT_TRUE(result.ok()) << result.error.message();
  EXPECT_LT(Stopwatch::now() - released_at, std::chrono::seconds(5));
  (void)waiter_client.release(*result.lock);
}

// A waiter asleep in every node's line, named by one node whose release
// came first: it waits for a majority of its nodes' names (up to about its
// last round trip, stretched to ~300 ms here by freezing two nodes during
// its first attempt), instead of attempting at once and being refused by
// the nodes the release has not reached. When the second node's name
// comes, one attempt wins: two attempts in all, where attempting on the
// first name costs three.
TEST(Wakeup, ANamedWaiterWaitsForAMajorityOfItsNodesNamesBeforeAttempting) {
  RedisCluster cluster{3};
  QuorumConfig config = config_for(cluster);
  config.lock.node_timeout = milliseconds(5000);  // a frozen node is slow, not lost
  BlockingClient holder_client(config);
  const std::optional<Lock> held = hold_on_every_node(cluster, holder_client, "majority");
  ASSERT_TRUE(held.has_value());

  BlockingClient waiter_client(config);
  const auto attempts = [&] { return waiter_client.metrics()->snapshot().acquire_attempts; };
  cluster.node(0).pause();
  cluster.node(1).pause();
  std::future<AcquireResult> waited = acquire_when_woken(waiter_client, Resource("majority"));
  const bool reached = eventually([&] {
    return cluster.node(2).probe().command({"ZCARD", "redlock:waiting:majority"}).integer == 1;
  });
  std::this_thread::sleep_for(milliseconds(300));  // the attempt's round trip
  cluster.node(0).resume();
  cluster.node(1).resume();
  ASSERT_TRUE(reached);
  ASSERT_TRUE(line_becomes(cluster, "majority", 1, true));
  ASSERT_TRUE(wake_listeners_become(cluster, 1));
  ASSERT_EQ(attempts(), 1);

  // Node 0 releases and names the waiter; node 1 only a moment later.
  const std::vector<std::string> release = release_request(
      "majority", held->value.str(), "redlock:released:majority", "redlock:waiting:majority");
  ASSERT_EQ(cluster.node(0).probe().command(release).kind, Reply::Kind::array);
  // An attempt started by node 0's name alone would show within this bound.
  (void)eventually([&] { return attempts() > 1; }, milliseconds(100));
  ASSERT_EQ(cluster.node(1).probe().command(release).kind, Reply::Kind::array);
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  AcquireResult result = waited.get();
  ASSERT_TRUE(result.ok()) << result.error.message();
  EXPECT_EQ(result.attempts, 2) << "the waiter attempted on the first node's name";
  (void)waiter_client.release(*result.lock);
  // Node 2 still holds the old value until its TTL; the waiter won on 0 and 1.
}

// The same for a waiter outside any line (a reader, which listens on the
// resource's channel, where every node publishes the same released value):
// a later copy from a node that refused the attempt the first copy started
// wakes it again.
TEST(Wakeup, ALaterCopyOfAReleaseWakesAReaderItsNodeRefused) {
  RedisCluster cluster{3};
  BlockingClient holder_client(config_for(cluster));
  const std::optional<Lock> held = hold_on_every_node(cluster, holder_client, "read-later");
  ASSERT_TRUE(held.has_value());

  BlockingClient reader_client(config_for(cluster));
  std::future<AcquireResult> waited = std::async(std::launch::async, [&reader_client] {
    AcquireOptions options;
    options.fair = false;  // the mutex's waiting line, not the fair queue
    options.shared = true;
    options.retry_delay = std::chrono::hours(1);  // the fallback, uniform in [0, 2 h)
    options.wait = milliseconds(10000);
    return reader_client.acquire(Resource("read-later"), options);
  });
  const std::string channel = "redlock:released:read-later";
  ASSERT_TRUE(subscribers_become(cluster, channel, 1));

  std::vector<long long> wanted = script_calls(cluster);
  // Node 0 releases and gives the key to someone else in one transaction:
  // its copy wakes the reader, whose attempt every node refuses.
  const std::vector<std::string> release =
      release_request("read-later", held->value.str(), channel, "");
  ASSERT_TRUE(release_and_hand_to_someone_else(cluster.node(0), "read-later", release));
  // The woken attempt has reached every node (node 0 also ran the release).
  for (long long& calls : wanted) ++calls;
  ++wanted[0];
  ASSERT_TRUE(script_calls_reach(cluster, wanted));
  ASSERT_EQ(waited.wait_for(milliseconds(0)), std::future_status::timeout);

  const auto released_at = Stopwatch::now();
  for (const std::size_t node : {std::size_t{1}, std::size_t{2}}) {
    ASSERT_EQ(cluster.node(node).probe().command(release).kind, Reply::Kind::array);
  }
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(5)), std::future_status::ready)
      << "the later copies were dropped: the reader sleeps until its retry timer";
  AcquireResult result = waited.get();
  ASSERT_TRUE(result.ok()) << result.error.message();
  EXPECT_LT(Stopwatch::now() - released_at, std::chrono::seconds(5));
  (void)reader_client.release(*result.lock);
}

// The subscriber connections of a client come up with its first waiter;
// a waiter on another resource later is heard on them at once, not only at
// their next reconnect.
TEST(Wakeup, AWaiterOnASecondResourceIsSubscribedOnTheConnectionsAlreadyUp) {
  RedisCluster cluster{3};
  BlockingClient holder_client(config_for(cluster));
  BlockingClient waiter_client(config_for(cluster));
  for (const std::string resource : {"first", "second"}) {
    AcquireResult held = holder_client.acquire(Resource(resource));
    ASSERT_TRUE(held.ok()) << resource;
    auto waiting = acquire_when_woken(waiter_client, Resource(resource));
    EXPECT_TRUE(line_becomes(cluster, resource, 1)) << resource << " never lined up";
    EXPECT_TRUE(wake_listeners_become(cluster, 1)) << resource << " never subscribed";
    (void)holder_client.release(*held.lock);
    const AcquireResult waited = waiting.get();
    ASSERT_TRUE(waited.ok()) << resource << ": " << waited.error.message();
    (void)waiter_client.release(*waited.lock);
  }
}

// The same when another kind's waiter (a semaphore's, which listens on its
// release channel) opened the subscriber connections: a mutex waiter later
// is heard on its client's wake channel at once.
TEST(Wakeup, AWaiterInLineIsHeardOnConnectionsAnotherKindsWaiterOpened) {
  RedisCluster cluster{3};
  BlockingClient holder_client(config_for(cluster));
  BlockingClient waiter_client(config_for(cluster));

  AcquireResult permit = holder_client.acquire(Semaphore("pool", 1));
  ASSERT_TRUE(permit.ok());
  auto waiting_for_permit = acquire_when_woken(waiter_client, Semaphore("pool", 1));
  EXPECT_TRUE(subscribers_become(cluster, "redlock:released:sem:pool", 1));
  (void)holder_client.release(*permit.lock);
  const AcquireResult waited_permit = waiting_for_permit.get();
  ASSERT_TRUE(waited_permit.ok()) << waited_permit.error.message();
  (void)waiter_client.release(*waited_permit.lock);

  AcquireResult held = holder_client.acquire(Resource("after"));
  ASSERT_TRUE(held.ok());
  auto waiting = acquire_when_woken(waiter_client, Resource("after"));
  EXPECT_TRUE(line_becomes(cluster, "after", 1));
  EXPECT_TRUE(wake_listeners_become(cluster, 1)) << "the wake channel was never subscribed";
  (void)holder_client.release(*held.lock);
  const AcquireResult waited = waiting.get();
  ASSERT_TRUE(waited.ok()) << waited.error.message();
  (void)waiter_client.release(*waited.lock);
}

TEST(Wakeup, SubscriptionsAreDroppedWhenAWaiterGivesUp) {
  RedisCluster cluster{3};
  BlockingClient client(config_for(cluster));
  AcquireResult held = client.acquire(Resource("held"));
  ASSERT_TRUE(held.ok());
  AcquireOptions options;
  options.fair = false;  // the mutex's waiting line, not the fair queue
  options.wait = milliseconds(300);
  options.retry_delay = milliseconds(50);
  AcquireResult gave_up = client.acquire(Resource("held"), options);
  EXPECT_EQ(gave_up.error, errc::not_acquired);
  const std::string channel = "redlock:released:held";
  EXPECT_TRUE(subscribers_become(cluster, channel, 0));
  (void)client.release(*held.lock);
}

// A resource's channel stays subscribed for a moment after its last waiter
// left: a client that waits on the resource again right away pays no second
// SUBSCRIBE (nor an UNSUBSCRIBE in between), and the channel still goes
// once no one waits.
TEST(Wakeup, AChannelStaysSubscribedBetweenWaitsInQuickSuccession) {
  RedisCluster cluster{3};
  BlockingClient holder(config_for(cluster));
  BlockingClient reader(config_for(cluster));
  AcquireResult held = holder.acquire(Resource("doc"));
  ASSERT_TRUE(held.ok());
  const auto subscribes = [&](std::size_t i) {
    return command_calls(cluster.node(i), {"subscribe"});
  };
  std::vector<long long> before;
  for (std::size_t i = 0; i < cluster.size(); ++i) before.push_back(subscribes(i));
  AcquireOptions options;
  options.fair = false;  // the mutex's waiting line, not the fair queue
  options.shared = true;
  options.wait = milliseconds(150);
  options.retry_delay = milliseconds(50);
  for (int wait = 0; wait < 2; ++wait) {
    EXPECT_EQ(reader.acquire(Resource("doc"), options).error, errc::not_acquired);
  }
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_EQ(subscribes(i) - before[i], 1) << "node " << i;
  }
  EXPECT_TRUE(subscribers_become(cluster, "redlock:released:doc", 0));
  (void)holder.release(*held.lock);
}

// Three waiters, each on its own client, line up one after another behind
// a holder. Each release names one of them: each acquires on its second
// attempt, in the order they lined up. Were every client to wake one of its
// waiters on every release, the later waiters would try, and be refused, on
// every release before their turn.
TEST(Wakeup, AReleaseWakesOnlyTheWaiterWhoseTurnItIsAcrossClients) {
  RedisCluster cluster{3};
  BlockingClient holder_client(config_for(cluster));
  // Every node votes, so that every node lines the waiters up in turn.
  const std::optional<Lock> held = hold_on_every_node(cluster, holder_client, "line");
  ASSERT_TRUE(held.has_value());

  constexpr std::size_t kWaiters = 3;
  std::vector<std::unique_ptr<BlockingClient>> clients;
  for (std::size_t i = 0; i < kWaiters; ++i) {
    clients.push_back(std::make_unique<BlockingClient>(config_for(cluster)));
  }
  std::array<AcquireResult, kWaiters> results;
  std::array<int, kWaiters> turn{};
  std::atomic<int> served{0};
  std::vector<std::thread> waiters;
  bool lined_up = true;
  for (std::size_t i = 0; i < kWaiters && lined_up; ++i) {
    waiters.emplace_back([&, i] {
      AcquireOptions options;
      options.fair = false;                       // the mutex's waiting line, not the fair queue
      options.retry_delay = milliseconds(60000);  // only a wake-up brings a second attempt
      options.wait = milliseconds(20000);
      results[i] = clients[i]->acquire(Resource("line"), options);
      turn[i] = served.fetch_add(1);
      // Its release names the next waiter in line.
      if (results[i].ok()) (void)clients[i]->release(*results[i].lock);
    });
    // The next waiter lines up behind this one on every node, and this
    // one's client listens for its name on every node.
    lined_up = line_becomes(cluster, "line", static_cast<long long>(i + 1), true) &&
               wake_listeners_become(cluster, static_cast<long long>(i + 1));
    EXPECT_TRUE(lined_up) << "waiter " << i << " never lined up";
  }
  (void)holder_client.release(*held);
  for (auto& waiter : waiters) waiter.join();
  ASSERT_TRUE(lined_up);

  // Each waiter tries twice: refused, then named. Up to two more attempts
  // in all are the nodes' lines differing for a moment (a waiter's winning
  // attempt that reached one node before the release it answered puts it
  // back in that node's line, behind the next waiter, whom that node then
  // names early), or a named waiter's attempt that a node the release had
  // not reached yet refused, retried at once when that node's name comes
  // (seen on a loaded machine). Waking a waiter of every client on every
  // release would cost 3 + (3 + 2 + 1) = 9 attempts.
  int attempts = 0;
  for (std::size_t i = 0; i < kWaiters; ++i) {
    ASSERT_TRUE(results[i].ok()) << i << ": " << results[i].error.message();
    attempts += results[i].attempts;
    EXPECT_EQ(turn[i], static_cast<int>(i)) << "waiter " << i << " was served out of line";
  }
  std::string per_waiter;
  for (std::size_t i = 0; i < kWaiters; ++i) {
    per_waiter += " " + std::to_string(results[i].attempts) + "@" + std::to_string(turn[i]);
  }
  EXPECT_LE(attempts, static_cast<int>(2 * kWaiters + 2))
      << "waiters tried out of turn (attempts@turn:" << per_waiter << ")";
  // Each took its place out of the line when it won; the places each
  // rejoined with its release were named and handed on (on a majority:
  // line_empties_on_a_majority).
  EXPECT_TRUE(line_empties_on_a_majority(cluster, "line"));
}

// A named waiter's attempt that the nodes the release has not reached yet
// refuse, while the named node answers late: that node's grant comes after
// the attempt failed, and it is undone without naming the next waiter in
// that node's line (the named waiter will try again when the other nodes
// name it). Announced, the undo named the next waiter there, who then
// tried out of turn and could win before the first: the line's order was
// lost whenever the nodes answered unevenly, as on a loaded machine. The
// release is played by hand here, one node at a time, with node 0 frozen
// while the named waiter's attempt reaches it.
TEST(Wakeup, ALateGrantOfANamedWaitersFailedAttemptDoesNotNameTheNextWaiter) {
  RedisCluster cluster{3};
  BlockingClient holder_client(config_for(cluster));
  const std::optional<Lock> held = hold_on_every_node(cluster, holder_client, "turns");
  ASSERT_TRUE(held.has_value());

  BlockingClient first_client(config_for(cluster));
  BlockingClient second_client(config_for(cluster));
  std::future<AcquireResult> first = acquire_when_woken(first_client, Resource("turns"));
  bool lined_up = line_becomes(cluster, "turns", 1, true) && wake_listeners_become(cluster, 1);
  std::future<AcquireResult> second = acquire_when_woken(second_client, Resource("turns"));
  lined_up =
      lined_up && line_becomes(cluster, "turns", 2, true) && wake_listeners_become(cluster, 2);
  ASSERT_TRUE(lined_up);

  // Both places, in line order: "<wake channel> <number>".
  const std::string line = "redlock:waiting:turns";
  const Reply places = cluster.node(0).probe().command({"ZRANGE", line, "0", "-1"});
  ASSERT_EQ(places.elements.size(), 2U);
  const std::string first_id = places.elements[0].text;
  const std::string second_id = places.elements[1].text;
  const std::size_t first_space = first_id.find(' ');
  const std::size_t second_space = second_id.find(' ');
  ASSERT_NE(first_space, std::string::npos);
  ASSERT_NE(second_space, std::string::npos);
  const std::string second_channel = second_id.substr(0, second_space);
  RedisSubscriber heard(cluster.node(0).port(), {second_channel});
  ASSERT_TRUE(heard.ok());

  // Node 0 releases as a release naming the first waiter would (the key
  // gone, the first place taken out of the line), then freezes; node 1's
  // copy of the name wakes the first waiter, whose attempt nodes 1 and 2
  // refuse (they still hold the lock).
  const std::string value = held->value.str();
  ASSERT_EQ(cluster.node(0).probe().command({"DEL", key_of("turns")}).integer, 1);
  ASSERT_EQ(cluster.node(0).probe().command({"ZREM", line, first_id}).integer, 1);
  const std::vector<long long> before = script_calls(cluster);
  cluster.node(0).pause();
  ASSERT_GE(cluster.node(1)
                .probe()
                .command({"PUBLISH", first_id.substr(0, first_space),
                          first_id.substr(first_space + 1) + " " + value})
                .integer,
            1);
  // (Node 0 is frozen: only nodes 1 and 2 are asked.)
  const bool refused = eventually([&] {
    return script_calls(cluster.node(1)) > before[1] && script_calls(cluster.node(2)) > before[2];
  });
  cluster.node(0).resume();
  ASSERT_TRUE(refused) << "the named waiter never tried";

  // Node 0 grants the attempt late, and the waiter's client undoes it.
  EXPECT_TRUE(eventually([&] { return script_calls(cluster.node(0)) >= before[0] + 2; }));
  ASSERT_GE(cluster.node(0).probe().command({"PUBLISH", second_channel, "marker"}).integer, 1);
  for (const RedisSubscriber::Message& message : heard.until("marker")) {
    ASSERT_FALSE(message.channel.empty()) << "the marker never came";
    ADD_FAILURE() << "node 0 named the second waiter (its number "
                  << message.payload.substr(0, message.payload.find(' ')) << ")";
  }
  EXPECT_EQ(cluster.node(0).probe().command({"ZCARD", line}).integer, 1)
      << "the second waiter lost its place on node 0";

  // The holder's release reaches nodes 1 and 2, which name the first
  // waiter; its release names the second, who cannot win before it.
  (void)holder_client.release(*held);
  const AcquireResult got_first = first.get();
  ASSERT_TRUE(got_first.ok()) << got_first.error.message();
  EXPECT_EQ(second.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "the second waiter was served before the first";
  (void)first_client.release(*got_first.lock);
  const AcquireResult got_second = second.get();
  ASSERT_TRUE(got_second.ok()) << got_second.error.message();
  (void)second_client.release(*got_second.lock);
}

// A waiter keeps its place in line through its own refused attempts: one
// whose short retry delay has it try, and be refused, again and again is
// still named before a waiter that lined up after it.
TEST(Wakeup, AWaiterKeepsItsPlaceThroughItsRefusedAttempts) {
  RedisCluster cluster{3};
  BlockingClient holder(config_for(cluster));
  AcquireResult held = holder.acquire(Resource("kept"));
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(quorum_settles(cluster, std::chrono::seconds(10)));
  BlockingClient eager_client(config_for(cluster));
  BlockingClient patient_client(config_for(cluster));
  std::atomic<int> served{0};
  int eager_turn = -1;
  int patient_turn = -1;
  const auto wait_for = [&](BlockingClient& client, milliseconds retry_delay, int& turn) {
    AcquireOptions options;
    options.fair = false;  // the mutex's waiting line, not the fair queue
    options.retry_delay = retry_delay;
    options.wait = milliseconds(20000);
    AcquireResult result = client.acquire(Resource("kept"), options);
    turn = served.fetch_add(1);
    if (result.ok()) (void)client.release(*result.lock);
  };
  std::thread eager([&] { wait_for(eager_client, milliseconds(5), eager_turn); });
  bool lined_up = line_becomes(cluster, "kept", 1, true);
  std::thread patient([&] { wait_for(patient_client, milliseconds(60000), patient_turn); });
  lined_up =
      lined_up && line_becomes(cluster, "kept", 2, true) && wake_listeners_become(cluster, 2);
  EXPECT_TRUE(lined_up);
  // The eager waiter tries (and is refused) a few more times behind the
  // patient one's place.
  const std::uint64_t before = eager_client.metrics()->acquire_attempts.load();
  EXPECT_TRUE(
      eventually([&] { return eager_client.metrics()->acquire_attempts.load() >= before + 3; }));
  (void)holder.release(*held.lock);
  eager.join();
  patient.join();
  EXPECT_EQ(eager_turn, 0) << "the eager waiter lost its place to the patient one";
  EXPECT_EQ(patient_turn, 1);
}

// Whatever kind of lock frees the resource's key (a lock over several
// resources, a fair holder's), its release names the mutex waiter in line.
TEST(Wakeup, EveryKindsReleaseNamesTheMutexWaiterInLine) {
  RedisCluster cluster{3};
  BlockingClient holder(config_for(cluster));
  BlockingClient waiter_client(config_for(cluster));
  AcquireOptions fair;
  fair.fair = true;
  for (const std::string kind : {"several", "fair"}) {
    const AcquireResult held =
        kind == "fair" ? holder.acquire(Resource("kinds"), fair)
                       : holder.acquire(std::vector<Resource>{Resource("a"), Resource("kinds")});
    ASSERT_TRUE(held.ok()) << kind << ": " << held.error.message();
    auto waiting = acquire_when_woken(waiter_client, Resource("kinds"));
    const bool lined_up = line_becomes(cluster, "kinds", 1) && wake_listeners_become(cluster, 1);
    EXPECT_TRUE(lined_up) << kind;
    const auto released_at = Stopwatch::now();
    (void)holder.release(*held.lock);
    const AcquireResult waited = waiting.get();
    ASSERT_TRUE(waited.ok()) << kind << ": " << waited.error.message();
    EXPECT_LT(Stopwatch::now() - released_at, milliseconds(5000)) << kind;
    (void)waiter_client.release(*waited.lock);
  }
}

// Whatever is published on a client's wake channel (a node or a client
// writing there: garbage, numbers that name no waiter, a waiter named over
// and over) costs at most a refused attempt: the waiter still takes the lock
// when the holder releases it, and nothing crashes.
TEST(Wakeup, GarbageOnAWakeChannelCostsAtMostAnAttempt) {
  RedisCluster cluster{3};
  BlockingClient holder(config_for(cluster));
  BlockingClient waiter_client(config_for(cluster));
  AcquireResult held = holder.acquire(Resource("noisy"));
  ASSERT_TRUE(held.ok());
  auto waiting = acquire_when_woken(waiter_client, Resource("noisy"));
  const bool lined_up = line_becomes(cluster, "noisy", 1) && wake_listeners_become(cluster, 1);
  EXPECT_TRUE(lined_up);
  const Reply channels =
      cluster.node(0).probe().command({"PUBSUB", "CHANNELS", "redlock:released:@*"});
  ASSERT_EQ(channels.elements.size(), 1U);
  const std::string wake = channels.elements[0].text;
  const Reply place =
      cluster.node(0).probe().command({"ZRANGE", "redlock:waiting:noisy", "0", "0"});
  ASSERT_EQ(place.elements.size(), 1U);
  const std::string number = place.elements[0].text.substr(place.elements[0].text.rfind(' ') + 1);
  for (const std::string& message :
       {std::string(""), std::string("7"), std::string(" "), std::string("x y"),
        std::string("184467440737095516160 v"), std::string("-1 v"), std::string(100000, '9'),
        number + " forged-1", number + " forged-2", number + " forged-1"}) {
    (void)cluster.node(0).probe().command({"PUBLISH", wake, message});
  }
  (void)holder.release(*held.lock);
  const AcquireResult waited = waiting.get();
  ASSERT_TRUE(waited.ok()) << waited.error.message();
  // Refused, woken at most once by each of the two forged names, then
  // named; one more each time an attempt meets the release half-way
  // (granted by some nodes, refused by others) and retries, which on a
  // loaded machine can happen to two of them.
  EXPECT_LE(waited.attempts, 6);
  (void)waiter_client.release(*waited.lock);
}

// A waiter that gives up takes its place out of every node's line, so no
// release names it and wakes no one.
TEST(Wakeup, AWaiterThatGivesUpLeavesTheLine) {
  RedisCluster cluster{3};
  BlockingClient client(config_for(cluster));
  AcquireResult held = client.acquire(Resource("given-up"));
  ASSERT_TRUE(held.ok());
  AcquireOptions options;
  options.fair = false;  // the mutex's waiting line, not the fair queue
  options.wait = milliseconds(300);
  // Its place would last two minutes (twice the retry delay) if it stayed.
  options.retry_delay = milliseconds(60000);
  AcquireResult gave_up = client.acquire(Resource("given-up"), options);
  EXPECT_EQ(gave_up.error, errc::not_acquired);
  EXPECT_TRUE(line_becomes(cluster, "given-up", 0));
  (void)client.release(*held.lock);
}

// A release publishes only where someone may hear it: with no waiter, and
// no listening mark, the nodes run no PUBLISH; a waiter's client keeps the
// resource's mark on every node while it waits, and the release that finds
// it wakes the waiter at once.
TEST(Wakeup, AReleaseNobodyListensForPublishesNothingAndAWaitersMarkMakesItPublish) {
  RedisCluster cluster{3};
  BlockingClient holder_client(config_for(cluster));
  BlockingClient waiter_client(config_for(cluster));
  AcquireResult quiet = holder_client.acquire(Resource("quiet"));
  ASSERT_TRUE(quiet.ok()) << quiet.error.message();
  EXPECT_EQ(holder_client.release(*quiet.lock).released, cluster.size());
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_EQ(command_calls(cluster.node(i), {"publish"}), 0) << "node " << i;
  }

  AcquireResult held = holder_client.acquire(Resource("loud"));
  ASSERT_TRUE(held.ok()) << held.error.message();
  AcquireResult waited;
  Stopwatch::time_point acquired_at{};
  std::thread waiter([&] {
    AcquireOptions options;
    options.retry_delay = milliseconds(60000);  // the fallback would take ~a minute
    options.wait = milliseconds(10000);
    waited = waiter_client.acquire(Resource("loud"), options);
    acquired_at = Stopwatch::now();
  });
  EXPECT_TRUE(eventually([&] {
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (!cluster.node(i).probe().exists("redlock:released:loud")) return false;
    }
    return true;
  })) << "the waiter's client keeps the resource's listening mark on every node";
  EXPECT_TRUE(subscribers_become(cluster, "redlock:released:loud", 1));
  const auto released_at = Stopwatch::now();
  (void)holder_client.release(*held.lock);
  waiter.join();
  ASSERT_TRUE(waited.ok()) << waited.error.message();
  EXPECT_LT(acquired_at - released_at, milliseconds(1000));
  long long published = 0;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    published += command_calls(cluster.node(i), {"publish"});
    // The mark outlives the wait by no more than its expiry.
    EXPECT_LE(cluster.node(i).probe().pttl("redlock:released:loud"), 10000) << "node " << i;
  }
  EXPECT_GE(published, static_cast<long long>(cluster.size() / 2 + 1));
  (void)waiter_client.release(*waited.lock);
}

}  // namespace
}  // namespace redlock::test
