// Leader election on real nodes: one leader at a time, terms that strictly
// increase, a payload that observers read by majority, resignation and
// loss that reach the leader and the observers.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

class ElectionTest : public ::testing::Test {
 protected:
  RedisCluster cluster{5};
  void SetUp() override { initialise_quorum(cluster); }
};

CampaignOptions advertising(std::string payload) {
  CampaignOptions options;
  options.payload = std::move(payload);
  return options;
}

TEST_F(ElectionTest, TheLeaderIsReadByMajorityWithItsTermAndPayload) {
  BlockingClient client(config_for(cluster));
  const Election election("scheduler");
  const LeaderResult before = client.leader(election);
  ASSERT_TRUE(before.ok()) << before.error.message();
  EXPECT_FALSE(before.leader.has_value());

  Guard leader = client.campaign(election, advertising("10.0.0.7:8080"));
  ASSERT_TRUE(leader.owns_lock()) << leader.error().message();
  ASSERT_TRUE(leader.fence().has_value()) << "the term is the fencing token";
  EXPECT_EQ(leader.lock().resource.str(), "election:scheduler");
  EXPECT_TRUE(eventually([&] { return nodes_holding(cluster, "election:scheduler") == 5; }));

  const LeaderResult now = client.leader(election);
  ASSERT_TRUE(now.ok());
  ASSERT_TRUE(now.leader.has_value());
  EXPECT_EQ(now.leader->term, *leader.fence());
  EXPECT_EQ(now.leader->payload, "10.0.0.7:8080");
  EXPECT_GT(now.leader->validity.count(), 0);

  (void)leader.release();  // resign
  const LeaderResult after = client.leader(election);
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(after.leader.has_value());
}

TEST_F(ElectionTest, OneLeaderAtATimeAndEachTermAboveTheLast) {
  QuorumConfig config = config_for(cluster);
  const Election election("jobs");
  std::vector<std::unique_ptr<BlockingClient>> clients;
  for (int i = 0; i < 3; ++i) clients.push_back(std::make_unique<BlockingClient>(config));
  std::atomic<int> leading{0};
  std::atomic<int> overlaps{0};
  std::mutex terms_mutex;
  std::vector<std::uint64_t> terms;
  std::vector<std::thread> candidates;
  for (int i = 0; i < 3; ++i) {
    candidates.emplace_back([&, i] {
      for (int round = 0; round < 4; ++round) {
        CampaignOptions options = advertising("candidate " + std::to_string(i));
        options.wait = milliseconds(10000);
        Guard guard = clients[static_cast<std::size_t>(i)]->campaign(election, options);
        if (!guard) continue;
        if (++leading != 1) ++overlaps;
        {
          std::lock_guard<std::mutex> lock(terms_mutex);
          terms.push_back(*guard.fence());
        }
        std::this_thread::sleep_for(milliseconds(5));
        --leading;
        (void)guard.release();
      }
    });
  }
  for (std::thread& thread : candidates) thread.join();
  EXPECT_EQ(overlaps.load(), 0);
  ASSERT_EQ(terms.size(), 12u) << "every campaign ended in a term";
  // Recorded while leading, one leader at a time: in election order.
  for (std::size_t i = 1; i < terms.size(); ++i) {
    EXPECT_GT(terms[i], terms[i - 1]) << "term " << i;
  }
}

TEST_F(ElectionTest, AnUnboundedCampaignWaitsUntilTheLeaderResigns) {
  QuorumConfig config = config_for(cluster);
  BlockingClient first(config);
  BlockingClient second(config);
  const Election election("primary");
  Guard leader = first.campaign(election, advertising("a"));
  ASSERT_TRUE(leader);
  std::atomic<bool> elected{false};
  Guard next;
  std::thread waiting([&] {
    next = second.campaign(election, advertising("b"));  // no wait: until elected
    elected = true;
  });
  // Longer than one retry budget of the configuration (no retries at all).
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_FALSE(elected.load());
  (void)leader.release();
  EXPECT_TRUE(eventually([&] { return elected.load(); }));
  waiting.join();
  ASSERT_TRUE(next) << next.error().message();
  EXPECT_GT(*next.fence(), *leader.acquired().lock->fence);
  const LeaderResult seen = first.leader(election);
  ASSERT_TRUE(seen.leader.has_value());
  EXPECT_EQ(seen.leader->payload, "b");
}

