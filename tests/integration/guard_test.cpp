// The self-renewing guard: renewal by quorum, the loss signal (callback and
// stop_token), caps, release on destruction, and the unique_lock adapter.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;
using Stopwatch = SteadyClock;

// Records the loss signal from the loop thread for the test thread.
struct LossRecorder {
  std::mutex mutex;
  std::condition_variable changed;
  int calls = 0;
  std::error_code why;
  Stopwatch::time_point when{};

  std::function<void(std::error_code)> callback() {
    return [this](std::error_code error) {
      std::lock_guard<std::mutex> guard(mutex);
      ++calls;
      why = error;
      when = Stopwatch::now();
      changed.notify_all();
    };
  }
  // Waits (bounded) for the signal.
  bool wait(milliseconds limit) {
    std::unique_lock<std::mutex> lock(mutex);
    return changed.wait_for(lock, limit, [this] { return calls > 0; });
  }
};

class GuardTest : public ::testing::Test {
 protected:
  RedisCluster cluster{5};
};

TEST_F(GuardTest, RenewsWhileHeldAndKeepsTheKeyAlive) {
  BlockingClient client(config_for(cluster, milliseconds(300)));
  LossRecorder loss;
  GuardOptions options;
  options.on_lost = loss.callback();
  Guard guard = client.lock(Resource("renewing"), options);
  ASSERT_TRUE(guard.owns_lock()) << guard.error().message();
  const TimePoint first_deadline = guard.valid_until();

  // Five renewals take ~500 ms: well past the 300 ms TTL.
  ASSERT_TRUE(eventually([&] { return guard.renewals() >= 5; }));
  EXPECT_TRUE(guard.valid());
  EXPECT_GT(guard.valid_until(), first_deadline);
  EXPECT_FALSE(guard.stop_token().stop_requested());
  EXPECT_EQ(cluster.node(0).probe().get(key_of("renewing")), guard.lock().value.str());
  EXPECT_EQ(loss.calls, 0);
}

TEST_F(GuardTest, LossFiresAtTheDeadlineWhileARenewalHangs) {
  QuorumConfig config = config_for(cluster, milliseconds(400));
  config.lock.node_timeout = milliseconds(5000);  // a renewal will hang this long
  BlockingClient client(config);
  LossRecorder loss;
  GuardOptions options;
  options.on_lost = loss.callback();
  Guard guard = client.lock(Resource("hanging"), options);
  ASSERT_TRUE(guard.owns_lock());
  for (std::size_t i : {0u, 1u, 2u}) cluster.node(i).pause();

  const TimePoint deadline = guard.valid_until();
  ASSERT_TRUE(loss.wait(milliseconds(3000))) << "the loss must not wait for the hanging renewal";
  EXPECT_EQ(loss.calls, 1);
  EXPECT_GE(loss.when, deadline);
  EXPECT_LT(loss.when, deadline + milliseconds(1000));
  EXPECT_EQ(loss.why, errc::lost);
  EXPECT_TRUE(guard.stop_token().stop_requested());
  EXPECT_FALSE(guard.valid());
  // The renewal still open at the deadline: the paused nodes never answered.
  const std::vector<NodeOutcome> answers = guard.loss_nodes();
  ASSERT_EQ(answers.size(), config.nodes.size());
  for (std::size_t i : {0u, 1u, 2u}) {
    EXPECT_EQ(answers[i].node, i);
    EXPECT_EQ(answers[i].name, config.nodes[i].name);
    EXPECT_EQ(answers[i].status, NodeStatus::pending) << to_string(answers[i].status);
  }
  for (std::size_t i : {0u, 1u, 2u}) cluster.node(i).resume();
}

