// Rejoining the line (docs/algorithm.md, "Waiting in line"): a client
// that releases a mutex it had to wait for takes a place at the back of the
// line in the same call, so that its next acquire waits for its name
// instead of first sending an attempt the next holder's grant refuses; a
// place no acquire took is handed on as soon as a node names it; and a
// release skips the places of clients that no longer listen.
//
// On one node: its line's order is the order in which it ran the
// releases and attempts, so each interleaving here is exact and each count
// of attempts is the protocol's, not the scheduler's. On several nodes a
// release reaches them one at a time and a waiter named by the first may
// attempt before the others ran it (at most once more per copy of the
// name); how a waiter weighs the copies is wakeup_test.cpp's.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

// An acquire that only a name brings to its next attempt within the test's
// time: its retry timer, uniform in [0, 2 h), is the fallback.
std::future<AcquireResult> acquire_when_named(BlockingClient& client, const std::string& resource) {
  return std::async(std::launch::async, [&client, resource] {
    AcquireOptions options;
    options.fair = false;  // the mutex's waiting line, not the fair queue
    options.retry_delay = std::chrono::hours(1);
    options.wait = milliseconds(20000);
    return client.acquire(Resource(resource), options);
  });
}

// Waiters `first` and `second`, in that order, in every node's line behind
// a lock `holder` keeps on every node; then the holder releases, which
// names `first`. Returns `first`'s lock (it had to wait: its client now
// finds the resource contended).
std::optional<Lock> first_of_two_waiters(RedisCluster& cluster, BlockingClient& holder,
                                         BlockingClient& first, BlockingClient& second,
                                         const std::string& resource,
                                         std::future<AcquireResult>& second_result) {
  const std::optional<Lock> held = hold_on_every_node(cluster, holder, resource);
  if (!held) return std::nullopt;
  std::future<AcquireResult> first_result = acquire_when_named(first, resource);
  if (!line_becomes(cluster, resource, 1, true) || !wake_listeners_become(cluster, 1)) {
    return std::nullopt;
  }
  second_result = acquire_when_named(second, resource);
  if (!line_becomes(cluster, resource, 2, true) || !wake_listeners_become(cluster, 2)) {
    return std::nullopt;
  }
  (void)holder.release(*held);
  AcquireResult won = first_result.get();
  if (!won.ok()) return std::nullopt;
  return won.lock;
}

