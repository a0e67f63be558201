// A set's turn on real nodes (docs/algorithm.md, "A set's turn"): a client
// that locks {a, c} while other clients keep locking {a} alone and {c}
// alone, with no pause between their locks, is served; once its place in
// a member's line is recorded, no single-resource client acquires that
// member twice before the set does; and the set, the members' lines and
// exclusion are left as a plain set's.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "scripts/scripts.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

class SetTurnTest : public ::testing::Test {
 protected:
  RedisCluster cluster{5};
  void SetUp() override { initialise_quorum(cluster); }
};

// One single-resource client's acquisitions: when each began (its
// winning attempt's t0, on this process's clock, as the set's tickets),
// when its release had returned, and its token when fenced.
struct Acquisitions {
  std::mutex mutex;
  std::vector<TimePoint> started;
  std::vector<TimePoint> released;
  std::vector<std::uint64_t> tokens;
};

// Single-resource clients, one on each of `singles`, locking again as soon
// as they let go, and a set client locking {a, c} `kRounds` times.
// Checks that the set is served every round, that no single client takes
// a member twice after the set's place there was recorded and before the
// set's lock, and, when `fenced`, that the set's one token orders it after
// every holder of each member before it and before every one after it.
void serve_set_among_singles(RedisCluster& cluster, const std::vector<std::string>& singles,
                             bool fenced) {
  QuorumConfig config = config_for(cluster);
  config.lock.fenced = fenced;
  constexpr int kRounds = 6;
  std::vector<Acquisitions> taken(singles.size());
  std::atomic<bool> stop{false};
  std::atomic<int> single_overlaps{0};
  std::map<std::string, std::atomic<int>> inside;
  inside["a"] = 0;
  inside["c"] = 0;
  // First the set waits its turn behind a holder of "a", alone in a's
  // line: it records a place there on every node and is served at the
  // holder's release. (Among the single clients below it may also find
  // both members free at once.)
  {
    BlockingClient holder(config);
    BlockingClient set_client(config);
    const AcquireResult held = holder.acquire(Resource("a"));
    ASSERT_TRUE(held.ok()) << held.error.message();
    std::future<AcquireResult> waiting = std::async(std::launch::async, [&] {
      AcquireOptions options;
      options.wait = milliseconds(10000);
      return set_client.acquire({Resource("a"), Resource("c")}, options);
    });
    const bool queued = eventually([&] {
      for (std::size_t n = 0; n < cluster.size(); ++n) {
        if (cluster.node(n).probe().command({"ZCARD", "redlock:queue:a"}).integer != 1) {
          return false;
        }
      }
      return true;
    });
    (void)holder.release(*held.lock);
    const AcquireResult set = waiting.get();
    ASSERT_TRUE(queued) << "the set took no place in a's line";
    ASSERT_TRUE(set.ok()) << set.error.message();
    EXPECT_FALSE(set.places.empty());
    if (fenced) {
      ASSERT_TRUE(held.lock->fence && set.lock->fence);
      EXPECT_GT(*set.lock->fence, *held.lock->fence);
    }
    (void)set_client.release(*set.lock);
  }
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < singles.size(); ++i) {
    threads.emplace_back([&, i] {
      BlockingClient client(config);
      AcquireOptions options;
      options.wait = milliseconds(10000);
      while (!stop.load()) {
        const AcquireResult held = client.acquire(Resource(singles[i]), options);
        if (!held.ok()) continue;
        if (++inside[singles[i]] != 1) ++single_overlaps;
        --inside[singles[i]];
        (void)client.release(*held.lock);
        const TimePoint released = SteadyClock::now();
        std::lock_guard<std::mutex> guard(taken[i].mutex);
        taken[i].started.push_back(held.lock->started);
        taken[i].released.push_back(released);
        taken[i].tokens.push_back(held.lock->fence.value_or(0));
      }
    });
  }
  // The single clients are cycling (each has taken its resource) before
  // the set asks.
  ASSERT_TRUE(eventually([&] {
    for (Acquisitions& each : taken) {
      std::lock_guard<std::mutex> guard(each.mutex);
      if (each.started.empty()) return false;
    }
    return true;
  }));
  BlockingClient set_client(config);
  AcquireOptions options;
  // A bound proving the set is served, not a timing claim: before the
  // set's turn, such a waiter timed out at 1 s most of the time.
  options.wait = milliseconds(5000);
  int served = 0;
  int waited_in_line = 0;
  struct SetHold {
    TimePoint started;
    TimePoint released;
    std::uint64_t token = 0;
  };
  std::vector<SetHold> set_holds;
  for (int round = 0; round < kRounds; ++round) {
    const AcquireResult held = set_client.acquire({Resource("a"), Resource("c")}, options);
    ASSERT_TRUE(held.ok()) << "round " << round << ": " << held.error.message();
    ++served;
    ASSERT_EQ(held.lock->resources.size(), 2U);
    if (fenced) {
      ASSERT_TRUE(held.lock->fence.has_value()) << "round " << round;
      ASSERT_EQ(held.lock->fences.size(), 2U);
      EXPECT_EQ(held.lock->fences[0], *held.lock->fence);
      EXPECT_EQ(held.lock->fences[1], *held.lock->fence);
    }
    // The lock starts with the round that made it one (its adoption): its
    // validity is counted from there, never past start + TTL.
    EXPECT_LE(held.lock->valid_until, held.lock->started + config.lock.ttl);
    // The set's value holds both members on a majority.
    for (const char* member : {"a", "c"}) {
      std::size_t holding = 0;
      for (std::size_t n = 0; n < cluster.size(); ++n) {
        if (cluster.node(n).probe().command({"GET", key_of(member)}).text ==
            held.lock->value.str()) {
          ++holding;
        }
      }
      EXPECT_GE(holding, 3U) << member;
    }
    if (!held.places.empty()) ++waited_in_line;
    for (const AcquireResult::Place& place : held.places) {
      for (std::size_t i = 0; i < singles.size(); ++i) {
        if (singles[i] != place.resource.str()) continue;
        std::lock_guard<std::mutex> guard(taken[i].mutex);
        int ahead = 0;
        for (TimePoint started : taken[i].started) {
          if (started > place.ticket.recorded_at && started < held.lock->started) ++ahead;
        }
        EXPECT_LE(ahead, 1) << "round " << round << ": client " << i << " took "
                            << place.resource.str() << " " << ahead
                            << " times after the set's place there was recorded";
      }
    }
    (void)set_client.release(*held.lock);
    set_holds.push_back({held.lock->started, SteadyClock::now(), held.lock->fence.value_or(0)});
  }
  stop = true;
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(served, kRounds);
  // Unfenced, the single clients turn fair and hand each member on in its
  // line, leaving no moment with both free: the set waits its turn among
  // them too. (Fenced, they retry after pauses, and the set may find both
  // free every round.)
  if (!fenced) {
    EXPECT_GT(waited_in_line, 0);
  }
  EXPECT_EQ(single_overlaps.load(), 0);
  for (Acquisitions& each : taken) EXPECT_GT(each.started.size(), 0U);
  if (!fenced) return;
  // A holder released before the set's lock began held before it; one
  // whose lock began after the set's release returned, after it.
  int ordered = 0;
  for (const SetHold& set : set_holds) {
    for (std::size_t i = 0; i < singles.size(); ++i) {
      for (std::size_t k = 0; k < taken[i].started.size(); ++k) {
        if (taken[i].released[k] < set.started) {
          EXPECT_LT(taken[i].tokens[k], set.token) << singles[i] << " before the set";
          ++ordered;
        } else if (taken[i].started[k] > set.released) {
          EXPECT_GT(taken[i].tokens[k], set.token) << singles[i] << " after the set";
          ++ordered;
        }
      }
    }
  }
  EXPECT_GT(ordered, 0);
}

