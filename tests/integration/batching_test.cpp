// Requests of one loop turn to one node go out as one batched script call
// (NodeConnection, scripts.cpp's batch wrapper). Against real nodes: every
// request still gets its own answer, in order, an error in one request
// stays that request's, and a node that lost its scripts is recovered.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "harness.hpp"
#include "redis_fixture.hpp"
#include "redis_probe.hpp"

namespace redlock::test {
namespace {

constexpr int kLocks = 20;

std::uint64_t batched_on(AsyncClient& client, std::size_t node) {
  return client.metrics()->snapshot().nodes.at(node).batched;
}

std::string resource_name(int i) { return "batch-" + std::to_string(i); }

// These tests check answers, not timing: a node timeout far above what a
// loaded machine needs, so that every request of a batch is answered
// (harness.hpp's 200 ms was missed when other tests loaded both cores).
QuorumConfig batching_config(const RedisCluster& cluster) {
  QuorumConfig quorum = config_for(cluster);
  quorum.lock.node_timeout = std::chrono::milliseconds(2000);
  return quorum;
}

// Initialises the nodes of `quorum` (each gets its identity marker) with
// one acquire and release: counters or a recovering key on a node without
// its marker would make it one that lost its data.
void initialise_nodes(const QuorumConfig& quorum) {
  BlockingClient setup(quorum);
  AcquireResult warm = setup.acquire(Resource("warm-up"));
  ASSERT_TRUE(warm.ok()) << warm.error.message();
  (void)setup.release(*warm.lock);
}

// Node `node` holds every resource of these tests for someone else for a
// minute: it answers busy, and the other nodes' answers decide.
void hold_elsewhere(RedisCluster& cluster, std::size_t node) {
  for (int i = 0; i < kLocks; ++i) {
    EXPECT_EQ(cluster.node(node)
                  .probe()
                  .command({"SET", key_of(resource_name(i)), "someone-else", "PX", "60000"})
                  .kind,
              Reply::Kind::status);
  }
}

// Acquires the kLocks resources in one turn on a new client (resource i
// with options_for(i)); each result, and the batched-request count on every
// node afterwards.
struct OneTurn {
  std::vector<AcquireResult> results;
  std::vector<std::uint64_t> batched;
};

OneTurn acquire_in_one_turn(const RedisCluster& cluster, const QuorumConfig& quorum,
                            const std::function<AcquireOptions(int)>& options_for = {}) {
  OneTurn turn;
  turn.results.resize(kLocks);
  LoopRun run(quorum);
  int answered = 0;
  EXPECT_TRUE(run.run([&] {
    when_connected(run, [&] {
      for (int i = 0; i < kLocks; ++i) {
        const AcquireOptions options = options_for ? options_for(i) : AcquireOptions{};
        run.client().acquire(Resource(resource_name(i)), options, [&, i](AcquireResult r) {
          turn.results[static_cast<std::size_t>(i)] = std::move(r);
          if (++answered == kLocks) run.done();
        });
      }
    });
  }));
  for (std::size_t node = 0; node < cluster.size(); ++node) {
    turn.batched.push_back(batched_on(run.client(), node));
  }
  return turn;
}

// On one client: acquires kLocks resources, all started in one turn; once
// every acquire has answered, runs `between` (on the loop thread, with the
// locks), then releases them all in one turn. Results go to the vectors.
struct Cycle {
  std::vector<Lock> locks;
  std::vector<ReleaseResult> releases;
  std::vector<std::uint64_t> batched_after_acquire;
  std::vector<std::uint64_t> batched_after_release;
};

Cycle acquire_then_release(RedisCluster& cluster,
                           const std::function<void(std::vector<Lock>&)>& between = {}) {
  Cycle cycle;
  LoopRun run(batching_config(cluster));
  int acquired = 0;
  int released = 0;
  auto release_all = [&] {
    for (std::size_t node = 0; node < cluster.size(); ++node) {
      cycle.batched_after_acquire.push_back(batched_on(run.client(), node));
    }
    if (between) between(cycle.locks);
    cycle.releases.resize(cycle.locks.size());
    if (cycle.locks.empty()) return run.done();
    for (std::size_t i = 0; i < cycle.locks.size(); ++i) {
      run.client().release(cycle.locks[i], [&, i](ReleaseResult r) {
        cycle.releases[i] = std::move(r);
        if (++released < static_cast<int>(cycle.locks.size())) return;
        for (std::size_t node = 0; node < cluster.size(); ++node) {
          cycle.batched_after_release.push_back(batched_on(run.client(), node));
        }
        run.done();
      });
    }
  };
  EXPECT_TRUE(run.run([&] {
    when_connected(run, [&] {
      for (int i = 0; i < kLocks; ++i) {
        run.client().acquire(Resource(resource_name(i)), AcquireOptions{}, [&](AcquireResult r) {
          EXPECT_TRUE(r.ok()) << r.error.message();
          if (r.lock) cycle.locks.push_back(*r.lock);
          if (++acquired == kLocks) release_all();
        });
      }
    });
  }));
  return cycle;
}

// The releases went out batched too: the count grew by one per release.
void expect_releases_batched(const Cycle& cycle, std::size_t nodes) {
  ASSERT_EQ(cycle.batched_after_release.size(), nodes);
  for (std::size_t node = 0; node < nodes; ++node) {
    EXPECT_GE(cycle.batched_after_release[node] - cycle.batched_after_acquire.at(node),
              static_cast<std::uint64_t>(kLocks))
        << node;
  }
}

// INFO commandstats: how many calls of `command` the node ran (0 if none).
long long calls_of(RedisServer& node, const std::string& command) {
  const auto info = node.probe().info("commandstats");
  if (!info) return -1;
  const std::string field = "cmdstat_" + command + ":calls=";
  const std::size_t at = info->find(field);
  return at == std::string::npos ? 0 : std::atoll(info->c_str() + at + field.size());
}

TEST(Batching, AcquiresAndReleasesOfOneTurnGoOutBatchedAndEachGetsItsAnswer) {
  RedisCluster cluster(3);
  bool held_everywhere = true;
  const Cycle cycle = acquire_then_release(cluster, [&](std::vector<Lock>& locks) {
    for (std::size_t node = 0; node < cluster.size(); ++node) {
      RedisProbe probe = cluster.node(node).probe();
      for (const Lock& lock : locks) {
        held_everywhere =
            held_everywhere && probe.get(key_of(lock.resource.str())) == lock.value.str();
      }
    }
  });
  ASSERT_EQ(cycle.locks.size(), static_cast<std::size_t>(kLocks));
  EXPECT_TRUE(held_everywhere);
  for (std::size_t node = 0; node < cluster.size(); ++node) {
    // Every acquire went out in a batch; the releases' count comes on top.
    EXPECT_GE(cycle.batched_after_acquire.at(node), static_cast<std::uint64_t>(kLocks)) << node;
  }
  for (const ReleaseResult& result : cycle.releases) {
    EXPECT_FALSE(result.error) << result.error.message();
    EXPECT_EQ(result.released, cluster.size());
  }
  expect_releases_batched(cycle, cluster.size());
  for (std::size_t node = 0; node < cluster.size(); ++node) {
    RedisProbe probe = cluster.node(node).probe();
    for (const Lock& lock : cycle.locks) EXPECT_FALSE(probe.exists(key_of(lock.resource.str())));
  }
}

TEST(Batching, AnErrorInOneRequestIsThatRequestsAlone) {
  RedisCluster cluster(3);
  std::string broken;
  const Cycle cycle = acquire_then_release(cluster, [&](std::vector<Lock>& locks) {
    // The release script's GET fails with WRONGTYPE on a hash.
    broken = locks.at(7).resource.str();
    for (std::size_t node = 0; node < cluster.size(); ++node) {
      RedisProbe probe = cluster.node(node).probe();
      EXPECT_EQ(probe.command({"DEL", key_of(broken)}).kind, Reply::Kind::integer);
      EXPECT_EQ(probe.command({"HSET", key_of(broken), "field", "value"}).kind,
                Reply::Kind::integer);
    }
  });
  ASSERT_EQ(cycle.releases.size(), static_cast<std::size_t>(kLocks));
  expect_releases_batched(cycle, cluster.size());
  for (std::size_t i = 0; i < cycle.releases.size(); ++i) {
    const ReleaseResult& result = cycle.releases[i];
    if (cycle.locks[i].resource.str() == broken) {
      EXPECT_EQ(result.error, make_error_code(errc::node_error));
      EXPECT_EQ(result.released, 0U);
      ASSERT_EQ(result.nodes.size(), cluster.size());
      for (const NodeOutcome& node : result.nodes) {
        EXPECT_EQ(node.status, NodeStatus::error);
        EXPECT_NE(node.detail.find("WRONGTYPE"), std::string::npos) << node.detail;
      }
    } else {
      EXPECT_FALSE(result.error) << i << ": " << result.error.message();
      EXPECT_EQ(result.released, cluster.size()) << i;
    }
  }
}

TEST(Batching, ANodeThatLostItsScriptsAnswersABatchAfterAll) {
  RedisCluster cluster(3);
  const Cycle cycle = acquire_then_release(cluster, [&](std::vector<Lock>&) {
    for (std::size_t node = 0; node < cluster.size(); ++node) {
      RedisProbe probe = cluster.node(node).probe();
      EXPECT_EQ(probe.command({"SCRIPT", "FLUSH"}).kind, Reply::Kind::status);
      EXPECT_EQ(probe.command({"CONFIG", "RESETSTAT"}).kind, Reply::Kind::status);
    }
  });
  ASSERT_EQ(cycle.releases.size(), static_cast<std::size_t>(kLocks));
  for (const ReleaseResult& result : cycle.releases) {
    EXPECT_FALSE(result.error) << result.error.message();
    EXPECT_EQ(result.released, cluster.size());
  }
  expect_releases_batched(cycle, cluster.size());
  for (std::size_t node = 0; node < cluster.size(); ++node) {
    // The batch came back once, as one EVAL of the batched script's body
    // (which caches it again for later batches), not as one EVAL per
    // request.
    EXPECT_EQ(calls_of(cluster.node(node), "eval"), 1) << node;
  }
}

// A session loads the mutex's scripts when it is set up; another kind's
// script goes with its body (EVAL) the first time the session sends it,
// which caches it on the node: later requests go as EVALSHA, and none ever
// meets NOSCRIPT.
TEST(Batching, AnotherKindsScriptGoesWithItsBodyOnceASessionAndNeverMeetsNoscript) {
  RedisCluster cluster(3);
  initialise_nodes(config_for(cluster));
  for (std::size_t node = 0; node < cluster.size(); ++node) {
    RedisProbe probe = cluster.node(node).probe();
    EXPECT_EQ(probe.command({"SCRIPT", "FLUSH"}).kind, Reply::Kind::status);
    EXPECT_EQ(probe.command({"CONFIG", "RESETSTAT"}).kind, Reply::Kind::status);
  }
  BlockingClient client(batching_config(cluster));
  AcquireOptions shared;
  shared.shared = true;
  for (int round = 0; round < 3; ++round) {
    AcquireResult read = client.acquire(Resource("loaded-on-first-use"), shared);
    ASSERT_TRUE(read.ok()) << round << ": " << read.error.message();
    const ReleaseResult released = client.release(*read.lock);
    EXPECT_FALSE(released.error) << round << ": " << released.error.message();
  }
  for (std::size_t node = 0; node < cluster.size(); ++node) {
    // read_acquire and read_release, once each (the other two rounds'
    // requests found them cached), and the session's opening check of the
    // node's marker (check_marker, once a session).
    EXPECT_EQ(calls_of(cluster.node(node), "eval"), 3) << node;
    EXPECT_GE(calls_of(cluster.node(node), "evalsha"), 4) << node;
    const auto errors = cluster.node(node).probe().info("errorstats");
    ASSERT_TRUE(errors.has_value());
    EXPECT_EQ(errors->find("NOSCRIPT"), std::string::npos) << *errors;
  }
}

// Busy and granted answers alternate inside one batch: each acquire gets
// its own node's answer for its own resource.
TEST(Batching, EachRequestOfABatchGetsItsOwnAnswer) {
  RedisCluster cluster(3);
  LoopRun holder(batching_config(cluster));
  std::vector<Lock> held;
  int answered = 0;
  ASSERT_TRUE(holder.run([&] {
    for (int i = 0; i < kLocks; i += 2) {
      holder.client().acquire(Resource(resource_name(i)), AcquireOptions{}, [&](AcquireResult r) {
        EXPECT_TRUE(r.ok()) << r.error.message();
        if (r.lock) held.push_back(*r.lock);
        if (++answered == kLocks / 2) holder.done();
      });
    }
  }));
  ASSERT_EQ(held.size(), static_cast<std::size_t>(kLocks / 2));

  const OneTurn turn = acquire_in_one_turn(cluster, batching_config(cluster));
  for (std::size_t node = 0; node < cluster.size(); ++node) {
    EXPECT_GE(turn.batched.at(node), static_cast<std::uint64_t>(kLocks)) << node;
  }
  for (int i = 0; i < kLocks; ++i) {
    const AcquireResult& result = turn.results[static_cast<std::size_t>(i)];
    if (i % 2 == 0) {
      EXPECT_FALSE(result.ok()) << i;
      for (const NodeOutcome& node : result.nodes) {
        if (node.status == NodeStatus::pending) continue;  // decided before it answered
        EXPECT_EQ(node.status, NodeStatus::busy) << i;
        EXPECT_GT(node.holder_ttl_ms, 0) << i;
      }
    } else {
      EXPECT_TRUE(result.ok()) << i << ": " << result.error.message();
    }
  }
}

TEST(Batching, RunsOfDifferentScriptsKeepTheirOrder) {
  RedisCluster cluster(3);
  LoopRun run(batching_config(cluster));
  AcquireResult first_acquire;
  AcquireResult second_acquire;
  AcquireResult third_acquire;
  ExtendResult extended;
  int answered = 0;
  auto finish = [&] {
    if (++answered == 4) run.done();
  };
  ASSERT_TRUE(run.run([&] {
    when_connected(run, [&] {
      run.client().acquire(Resource("held"), AcquireOptions{}, [&](AcquireResult held) {
        EXPECT_TRUE(held.ok()) << held.error.message();
        if (!held.ok()) return run.done();
        // In one turn: acquire, acquire, extend, acquire — a batch of two, an
        // extend (a batch of its own script), then a lone acquire, whose
        // replies must reach the right operations.
        run.client().acquire(Resource("a"), AcquireOptions{}, [&](AcquireResult r) {
          first_acquire = std::move(r);
          finish();
        });
        run.client().acquire(Resource("b"), AcquireOptions{}, [&](AcquireResult r) {
          second_acquire = std::move(r);
          finish();
        });
        run.client().extend(*held.lock, ExtendOptions{}, [&](ExtendResult r) {
          extended = std::move(r);
          finish();
        });
        run.client().acquire(Resource("c"), AcquireOptions{}, [&](AcquireResult r) {
          third_acquire = std::move(r);
          finish();
        });
      });
    });
  }));
  EXPECT_TRUE(first_acquire.ok()) << first_acquire.error.message();
  EXPECT_TRUE(second_acquire.ok()) << second_acquire.error.message();
  EXPECT_TRUE(third_acquire.ok()) << third_acquire.error.message();
  EXPECT_TRUE(extended.ok()) << extended.error.message();
  EXPECT_GE(batched_on(run.client(), 0), 2U);
}

// Two releases of one lock in one turn: the batched release deletes the key
// once, and the second finds it gone, as it would one request later.
TEST(Batching, ALockReleasedTwiceInOneBatchIsReleasedOnce) {
  RedisCluster cluster(3);
  LoopRun run(batching_config(cluster));
  ReleaseResult first;
  ReleaseResult second;
  int answered = 0;
  ASSERT_TRUE(run.run([&] {
    when_connected(run, [&] {
      run.client().acquire(Resource("twice"), AcquireOptions{}, [&](AcquireResult held) {
        EXPECT_TRUE(held.ok()) << held.error.message();
        if (!held.ok()) return run.done();
        const Lock lock = *held.lock;
        for (ReleaseResult* slot : {&first, &second}) {
          run.client().release(lock, [&, slot](ReleaseResult r) {
            *slot = std::move(r);
            if (++answered == 2) run.done();
          });
        }
      });
    });
  }));
  EXPECT_GE(batched_on(run.client(), 0), 2U);
  EXPECT_FALSE(first.error) << first.error.message();
  EXPECT_EQ(first.released, cluster.size());
  EXPECT_EQ(second.released, 0U);
  for (const NodeOutcome& node : second.nodes) EXPECT_EQ(node.status, NodeStatus::not_held);
  for (std::size_t node = 0; node < cluster.size(); ++node) {
    EXPECT_FALSE(cluster.node(node).probe().exists(key_of("twice"))) << node;
  }
}

// The batched acquire checks a node's marker and recovering key once for
// the whole batch: a node within its post-recovery delay answers
// "recovering" to every request of the batch, with the delay left, and
// stores none of them. Node 2 already holds every key for someone else, so
// no acquire is decided before node 1 has answered.
TEST(Batching, ARecoveringNodeAnswersEveryRequestOfABatch) {
  RedisCluster cluster(3);
  QuorumConfig quorum = batching_config(cluster);
  quorum.lock.amnesia_defence = true;
  initialise_nodes(quorum);
  EXPECT_EQ(cluster.node(1).probe().command({"SET", "redlock:recovering", "x", "PX", "60000"}).kind,
            Reply::Kind::status);
  hold_elsewhere(cluster, 2);
  const OneTurn turn = acquire_in_one_turn(cluster, quorum);
  EXPECT_GE(turn.batched.at(1), static_cast<std::uint64_t>(kLocks));
  for (int i = 0; i < kLocks; ++i) {
    const AcquireResult& result = turn.results[static_cast<std::size_t>(i)];
    EXPECT_FALSE(result.ok()) << i;
    EXPECT_FALSE(cluster.node(1).probe().exists(key_of(resource_name(i)))) << i;
    ASSERT_EQ(result.nodes.size(), cluster.size()) << i;
    const NodeOutcome& recovering = result.nodes[1];
    EXPECT_EQ(recovering.status, NodeStatus::recovering) << i << ": " << recovering.detail;
    EXPECT_GT(recovering.holder_ttl_ms, 0) << i;
    EXPECT_LE(recovering.holder_ttl_ms, 60000) << i;
    EXPECT_EQ(result.nodes[2].status, NodeStatus::busy) << i;
  }
}

// Fenced acquires of one turn, batched: each gets the node's counter for its
// own resource.
TEST(Batching, FencedAcquiresOfABatchEachGetTheirOwnToken) {
  RedisCluster cluster(3);
  initialise_nodes(batching_config(cluster));
  for (std::size_t node = 0; node < cluster.size(); ++node) {
    for (int i = 0; i < kLocks; ++i) {
      EXPECT_EQ(cluster.node(node)
                    .probe()
                    .command({"HSET", "redlock:fence", resource_name(i), std::to_string(100 * i)})
                    .kind,
                Reply::Kind::integer);
    }
  }
  const OneTurn turn = acquire_in_one_turn(cluster, batching_config(cluster), [](int) {
    AcquireOptions fenced;
    fenced.fenced = true;
    return fenced;
  });
  EXPECT_GE(turn.batched.at(0), static_cast<std::uint64_t>(kLocks));
  for (int i = 0; i < kLocks; ++i) {
    const AcquireResult& result = turn.results[static_cast<std::size_t>(i)];
    for (const NodeOutcome& node : result.nodes) {
      EXPECT_NE(node.status, NodeStatus::error) << i << ": " << node.detail;
    }
    ASSERT_TRUE(result.ok()) << i << ": " << result.error.message();
    ASSERT_TRUE(result.lock->fence.has_value()) << i;
    // Every granting node read its counter for this very resource, and the
    // token is the next one after it.
    for (const NodeOutcome& node : result.nodes) {
      if (node.status != NodeStatus::granted) continue;
      EXPECT_EQ(node.fence_counter, 100 * i) << i << " on node " << node.node;
    }
    EXPECT_EQ(*result.lock->fence, static_cast<std::uint64_t>(100 * i + 1)) << i;
  }
}

// A node that refuses the wake-up PUBLISH (an ACL user without channel
// rights) fails only the releases of the batch that published, each with the
// node's error, and the locks are deleted all the same — as the single
// script, which deletes before it publishes.
TEST(Batching, ARefusedPublishIsThatReleasesErrorAndTheLockIsStillDeleted) {
  RedisCluster cluster(3);
  QuorumConfig quorum = batching_config(cluster);
  for (std::size_t node = 0; node < cluster.size(); ++node) {
    EXPECT_EQ(cluster.node(node)
                  .probe()
                  .command({"ACL", "SETUSER", "nopub", "on", ">pw", "~*", "resetchannels", "+@all"})
                  .kind,
              Reply::Kind::status);
    quorum.nodes[node].username = "nopub";
    quorum.nodes[node].password = "pw";
    // Someone listens on every resource's channel (its listening mark):
    // without one, a release publishes nothing, refused or not.
    for (int i = 0; i < kLocks; ++i) {
      EXPECT_EQ(cluster.node(node)
                    .probe()
                    .command({"SET", "redlock:released:" + resource_name(i), "1"})
                    .kind,
                Reply::Kind::status);
    }
  }
  Cycle cycle;
  {
    LoopRun run(quorum);
    int acquired = 0;
    int released = 0;
    ASSERT_TRUE(run.run([&] {
      when_connected(run, [&] {
        for (int i = 0; i < kLocks; ++i) {
          run.client().acquire(Resource(resource_name(i)), AcquireOptions{}, [&](AcquireResult r) {
            EXPECT_TRUE(r.ok()) << r.error.message();
            if (r.lock) cycle.locks.push_back(*r.lock);
            if (++acquired < kLocks) return;
            if (cycle.locks.empty()) return run.done();
            cycle.releases.resize(cycle.locks.size());
            for (std::size_t k = 0; k < cycle.locks.size(); ++k) {
              run.client().release(cycle.locks[k], [&, k](ReleaseResult result) {
                cycle.releases[k] = std::move(result);
                if (++released == static_cast<int>(cycle.locks.size())) run.done();
              });
            }
          });
        }
      });
    }));
    EXPECT_GE(batched_on(run.client(), 0), static_cast<std::uint64_t>(2 * kLocks));
  }
  ASSERT_EQ(cycle.locks.size(), static_cast<std::size_t>(kLocks));
  for (std::size_t k = 0; k < cycle.releases.size(); ++k) {
    const ReleaseResult& result = cycle.releases[k];
    EXPECT_EQ(result.error, make_error_code(errc::node_error)) << k;
    for (const NodeOutcome& node : result.nodes) {
      EXPECT_EQ(node.status, NodeStatus::error) << k;
      EXPECT_NE(node.detail.find("publish"), std::string::npos) << k << ": " << node.detail;
    }
    for (std::size_t node = 0; node < cluster.size(); ++node) {
      EXPECT_FALSE(cluster.node(node).probe().exists(key_of(cycle.locks[k].resource.str())))
          << k << " on node " << node;
    }
  }
}

// A fence hash of the wrong type fails each fenced acquire of the batch on
// that node with the node's error, and only those: the unfenced acquires of
// the same batch, which do not read the counter, are granted there. Node 1
// already holds every key for someone else, so node 2's answer decides
// every acquire and is always heard.
TEST(Batching, AWrongTypeFenceHashFailsOnlyTheFencedAcquires) {
  RedisCluster cluster(3);
  initialise_nodes(batching_config(cluster));
  RedisProbe broken = cluster.node(2).probe();
  EXPECT_EQ(broken.command({"DEL", "redlock:fence"}).kind, Reply::Kind::integer);
  EXPECT_EQ(broken.command({"SET", "redlock:fence", "not-a-hash"}).kind, Reply::Kind::status);
  hold_elsewhere(cluster, 1);
  const OneTurn turn = acquire_in_one_turn(cluster, batching_config(cluster), [](int i) {
    AcquireOptions options;
    options.fenced = i % 2 == 0;
    return options;
  });
  EXPECT_GE(turn.batched.at(2), static_cast<std::uint64_t>(kLocks));
  for (int i = 0; i < kLocks; ++i) {
    const AcquireResult& result = turn.results[static_cast<std::size_t>(i)];
    ASSERT_EQ(result.nodes.size(), cluster.size()) << i;
    const NodeOutcome& node = result.nodes[2];
    if (i % 2 == 0) {
      EXPECT_FALSE(result.ok()) << i;
      EXPECT_EQ(node.status, NodeStatus::error) << i;
      EXPECT_NE(node.detail.find("WRONGTYPE"), std::string::npos) << i << ": " << node.detail;
    } else {
      EXPECT_TRUE(result.ok()) << i << ": " << result.error.message();
      EXPECT_EQ(node.status, NodeStatus::granted) << i << ": " << node.detail;
    }
  }
}

// Extends of one turn (a guard's renewals due together, here plain extends)
// go out batched, and each gets its own answer and its own TTL: a lock whose
// key is gone on a node is not held there, one whose key holds a hash gets
// the node's WRONGTYPE, the others are extended. Node 1 lost every lock, so
// each extend needs nodes 0 and 2, whose answers are always heard; node 0
// lost its scripts first, so its batch goes again as one EVAL.
TEST(Batching, ExtendsOfOneTurnGoOutBatchedAndEachGetsItsAnswer) {
  RedisCluster cluster(3);
  const std::string gone = resource_name(5);
  const std::string wrong = resource_name(9);
  std::vector<ExtendResult> extended;
  std::vector<Lock> locks;
  std::uint64_t batched_before = 0;
  LoopRun run(batching_config(cluster));
  int acquired = 0;
  int answered = 0;
  ASSERT_TRUE(run.run([&] {
    when_connected(run, [&] {
      for (int i = 0; i < kLocks; ++i) {
        run.client().acquire(Resource(resource_name(i)), AcquireOptions{}, [&](AcquireResult r) {
          EXPECT_TRUE(r.ok()) << r.error.message();
          if (r.lock) locks.push_back(*r.lock);
          if (++acquired < kLocks) return;
          if (locks.size() != static_cast<std::size_t>(kLocks)) return run.done();
          for (const Lock& lock : locks) {
            EXPECT_EQ(cluster.node(1).probe().command({"DEL", key_of(lock.resource.str())}).kind,
                      Reply::Kind::integer);
          }
          RedisProbe node2 = cluster.node(2).probe();
          EXPECT_EQ(node2.command({"DEL", key_of(gone)}).kind, Reply::Kind::integer);
          EXPECT_EQ(node2.command({"DEL", key_of(wrong)}).kind, Reply::Kind::integer);
          EXPECT_EQ(node2.command({"HSET", key_of(wrong), "field", "value"}).kind,
                    Reply::Kind::integer);
          // Node 0 lost its scripts: the batch goes again as one EVAL.
          EXPECT_EQ(cluster.node(0).probe().command({"SCRIPT", "FLUSH"}).kind, Reply::Kind::status);
          EXPECT_EQ(cluster.node(0).probe().command({"CONFIG", "RESETSTAT"}).kind,
                    Reply::Kind::status);
          batched_before = batched_on(run.client(), 0);
          extended.resize(locks.size());
          for (std::size_t k = 0; k < locks.size(); ++k) {
            // A TTL of its own for each: every request must set its own.
            ExtendOptions options;
            options.ttl = std::chrono::milliseconds(3000 + 300 * static_cast<int>(k));
            run.client().extend(locks[k], options, [&, k](ExtendResult answer) {
              extended[k] = std::move(answer);
              if (++answered == kLocks) run.done();
            });
          }
        });
      }
    });
  }));
  ASSERT_EQ(extended.size(), static_cast<std::size_t>(kLocks));
  EXPECT_GE(batched_on(run.client(), 0) - batched_before, static_cast<std::uint64_t>(kLocks));
  EXPECT_EQ(calls_of(cluster.node(0), "eval"), 1);
  for (std::size_t k = 0; k < locks.size(); ++k) {
    const ExtendResult& result = extended[k];
    const std::string& resource = locks[k].resource.str();
    ASSERT_EQ(result.nodes.size(), cluster.size()) << resource;
    if (resource == gone) {
      EXPECT_FALSE(result.ok()) << resource;
      EXPECT_EQ(result.nodes[2].status, NodeStatus::not_held) << resource;
    } else if (resource == wrong) {
      EXPECT_FALSE(result.ok()) << resource;
      EXPECT_EQ(result.nodes[2].status, NodeStatus::error) << resource;
      EXPECT_NE(result.nodes[2].detail.find("WRONGTYPE"), std::string::npos)
          << result.nodes[2].detail;
    } else {
      EXPECT_TRUE(result.ok()) << resource << ": " << result.error.message();
      EXPECT_EQ(result.nodes[0].status, NodeStatus::extended) << resource;
      // Node 1 lost the key; the round is decided by nodes 0 and 2 and may
      // end before node 1's answer arrives.
      EXPECT_TRUE(result.nodes[1].status == NodeStatus::not_held ||
                  result.nodes[1].status == NodeStatus::pending)
          << resource;
      EXPECT_EQ(result.nodes[2].status, NodeStatus::extended) << resource;
      // Node 0 extended it (in the one EVAL after NOSCRIPT): the key's TTL
      // is this request's own.
      const Reply left = cluster.node(0).probe().command({"PTTL", key_of(resource)});
      ASSERT_EQ(left.kind, Reply::Kind::integer) << resource;
      const long long asked = 3000 + 300 * static_cast<long long>(k);
      EXPECT_LE(left.integer, asked) << resource;
      EXPECT_GT(left.integer, asked - 300) << resource;
    }
  }
}

}  // namespace
}  // namespace redlock::test