TEST(Rejoin, AReleaserThatWaitedForTheLockWaitsItsTurnInsteadOfAttempting) {
  RedisCluster cluster{1};
  BlockingClient holder(config_for(cluster));
  BlockingClient a(config_for(cluster));
  BlockingClient b(config_for(cluster));
  std::future<AcquireResult> b_first;
  const std::optional<Lock> a_lock = first_of_two_waiters(cluster, holder, a, b, "again", b_first);
  ASSERT_TRUE(a_lock.has_value());

  // A's release names B and puts A at the back of every node's line; A at
  // once wants the lock again.
  ASSERT_FALSE(a.release(*a_lock).error);
  const auto a_attempts = [&] { return a.metrics()->snapshot().acquire_attempts; };
  const auto attempts_before = a_attempts();
  std::future<AcquireResult> a_again = acquire_when_named(a, "again");
  AcquireResult b_won = b_first.get();
  ASSERT_TRUE(b_won.ok()) << b_won.error.message();

  // While B holds the lock, A waits in its place and has sent nothing (an
  // attempt would be refused by B's grant).
  EXPECT_TRUE(line_becomes(cluster, "again", 1));
  EXPECT_EQ(a_again.wait_for(milliseconds(200)), std::future_status::timeout);
  EXPECT_EQ(a_attempts(), attempts_before) << "A attempted while B held the lock";

  // B's release names A, whose one attempt wins.
  ASSERT_FALSE(b.release(*b_won.lock).error);
  ASSERT_EQ(a_again.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  AcquireResult a_won = a_again.get();
  ASSERT_TRUE(a_won.ok()) << a_won.error.message();
  // Named, and won with its one attempt.
  EXPECT_EQ(a_won.attempts, 1);
  ASSERT_FALSE(a.release(*a_won.lock).error);
  // B rejoined on its release and never came back: A's release named B's
  // place, which B's client handed on; nothing is left in line.
  EXPECT_TRUE(line_becomes(cluster, "again", 0));
}

TEST(Rejoin, APlaceNoAcquireTookIsHandedOnWhenItIsNamed) {
  RedisCluster cluster{1};
  BlockingClient holder(config_for(cluster));
  BlockingClient a(config_for(cluster));
  BlockingClient b(config_for(cluster));
  BlockingClient c(config_for(cluster));
  std::future<AcquireResult> b_first;
  const std::optional<Lock> a_lock = first_of_two_waiters(cluster, holder, a, b, "pass", b_first);
  ASSERT_TRUE(a_lock.has_value());

  // A releases (naming B, and rejoining behind B) and does not come back. B wins; C lines up behind
  // A's place.
  ASSERT_FALSE(a.release(*a_lock).error);
  AcquireResult b_won = b_first.get();
  ASSERT_TRUE(b_won.ok()) << b_won.error.message();
  ASSERT_TRUE(line_becomes(cluster, "pass", 1));
  std::future<AcquireResult> c_waits = acquire_when_named(c, "pass");
  ASSERT_TRUE(line_becomes(cluster, "pass", 2));
  ASSERT_TRUE(wake_listeners_become(cluster, 3));

  // B's release names A's place; A's client passes the turn to C at once,
  // where C would otherwise sleep until its retry timer (an hour).
  ASSERT_FALSE(b.release(*b_won.lock).error);
  ASSERT_EQ(c_waits.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "the rejoined place was named and nobody handed the turn on";
  AcquireResult c_won = c_waits.get();
  ASSERT_TRUE(c_won.ok()) << c_won.error.message();
  // Refused once, then named.
  EXPECT_EQ(c_won.attempts, 2);
  ASSERT_FALSE(c.release(*c_won.lock).error);
  EXPECT_TRUE(line_becomes(cluster, "pass", 0));
}

// A node that names an offered place again and again (a hostile one; a
// real node names a place once, taking it out of its line) gets one
// pass_turn back, not one per name.
TEST(Rejoin, ANodeThatNamesAnOfferedPlaceAgainGetsOnePass) {
  RedisCluster cluster{1};
  BlockingClient holder(config_for(cluster));
  BlockingClient a(config_for(cluster));
  BlockingClient b(config_for(cluster));
  std::future<AcquireResult> b_first;
  const std::optional<Lock> a_lock = first_of_two_waiters(cluster, holder, a, b, "again", b_first);
  ASSERT_TRUE(a_lock.has_value());
  ASSERT_FALSE(a.release(*a_lock).error);  // names B; A's place joins the line
  AcquireResult b_won = b_first.get();
  ASSERT_TRUE(b_won.ok()) << b_won.error.message();
  // A's offered place, "<wake channel> <number>", alone in the line.
  ASSERT_TRUE(line_becomes(cluster, "again", 1));
  const std::size_t n = 0;
  const Reply places =
      cluster.node(n).probe().command({"ZRANGE", "redlock:waiting:again", "0", "-1"});
  ASSERT_EQ(places.elements.size(), 1U);
  const std::string offered = places.elements[0].text;
  const std::size_t space = offered.find(' ');
  ASSERT_NE(space, std::string::npos);
  const std::string wake = offered.substr(0, space);

  // A waiter of A's client on another resource, in line: a name for it on
  // node n after the flood shows (by its attempt) that the client has read
  // every message before it on that connection.
  const std::optional<Lock> other = hold_on_every_node(cluster, holder, "other");
  ASSERT_TRUE(other.has_value());
  std::future<AcquireResult> waiter = acquire_when_named(a, "other");
  ASSERT_TRUE(line_becomes(cluster, "other", 1, true));
  const Reply waiting =
      cluster.node(n).probe().command({"ZRANGE", "redlock:waiting:other", "0", "-1"});
  ASSERT_EQ(waiting.elements.size(), 1U);
  const std::string waiter_number =
      waiting.elements[0].text.substr(waiting.elements[0].text.find(' ') + 1);
  const auto attempts = [&] { return a.metrics()->snapshot().acquire_attempts; };
  const auto attempts_before = attempts();

  const long long calls_before = script_calls(cluster.node(n));
  for (int i = 0; i < 20; ++i) {
    (void)cluster.node(n).probe().command({"PUBLISH", wake, offered.substr(space + 1) + " v"});
  }
  (void)cluster.node(n).probe().command({"PUBLISH", wake, waiter_number + " w"});
  ASSERT_TRUE(eventually([&] { return attempts() > attempts_before; }));
  // The waiter's attempt reached every node: node n has counted it.
  ASSERT_TRUE(eventually([&] { return script_calls(cluster.node(n)) >= calls_before + 2; }));
  // One pass_turn and the waiter's attempt (and at most one retry of it).
  EXPECT_LE(script_calls(cluster.node(n)) - calls_before, 3);

  (void)holder.release(*other);
  AcquireResult waited = waiter.get();
  ASSERT_TRUE(waited.ok()) << waited.error.message();
  (void)a.release(*waited.lock);
  (void)b.release(*b_won.lock);
}

TEST(Rejoin, AReleaseSkipsThePlaceOfAClientThatNoLongerListens) {
  RedisCluster cluster{1};
  BlockingClient holder(config_for(cluster));
  const std::optional<Lock> held = hold_on_every_node(cluster, holder, "ghost");
  ASSERT_TRUE(held.has_value());
  // A place at the head of every node's line whose wake channel nobody
  // subscribes (its client is gone).
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    ASSERT_EQ(cluster.node(i)
                  .probe()
                  .command({"ZADD", "redlock:waiting:ghost", "0", "redlock:released:@gone 5"})
                  .integer,
              1);
  }
  BlockingClient waiter(config_for(cluster));
  std::future<AcquireResult> waits = acquire_when_named(waiter, "ghost");
  ASSERT_TRUE(line_becomes(cluster, "ghost", 2, true));
  ASSERT_TRUE(wake_listeners_become(cluster, 1));

  ASSERT_FALSE(holder.release(*held).error);
  ASSERT_EQ(waits.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "the release named the dead place and stopped there";
  AcquireResult won = waits.get();
  ASSERT_TRUE(won.ok()) << won.error.message();
  EXPECT_EQ(won.attempts, 2);  // refused, then named
  ASSERT_FALSE(waiter.release(*won.lock).error);
  EXPECT_TRUE(line_becomes(cluster, "ghost", 0));
}

}  // namespace
}  // namespace redlock::test