TEST_F(GuardTest, RefusalByAMajorityIsALossAtOnce) {
  GuardOptions options;
  options.renew_interval = milliseconds(50);
  LossRecorder loss;
  options.on_lost = loss.callback();
  const QuorumConfig config = config_for(cluster, milliseconds(10000));
  BlockingClient client(config);
  Guard guard = client.lock(Resource("taken-over"), options);
  EXPECT_TRUE(guard.loss_nodes().empty()) << "nothing while held";
  ASSERT_TRUE(guard.owns_lock());
  // The keys vanish on a majority (e.g. expired there, or flushed).
  for (std::size_t i : {0u, 1u, 2u}) {
    ASSERT_EQ(cluster.node(i).probe().command({"DEL", key_of("taken-over")}).integer, 1);
  }
  ASSERT_TRUE(loss.wait(milliseconds(5000)));
  EXPECT_EQ(loss.why, errc::lost);
  EXPECT_LT(loss.when, guard.valid_until()) << "not held until the old deadline";
  EXPECT_EQ(guard.error(), errc::lost);
  // Which nodes refused, by index and name, as a failed acquire reports.
  const std::vector<NodeOutcome> answers = guard.loss_nodes();
  ASSERT_EQ(answers.size(), config.nodes.size());
  for (std::size_t i : {0u, 1u, 2u}) {
    EXPECT_EQ(answers[i].node, i);
    EXPECT_EQ(answers[i].name, config.nodes[i].name);
    EXPECT_EQ(answers[i].status, NodeStatus::not_held) << to_string(answers[i].status);
  }
}

TEST_F(GuardTest, AGuardWithoutALossCallbackKeepsNoRenewalAnswers) {
  GuardOptions options;
  options.renew_interval = milliseconds(50);
  BlockingClient client(config_for(cluster, milliseconds(10000)));
  Guard guard = client.lock(Resource("quiet"), options);
  ASSERT_TRUE(guard.owns_lock());
  for (std::size_t i : {0u, 1u, 2u}) {
    ASSERT_EQ(cluster.node(i).probe().command({"DEL", key_of("quiet")}).integer, 1);
  }
  ASSERT_TRUE(eventually([&] { return guard.stop_token().stop_requested(); }));
  EXPECT_EQ(guard.error(), errc::lost);
  EXPECT_TRUE(guard.loss_nodes().empty());
}

TEST_F(GuardTest, RenewalCapEndsTheHoldAtTheDeadline) {
  GuardOptions options;
  options.renew_interval = milliseconds(50);
  options.max_renewals = 2;
  LossRecorder loss;
  options.on_lost = loss.callback();
  BlockingClient client(config_for(cluster, milliseconds(300)));
  Guard guard = client.lock(Resource("capped"), options);
  ASSERT_TRUE(guard.owns_lock());
  ASSERT_TRUE(loss.wait(milliseconds(5000)));
  EXPECT_EQ(loss.why, errc::hold_limit);
  EXPECT_EQ(guard.renewals(), 2);
  EXPECT_TRUE(guard.loss_nodes().empty()) << "no renewal failed";
}

TEST_F(GuardTest, DestructorReleasesOnEveryNode) {
  BlockingClient client(config_for(cluster));
  {
    Guard guard = client.lock(Resource("scoped"));
    ASSERT_TRUE(guard.owns_lock());
    EXPECT_EQ(nodes_holding(cluster, "scoped"), 5u);
  }
  EXPECT_EQ(nodes_holding(cluster, "scoped"), 0u);
}

TEST_F(GuardTest, MovingTransfersAndMoveAssignmentReleasesTheOld) {
  BlockingClient client(config_for(cluster));
  Guard first = client.lock(Resource("first"));
  ASSERT_TRUE(first.owns_lock());
  Guard moved = std::move(first);
  EXPECT_FALSE(first.owns_lock());  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_TRUE(moved.valid());

  moved = client.lock(Resource("second"));
  EXPECT_EQ(nodes_holding(cluster, "first"), 0u);
  EXPECT_EQ(nodes_holding(cluster, "second"), 5u);
}

TEST_F(GuardTest, FailedAcquireGivesAnEmptyGuardThatSaysWhy) {
  BlockingClient client(config_for(cluster));
  Guard held = client.lock(Resource("one-holder"));
  ASSERT_TRUE(held.owns_lock());
  Guard second = client.lock(Resource("one-holder"));
  EXPECT_FALSE(second.owns_lock());
  EXPECT_EQ(second.error(), errc::not_acquired);
  EXPECT_FALSE(second.valid());
}

