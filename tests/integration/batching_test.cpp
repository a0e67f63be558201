// Requests of one loop turn to one node go out as one batched script call
// (NodeConnection, scripts.cpp's batch wrapper). Against real nodes: every
// request still gets its own answer, in order, an error in one request
// stays that request's, and a node that lost its scripts is recovered.
#include <gtest/gtest.h>

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
  LoopRun run(config_for(cluster));
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
    for (int i = 0; i < kLocks; ++i) {
      run.client().acquire(Resource(resource_name(i)), AcquireOptions{}, [&](AcquireResult r) {
        EXPECT_TRUE(r.ok()) << r.error.message();
        if (r.lock) cycle.locks.push_back(*r.lock);
        if (++acquired == kLocks) release_all();
      });
    }
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

// Busy and granted answers alternate inside one batch: each acquire gets
// its own node's answer for its own resource.
TEST(Batching, EachRequestOfABatchGetsItsOwnAnswer) {
  RedisCluster cluster(3);
  LoopRun holder(config_for(cluster));
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

  LoopRun run(config_for(cluster));
  std::vector<AcquireResult> results(kLocks);
  answered = 0;
  ASSERT_TRUE(run.run([&] {
    for (int i = 0; i < kLocks; ++i) {
      run.client().acquire(Resource(resource_name(i)), AcquireOptions{}, [&, i](AcquireResult r) {
        results[static_cast<std::size_t>(i)] = std::move(r);
        if (++answered == kLocks) run.done();
      });
    }
  }));
  for (std::size_t node = 0; node < cluster.size(); ++node) {
    EXPECT_GE(batched_on(run.client(), node), static_cast<std::uint64_t>(kLocks)) << node;
  }
  for (int i = 0; i < kLocks; ++i) {
    const AcquireResult& result = results[static_cast<std::size_t>(i)];
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
  LoopRun run(config_for(cluster));
  AcquireResult first_acquire;
  AcquireResult second_acquire;
  AcquireResult third_acquire;
  ExtendResult extended;
  int answered = 0;
  auto finish = [&] {
    if (++answered == 4) run.done();
  };
  ASSERT_TRUE(run.run([&] {
    run.client().acquire(Resource("held"), AcquireOptions{}, [&](AcquireResult held) {
      EXPECT_TRUE(held.ok()) << held.error.message();
      if (!held.ok()) return run.done();
      // In one turn: acquire, acquire, extend, acquire — a batch of two, a
      // prepared extend (never batched), then a lone acquire, whose replies
      // must reach the right operations.
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
  }));
  EXPECT_TRUE(first_acquire.ok()) << first_acquire.error.message();
  EXPECT_TRUE(second_acquire.ok()) << second_acquire.error.message();
  EXPECT_TRUE(third_acquire.ok()) << third_acquire.error.message();
  EXPECT_TRUE(extended.ok()) << extended.error.message();
  EXPECT_GE(batched_on(run.client(), 0), 2U);
}

}  // namespace
}  // namespace redlock::test