TEST_F(ElectionTest, ACampaignStopsWhenAskedTo) {
  QuorumConfig config = config_for(cluster);
  BlockingClient first(config);
  BlockingClient second(config);
  const Election election("primary");
  Guard leader = first.campaign(election);
  ASSERT_TRUE(leader);
  std::stop_source stop;
  Guard next;
  std::thread waiting([&] { next = second.campaign(election, {}, stop.get_token()); });
  std::this_thread::sleep_for(milliseconds(100));
  stop.request_stop();
  waiting.join();
  EXPECT_FALSE(next);
  EXPECT_EQ(next.error(), make_error_code(errc::cancelled));
  // Nothing of the cancelled candidate stays: the leader still leads. (Not
  // "every node holds it": a node whose connection was not up in time
  // never got the leader's request.)
  std::size_t leaders = 0;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    const Reply held = cluster.node(i).probe().command({"GET", key_of("election:primary")});
    if (held.kind == Reply::Kind::nil) continue;
    EXPECT_EQ(held.text, leader.lock().value.str()) << "node " << i;
    ++leaders;
  }
  EXPECT_GE(leaders, cluster.size() / 2 + 1);
  EXPECT_TRUE(leader.valid());
}

TEST_F(ElectionTest, ALeaderThatLosesItsLockIsToldAtOnce) {
  BlockingClient client(config_for(cluster, milliseconds(300)));
  std::atomic<bool> lost{false};
  CampaignOptions options;
  options.on_lost = [&](std::error_code) { lost = true; };
  Guard leader = client.campaign(Election("lossy"), options);
  ASSERT_TRUE(leader);
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    (void)cluster.node(i).probe().command({"DEL", key_of("election:lossy")});
  }
  EXPECT_TRUE(eventually([&] { return lost.load(); }, milliseconds(3000)));
  EXPECT_TRUE(leader.stop_token().stop_requested());
}

TEST_F(ElectionTest, AnObserverIsToldOfEachLeaderAndOfTheirGoing) {
  QuorumConfig config = config_for(cluster);
  BlockingClient candidate(config);
  LoopRun run(config);
  ObservedLeaders observed;
  const auto count = [&] { return observed.count(); };
  std::atomic<bool> acted{false};
  std::uint64_t first_term = 0;
  Guard second;  // held until the observer is cancelled
  // The candidate acts on its own thread, each step once the observer saw
  // the one before; the loop runs the observer on this one.
  std::thread actor([&] {
    if (eventually([&] { return count() == 1; }) &&
        subscribers_become(cluster, "redlock:released:election:web#elected", 1)) {
      Guard first = candidate.campaign(Election("web"), advertising("10.0.0.1"));
      first_term = first.fence().value_or(0);
      if (eventually([&] { return count() == 2; }, milliseconds(3000))) {
        (void)first.release();
        if (eventually([&] { return count() == 3; }, milliseconds(3000))) {
          second = candidate.campaign(Election("web"), advertising("10.0.0.2"));
          (void)eventually([&] { return count() == 4; }, milliseconds(3000));
        }
      }
    }
    acted = true;
  });
  ObserveOptions options;
  options.poll = milliseconds(60000);  // only the pushes can tell it in time
  EXPECT_TRUE(
      observe_until_acted(run, Election("web"), options, observed, acted, 5, milliseconds(20000)));
  actor.join();
  const std::vector<LeaderResult> seen = observed.all();
  ASSERT_EQ(seen.size(), 5u) << "the elections and the resignation were not all pushed";
  EXPECT_TRUE(seen[0].ok());
  EXPECT_FALSE(seen[0].leader.has_value());
  ASSERT_TRUE(seen[1].leader.has_value());
  EXPECT_EQ(seen[1].leader->payload, "10.0.0.1");
  EXPECT_EQ(seen[1].leader->term, first_term);
  EXPECT_FALSE(seen[2].leader.has_value());
  ASSERT_TRUE(seen[3].leader.has_value());
  EXPECT_EQ(seen[3].leader->payload, "10.0.0.2");
  EXPECT_GT(seen[3].leader->term, seen[1].leader->term);
  EXPECT_EQ(seen[4].error, make_error_code(errc::cancelled));
}