TEST_F(GuardTest, ClosingTheClientSignalsTheLossAndTheGuardOutlivesIt) {
  LossRecorder loss;
  GuardOptions options;
  options.on_lost = loss.callback();
  Guard guard;
  {
    BlockingClient client(config_for(cluster));
    guard = client.lock(Resource("orphan"), options);
    ASSERT_TRUE(guard.owns_lock());
  }
  EXPECT_EQ(loss.calls, 1);
  EXPECT_EQ(loss.why, errc::shutting_down);
  EXPECT_TRUE(guard.stop_token().stop_requested());
  EXPECT_EQ(guard.release().error, errc::shutting_down);
}

TEST_F(GuardTest, FencedGuardCarriesTheToken) {
  BlockingClient client(config_for(cluster));
  GuardOptions options;
  options.acquire.fenced = true;
  Guard guard = client.lock(Resource("fenced-guard"), options);
  ASSERT_TRUE(guard.owns_lock());
  ASSERT_TRUE(guard.fence().has_value());
  EXPECT_GE(*guard.fence(), 1u);
}

TEST_F(GuardTest, UniqueLockAdapter) {
  BlockingClient client(config_for(cluster));
  LockableResource report(client, Resource("report"));
  {
    std::unique_lock<LockableResource> held(report);
    EXPECT_TRUE(held.owns_lock());
    EXPECT_TRUE(report.guard().valid());
    EXPECT_EQ(nodes_holding(cluster, "report"), 5u);

    LockableResource other(client, Resource("report"));
    EXPECT_FALSE(other.try_lock());
  }
  EXPECT_EQ(nodes_holding(cluster, "report"), 0u);
}

TEST_F(GuardTest, TryLockForWaitsForTheHolderToLetGo) {
  BlockingClient client(config_for(cluster));
  LockableResource first(client, Resource("handoff"));
  first.lock();
  std::thread holder([&] {
    std::this_thread::sleep_for(milliseconds(150));  // hold for a while, then let go
    first.unlock();
  });
  GuardOptions quick;
  quick.acquire.retry_delay = milliseconds(10);
  LockableResource second(client, Resource("handoff"), quick);
  const bool acquired = second.try_lock_for(std::chrono::seconds(10));
  holder.join();
  EXPECT_TRUE(acquired);
  if (acquired) second.unlock();
}

}  // namespace
}  // namespace redlock::test

namespace redlock::test {
namespace {

TEST(Cancellation, StopTokenEndsAWaitForAHeldLock) {
  RedisCluster cluster{3};
  BlockingClient client(config_for(cluster));
  Guard held = client.lock(Resource("waited-on"));
  ASSERT_TRUE(held.owns_lock());

  std::stop_source stop;
  GuardOptions patient;
  patient.acquire.wait = std::chrono::milliseconds(30000);
  patient.acquire.retry_delay = std::chrono::milliseconds(20);
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let the wait begin
    stop.request_stop();
  });
  const auto start = std::chrono::steady_clock::now();
  Guard waiting = client.lock(Resource("waited-on"), patient, stop.get_token());
  const auto took = std::chrono::steady_clock::now() - start;
  canceller.join();
  EXPECT_FALSE(waiting.owns_lock());
  EXPECT_EQ(waiting.error(), errc::cancelled);
  EXPECT_LT(took, std::chrono::seconds(5)) << "not the 30 s wait";
  // The holder's lock is untouched.
  EXPECT_TRUE(held.valid());
  EXPECT_EQ(cluster.node(0).probe().get(key_of("waited-on")), held.lock().value.str());
}

TEST(Cancellation, AlreadyRequestedStopCancelsAcquire) {
  RedisCluster cluster{3};
  BlockingClient client(config_for(cluster));
  Guard held = client.lock(Resource("busy"));
  ASSERT_TRUE(held.owns_lock());
  std::stop_source stop;
  stop.request_stop();
  AcquireOptions patient;
  patient.wait = std::chrono::milliseconds(30000);
  AcquireResult result = client.acquire(Resource("busy"), patient, stop.get_token());
  EXPECT_EQ(result.error, errc::cancelled);
}

}  // namespace
}  // namespace redlock::test