// Two clients on each member: contended, they turn fair and hand each
// member on in its line, which left no moment with both free.
TEST_F(SetTurnTest, ASetWaiterIsServedAndNoSingleClientTakesAMemberTwiceAheadOfIt) {
  serve_set_among_singles(cluster, {"a", "a", "c", "c"}, false);
}

// The same with every client fenced (a fenced single never turns fair;
// contended, it retries after its pauses): the set waits its turn as
// well, and its one token (proposed once it holds every member) is above
// every earlier holder's of each member and below every later one's.
TEST_F(SetTurnTest, AFencedSetWaiterIsServedAndItsTokenOrdersItAmongTheMembersHolders) {
  serve_set_among_singles(cluster, {"a", "a", "c", "c"}, true);
}

// A set that gives up its wait (here: the members are held for longer
// than it waits) keeps nothing: no member it took and no place in a line.
TEST_F(SetTurnTest, ASetThatGivesUpKeepsNoMemberAndNoPlace) {
  const QuorumConfig config = config_for(cluster);
  BlockingClient holder(config);
  BlockingClient set_client(config);
  const AcquireResult c = holder.acquire(Resource("c"));
  ASSERT_TRUE(c.ok());
  // Every node holds c (an acquire answers at a majority; a loaded node's
  // grant may come later).
  ASSERT_TRUE(eventually([&] {
    for (std::size_t n = 0; n < cluster.size(); ++n) {
      if (cluster.node(n).probe().command({"GET", key_of("c")}).text != c.lock->value.str()) {
        return false;
      }
    }
    return true;
  }));
  AcquireOptions options;
  options.wait = milliseconds(600);
  const AcquireResult set = set_client.acquire({Resource("c"), Resource("a")}, options);
  EXPECT_EQ(set.error, make_error_code(errc::not_acquired));
  // It took "a" (first in name order) and waited in c's line; giving up
  // released "a" and left c's line.
  std::string left;
  EXPECT_TRUE(eventually([&] {
    for (std::size_t n = 0; n < cluster.size(); ++n) {
      RedisProbe probe = cluster.node(n).probe();
      left = "node " + std::to_string(n) + " a=" + probe.command({"GET", key_of("a")}).text;
      if (probe.command({"EXISTS", key_of("a")}).integer != 0) return false;
      left += " queue c: " + std::to_string(probe.command({"ZCARD", "redlock:queue:c"}).integer);
      if (probe.command({"ZCARD", "redlock:queue:c"}).integer != 0) return false;
    }
    return true;
  })) << left;
  // The plain holder of c is untouched, and "a" is free for anyone.
  EXPECT_FALSE(holder.release(*c.lock).error);
  BlockingClient other(config);
  EXPECT_TRUE(other.acquire(Resource("a")).ok());
}