TEST_F(ElectionTest, AnObserverReadsAgainOnALaterCopyOfTheRelease) {
  // The first node's copy of a resignation can come before the release
  // reached a majority: the read it starts still finds the leader. The
  // other nodes' copies carry the same text; the observer must read again
  // on them, or it would keep the old leader until its poll. Here the first
  // copy also wakes a reader of the same client waiting on the election's
  // resource (so the release counts as served, and no later copy is taken
  // for a first one), which then gives up before the release is done.
  QuorumConfig config = config_for(cluster, milliseconds(60000));  // no renewal meanwhile
  BlockingClient candidate(config);
  Guard leader = candidate.campaign(Election("early"), advertising("a"));
  ASSERT_TRUE(leader);
  const std::string value = leader.lock().value.str();
  const std::string channel = "redlock:released:election:early";
  LoopRun run(config);
  const std::shared_ptr<Metrics> metrics = run.client().metrics();
  const auto reader_attempts = [&] { return metrics->snapshot().acquire_attempts; };
  std::atomic<int> calls{0};
  std::atomic<bool> gone{false};
  std::atomic<bool> acted{false};
  std::atomic<bool> stop_reader{false};
  std::atomic<bool> reader_done{false};
  std::atomic<int> step{0};  // how far the actor got, for the failure message
  std::thread actor([&] {
    if (eventually([&] { return calls.load() == 1 && reader_attempts() >= 1; }) &&
        subscribers_become(cluster, channel, 1)) {
      std::vector<long long> wanted = script_calls(cluster);
      const std::uint64_t tried = reader_attempts();
      step = 1;
      // The first copy, before any node has released: the observer reads,
      // the reader tries again; both have reached every node before the
      // reader gives up.
      (void)cluster.node(0).probe().command({"PUBLISH", channel, value});
      for (long long& count : wanted) count += 2;
      if (eventually([&] { return reader_attempts() > tried; }) &&
          script_calls_reach(cluster, wanted)) {
        step = 2;
        stop_reader = true;
        if (eventually([&] { return reader_done.load(); })) {
          step = 3;
          // The release itself: each node deletes, then publishes the same value.
          for (std::size_t i = 0; i < cluster.size(); ++i) {
            (void)cluster.node(i).probe().command(
                release_request("election:early", value, channel, ""));
          }
          (void)eventually([&] { return gone.load(); }, milliseconds(3000));
        }
      }
    }
    acted = true;
  });
  ObserveOptions options;
  options.poll = milliseconds(60000);  // only the pushes can tell it in time
  AcquireOptions reading;
  reading.shared = true;
  reading.retry_delay = milliseconds(60000);
  reading.wait = milliseconds(20000);
  OperationHandle reader;
  EXPECT_TRUE(run.run(
      [&] {
        (void)run.client().observe(Election("early"), options, [&](const LeaderResult& result) {
          if (++calls > 1 && result.ok() && !result.leader) gone = true;
        });
        reader = run.client().acquire(Resource("election:early"), reading,
                                      [&](const AcquireResult&) { reader_done = true; });
        run.when([&] { return stop_reader.load(); }, [&] { reader.cancel(); });
        run.when([&] { return acted.load(); }, [&] { run.done(); });
      },
      milliseconds(10000)));
  actor.join();
  EXPECT_TRUE(reader_done.load()) << "the reader never came to wait, or never gave up";
  EXPECT_GE(calls.load(), 1) << "the observer never reported the leader";
  EXPECT_TRUE(gone.load()) << "the resignation was heard but never read (step " << step.load()
                           << " of 3)";
}