namespace redlock::test {
namespace {

// Acquires and releases until node `node` answered an acquire's grant in
// time to be counted (bounded in time, not in tries: on a loaded machine
// the session with the node may take a while to open, and failed tries are
// quick): the client's session with it has then seen its marker, and sends
// it the transaction.
bool session_sees_marker(BlockingClient& client, std::size_t node) {
  AcquireOptions once;
  once.wait = std::chrono::milliseconds(0);
  const auto give_up = SteadyClock::now() + std::chrono::seconds(10);
  while (SteadyClock::now() < give_up) {
    const AcquireResult warm = client.acquire(Resource("warm"), once);
    if (!warm.ok()) continue;
    const bool answered = warm.nodes.at(node).status == NodeStatus::granted;
    (void)client.release(*warm.lock);
    if (answered) return true;
  }
  return false;
}

TEST(Batching, AFirstAttemptGoesAsOneTransactionAndAKeyTheNodeRulesRefuseIsReleasedAgain) {
  RedisCluster cluster(3);
  const QuorumConfig quorum = batching_config(cluster);
  initialise_nodes(quorum);
  BlockingClient client(quorum);
  AcquireOptions once;
  once.wait = std::chrono::milliseconds(0);
  ASSERT_TRUE(session_sees_marker(client, 0));

  // Node 0 loses its marker under the live session: the transaction still
  // asks for it in the same instant as its SET, which takes the key there.
  RedisProbe zero = cluster.node(0).probe();
  ASSERT_EQ(zero.command({"DEL", "redlock:node"}).integer, 1);
  ASSERT_EQ(zero.command({"CONFIG", "RESETSTAT"}).kind, Reply::Kind::status);
  const AcquireResult taken = client.acquire(Resource("txn"), once);
  ASSERT_TRUE(taken.ok()) << taken.error.message();
  EXPECT_EQ(calls_of(cluster.node(0), "exec"), 1) << "the first attempt is one transaction";
  // Node 0's answer was no vote, and the key its SET took is released
  // again: no value of this lock stays on the node that refused it.
  EXPECT_TRUE(eventually([&] { return zero.get(key_of("txn")) != taken.lock->value.str(); }));
  for (std::size_t node = 1; node < cluster.size(); ++node) {
    EXPECT_EQ(cluster.node(node).probe().get(key_of("txn")), taken.lock->value.str()) << node;
  }
  (void)client.release(*taken.lock);
}

// A node whose ACL refuses MULTI: the first attempt's transaction fails
// as a whole there (its SETs ran outside any transaction, and are released
// again), and the session's acquires go as the script from then on.
TEST(Batching, ANodeThatRefusesTransactionsGetsTheScriptAndKeepsNoKeyOfTheRefusedOne) {
  RedisCluster cluster(3);
  QuorumConfig quorum = batching_config(cluster);
  initialise_nodes(quorum);
  ASSERT_TRUE(
      cluster.node(0)
          .probe()
          .command({"ACL", "SETUSER", "nomulti", "on", ">pw", "~*", "&*", "+@all", "-multi"})
          .is_ok());
  quorum.nodes[0].username = "nomulti";
  quorum.nodes[0].password = "pw";
  BlockingClient client(quorum);
  AcquireOptions once;
  once.wait = std::chrono::milliseconds(0);
  // The session sees node 0's marker (the script's grant), then tries the
  // transaction.
  ASSERT_TRUE(session_sees_marker(client, 0));
  const AcquireResult refused = client.acquire(Resource("nomulti"), once);
  ASSERT_TRUE(refused.ok()) << refused.error.message();
  ASSERT_EQ(refused.nodes.size(), cluster.size());
  if (refused.nodes[0].status != NodeStatus::pending) {  // (it may answer after the majority)
    EXPECT_EQ(refused.nodes[0].status, NodeStatus::error);
    EXPECT_NE(refused.nodes[0].detail.find("multi"), std::string::npos) << refused.nodes[0].detail;
  }
  RedisProbe zero = cluster.node(0).probe();
  EXPECT_TRUE(eventually([&] { return !zero.exists(key_of("nomulti")); }))
      << "the SET that ran outside the refused transaction was released again";
  (void)client.release(*refused.lock);
  const AcquireResult scripted = client.acquire(Resource("after"), once);
  ASSERT_TRUE(scripted.ok()) << scripted.error.message();
  EXPECT_TRUE(eventually([&] { return zero.get(key_of("after")) == scripted.lock->value.str(); }))
      << "node 0 granted the script";
  (void)client.release(*scripted.lock);
}

}  // namespace
}  // namespace redlock::test