// The set's release hands each member on to that member's fair line in
// the release itself: with the waiter first in c's line, no newcomer can
// take c in the same transaction as the set's release on any node (a
// release that only freed c would let the newcomer's SET NX in, and the
// waiter's next record would come too late).
TEST_F(SetTurnTest, ASetsReleaseGrantsEachMembersFirstWaiter) {
  const QuorumConfig config = config_for(cluster);
  BlockingClient set_client(config);
  BlockingClient waiter(config);
  const AcquireResult set = set_client.acquire({Resource("a"), Resource("c")});
  ASSERT_TRUE(set.ok());
  const std::string value = set.lock->value.str();
  // Every node holds both members (an acquire answers at a majority).
  ASSERT_TRUE(eventually([&] {
    for (std::size_t n = 0; n < cluster.size(); ++n) {
      RedisProbe probe = cluster.node(n).probe();
      if (probe.command({"GET", key_of("a")}).text != value ||
          probe.command({"GET", key_of("c")}).text != value) {
        return false;
      }
    }
    return true;
  }));
  std::future<AcquireResult> waiting = std::async(std::launch::async, [&] {
    AcquireOptions fair;
    fair.fair = true;
    fair.wait = milliseconds(10000);
    return waiter.acquire(Resource("c"), fair);
  });
  // The waiter's place and claim are recorded on every node.
  ASSERT_TRUE(eventually([&] {
    for (std::size_t n = 0; n < cluster.size(); ++n) {
      RedisProbe probe = cluster.node(n).probe();
      if (probe.command({"ZCARD", "redlock:queue:c"}).integer != 1 ||
          probe.command({"HLEN", "redlock:queue-claim:c"}).integer != 1) {
        return false;
      }
    }
    return true;
  }));
  // The set's release as the client sends it, with a newcomer's SET NX in
  // the same transaction on each node: nothing can run between the two.
  const std::vector<std::string> release = {
      "EVAL",
      std::string(detail::script(detail::ScriptId::release_all).body),
      "4",
      "redlock:node",
      "redlock:recovering",
      key_of("a"),
      key_of("c"),
      value,
      "redlock:released:a",
      "redlock:waiting:a",
      "redlock:released:c",
      "redlock:waiting:c"};
  std::size_t taken = 0;
  for (std::size_t n = 0; n < cluster.size(); ++n) {
    RedisProbe probe = cluster.node(n).probe();
    ASSERT_EQ(probe.command({"MULTI"}).kind, Reply::Kind::status);
    (void)probe.command(release);
    (void)probe.command({"SET", key_of("c"), "newcomer", "NX", "PX", "10000"});
    const Reply done = probe.command({"EXEC"});
    ASSERT_EQ(done.kind, Reply::Kind::array);
    ASSERT_EQ(done.elements.size(), 2U);
    ASSERT_EQ(done.elements[0].integer, 1) << "node " << n << " did not release the set";
    if (done.elements[1].text == "OK") ++taken;
  }
  EXPECT_EQ(taken, 0U) << "a newcomer took c between the set's release and the waiter's grant";
  const AcquireResult got = waiting.get();
  ASSERT_TRUE(got.ok()) << got.error.message();
  std::size_t holding = 0;
  for (std::size_t n = 0; n < cluster.size(); ++n) {
    if (cluster.node(n).probe().command({"GET", key_of("c")}).text == got.lock->value.str()) {
      ++holding;
    }
  }
  EXPECT_GE(holding, 3U);
  (void)waiter.release(*got.lock);
}