TEST_F(ElectionTest, AnObserverNoticesALeaderThatVanishedByItsPoll) {
  QuorumConfig config = config_for(cluster, milliseconds(300));
  BlockingClient candidate(config);
  Guard leader = candidate.campaign(Election("crashy"), advertising("x"));
  ASSERT_TRUE(leader);
  LoopRun run(config);
  std::atomic<int> calls{0};
  std::atomic<bool> gone{false};
  ObserveOptions options;
  options.poll = milliseconds(100);
  std::thread actor([&] {
    // The leader's lock vanishes without a release (as after a crash:
    // nothing is published), once the observer saw it.
    if (eventually([&] { return calls.load() >= 1; })) {
      for (std::size_t i = 0; i < cluster.size(); ++i) {
        (void)cluster.node(i).probe().command({"DEL", key_of("election:crashy")});
      }
    }
  });
  EXPECT_TRUE(run.run(
      [&] {
        (void)run.client().observe(Election("crashy"), options, [&](const LeaderResult& result) {
          if (++calls > 1 && result.ok() && !result.leader) gone = true;
        });
        run.when([&] { return gone.load(); }, [&] { run.done(); });
      },
      milliseconds(5000)));
  actor.join();
  EXPECT_TRUE(gone.load());
}

TEST_F(ElectionTest, ANewHolderIsNotPairedWithTheLastTermUnlessItNeverTakesOne) {
  // A new leader is reported with its own term, never the one before — but
  // a holder that takes no term at all (an unfenced lock on the election's
  // resource) is still reported, with the counter as it stands, after a
  // bounded wait.
  QuorumConfig config = config_for(cluster);
  BlockingClient candidate(config);
  LoopRun run(config);
  ObservedLeaders observed;
  const auto count = [&] { return observed.count(); };
  std::atomic<bool> acted{false};
  std::uint64_t term = 0;
  std::thread actor([&] {
    if (eventually([&] { return count() == 1; })) {
      Guard first = candidate.campaign(Election("odd"), advertising("a"));
      term = first.fence().value_or(0);
      if (eventually([&] { return count() == 2; }, milliseconds(3000))) {
        // Replaced on every node at once, with no term of its own.
        for (std::size_t i = 0; i < cluster.size(); ++i) {
          (void)cluster.node(i).probe().command(
              {"SET", key_of("election:odd"), "0123456789abcdef0123456789abcdef:b", "PX", "10000"});
        }
        (void)eventually([&] { return count() == 3; }, milliseconds(3000));
      }
    }
    acted = true;
  });
  ObserveOptions options;
  options.poll = milliseconds(20);
  EXPECT_TRUE(run.run(
      [&] {
        (void)run.client().observe(Election("odd"), options,
                                   [&](const LeaderResult& result) { observed.add(result); });
        run.when([&] { return acted.load(); }, [&] { run.done(); });
      },
      milliseconds(10000)));
  actor.join();
  const std::vector<LeaderResult> seen = observed.all();
  ASSERT_GE(seen.size(), 3u);
  ASSERT_TRUE(seen[1].leader && seen[2].leader);
  EXPECT_EQ(seen[1].leader->payload, "a");
  EXPECT_EQ(seen[2].leader->payload, "b");
  EXPECT_EQ(seen[2].leader->term, term);
}

TEST_F(ElectionTest, RefusesAnEmptyNameAndAnOversizedPayload) {
  BlockingClient client(config_for(cluster));
  EXPECT_EQ(client.campaign(Election("")).error(), make_error_code(errc::invalid_argument));
  EXPECT_EQ(client.campaign(Election("e"), advertising(std::string(4097, 'x'))).error(),
            make_error_code(errc::invalid_argument));
  EXPECT_EQ(client.leader(Election("")).error, make_error_code(errc::invalid_argument));
  EXPECT_EQ(nodes_holding(cluster, "election:e"), 0u);
}

TEST(PayloadOf, ReadsWhatFollowsTheRandomPart) {
  EXPECT_EQ(payload_of("0123456789abcdef0123456789abcdef:host:1"), "host:1");
  EXPECT_EQ(payload_of("0123456789abcdef0123456789abcdef:"), "");
  EXPECT_FALSE(payload_of("0123456789abcdef0123456789abcdef").has_value());
  EXPECT_FALSE(payload_of("0123456789abcdef0123456789abcdeX:x").has_value());
  EXPECT_FALSE(payload_of("short:x").has_value());
}

}  // namespace
}  // namespace redlock::test