// Two sets that list the same names in opposite orders, among clients
// that lock each name alone, are both served round after round: each
// takes the names in the same (byte) order, so neither holds what the
// other waits for.
TEST_F(SetTurnTest, SetsListingTheirNamesInOppositeOrdersAreBothServed) {
  const QuorumConfig config = config_for(cluster);
  std::atomic<bool> stop{false};
  std::vector<std::thread> singles;
  for (const char* name : {"a", "c"}) {
    singles.emplace_back([&, name] {
      BlockingClient client(config);
      AcquireOptions options;
      options.wait = milliseconds(10000);
      while (!stop.load()) {
        const AcquireResult held = client.acquire(Resource(name), options);
        if (held.ok()) (void)client.release(*held.lock);
      }
    });
  }
  std::atomic<int> served{0};
  std::atomic<int> waited{0};
  std::vector<std::string> failures(2);
  std::vector<std::thread> sets;
  const std::vector<std::vector<Resource>> orders = {{Resource("a"), Resource("c")},
                                                     {Resource("c"), Resource("a")}};
  for (std::size_t s = 0; s < orders.size(); ++s) {
    sets.emplace_back([&, s] {
      BlockingClient client(config);
      AcquireOptions options;
      // A bound proving no deadlock, not a timing claim: two sets that
      // took their names in the caller's order held one each, renewed,
      // until this ran out.
      options.wait = milliseconds(5000);
      for (int round = 0; round < 8; ++round) {
        const AcquireResult held = client.acquire(orders[s], options);
        if (!held.ok()) {
          failures[s] = "round " + std::to_string(round) + ": " + held.error.message();
          return;
        }
        ++served;
        if (!held.places.empty()) ++waited;
        (void)client.release(*held.lock);
      }
    });
  }
  for (std::thread& thread : sets) thread.join();
  stop = true;
  for (std::thread& thread : singles) thread.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
  EXPECT_EQ(served.load(), 16);
  EXPECT_GT(waited.load(), 0);
}

// adopt_all on a real node, called as the library sends it: it changes a
// key only when the key holds the member's own value, the set's, or
// nothing, and takes a free key only under the node rules.
TEST_F(SetTurnTest, AdoptionNeverTakesAKeyFromAnotherHolder) {
  RedisProbe node = cluster.node(0).probe();
  const std::string body(detail::script(detail::ScriptId::adopt_all).body);
  const auto adopt = [&](const std::string& defence) {
    return node.command({"EVAL", body, "4", "redlock:node", "redlock:recovering", key_of("a"),
                         key_of("c"), "set", "10000", defence, "own-a", "own-c"});
  };
  // c held by someone else: nothing changes.
  (void)node.command({"SET", key_of("a"), "own-a", "PX", "10000"});
  (void)node.command({"SET", key_of("c"), "other", "PX", "10000"});
  EXPECT_EQ(adopt("0").integer, 0);
  EXPECT_EQ(node.command({"GET", key_of("a")}).text, "own-a");
  EXPECT_EQ(node.command({"GET", key_of("c")}).text, "other");
  // c free, the defence on and no marker: a free key is not taken.
  (void)node.command({"DEL", key_of("c"), "redlock:node"});
  EXPECT_EQ(adopt("1").integer, 0);
  EXPECT_EQ(node.command({"GET", key_of("a")}).text, "own-a");
  EXPECT_EQ(node.command({"EXISTS", key_of("c")}).integer, 0);
  // The node rules allow: every key is the set's, with the TTL.
  (void)node.command({"SET", "redlock:node", "1"});
  EXPECT_EQ(adopt("1").integer, 1);
  EXPECT_EQ(node.command({"GET", key_of("a")}).text, "set");
  EXPECT_EQ(node.command({"GET", key_of("c")}).text, "set");
  EXPECT_GT(node.command({"PTTL", key_of("c")}).integer, 9000);
  // Again (a repeated request): the set's value is accepted as its own.
  EXPECT_EQ(adopt("1").integer, 1);
}

}  // namespace
}  // namespace redlock::test
