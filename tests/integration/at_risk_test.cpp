// The warning before a loss (GuardOptions::at_risk_share): an episode
// begins when renewals have not succeeded in time and less than the share
// of the TTL is left, runs the callback once and requests the episode's
// token, and ends when a renewal succeeds or the lock is lost. Renewals are
// made late by pausing a majority of the nodes (SIGSTOP).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

// What the loop thread reported, for the test thread.
struct Signals {
  std::mutex mutex;
  std::vector<SteadyClock::time_point> at_risk;
  std::vector<SteadyClock::time_point> safe_again;
  std::vector<SteadyClock::time_point> lost;
  std::size_t risks() {
    std::lock_guard<std::mutex> guard(mutex);
    return at_risk.size();
  }
  std::size_t ends() {
    std::lock_guard<std::mutex> guard(mutex);
    return safe_again.size();
  }
  std::size_t losses() {
    std::lock_guard<std::mutex> guard(mutex);
    return lost.size();
  }
};

class AtRiskTest : public ::testing::Test {
 protected:
  RedisCluster cluster{5};
  std::shared_ptr<Metrics> metrics = std::make_shared<Metrics>();
  Signals signals;

  GuardOptions watched(double share) {
    GuardOptions options;
    options.at_risk_share = share;
    options.on_at_risk = [this](bool at_risk) {
      std::lock_guard<std::mutex> guard(signals.mutex);
      (at_risk ? signals.at_risk : signals.safe_again).push_back(SteadyClock::now());
    };
    options.on_lost = [this](std::error_code) {
      std::lock_guard<std::mutex> guard(signals.mutex);
      signals.lost.push_back(SteadyClock::now());
    };
    return options;
  }
  void pause_majority() {
    for (std::size_t i : {0U, 1U, 2U}) cluster.node(i).pause();
  }
  void resume_majority() {
    for (std::size_t i : {0U, 1U, 2U}) cluster.node(i).resume();
  }
};

// Renewals hang on a paused majority: the signal comes once, before the
// loss, with the share of the TTL still left; the token is requested then.
TEST_F(AtRiskTest, FiresOnceBeforeTheLossWhileRenewalsHang) {
  QuorumConfig config = config_for(cluster, milliseconds(1000));
  config.lock.node_timeout = milliseconds(5000);  // a renewal hangs this long
  BlockingClient client(config, metrics);
  Guard guard = client.lock(Resource("job"), watched(0.5));
  ASSERT_TRUE(guard.owns_lock()) << guard.error().message();
  const std::stop_token risk = guard.at_risk_token();
  EXPECT_FALSE(risk.stop_requested());
  EXPECT_FALSE(guard.at_risk());
  pause_majority();
  ASSERT_TRUE(eventually([&] { return signals.risks() > 0; }, milliseconds(5000)));
  const TimePoint deadline = guard.valid_until();
  EXPECT_TRUE(risk.stop_requested());
  EXPECT_TRUE(guard.at_risk() || guard.error());
  ASSERT_TRUE(eventually([&] { return signals.losses() > 0; }, milliseconds(5000)));
  resume_majority();
  std::lock_guard<std::mutex> hold(signals.mutex);
  ASSERT_EQ(signals.at_risk.size(), 1U) << "one episode, one signal";
  EXPECT_TRUE(signals.safe_again.empty()) << "the loss ends it, not a renewal";
  EXPECT_LT(signals.at_risk[0], signals.lost[0]);
  // Before the deadline (it begins with half the TTL left).
  EXPECT_LT(signals.at_risk[0], deadline);
  EXPECT_FALSE(guard.at_risk()) << "the episode ends with the loss";
  EXPECT_EQ(metrics->snapshot().at_risk, 1U);
}

// A renewal that succeeds again ends the episode: at_risk() is false, a
// token taken now waits for the next episode, and the next stall is a
// second episode with a second signal.
TEST_F(AtRiskTest, ARenewalThatSucceedsEndsTheEpisodeAndTheNextStallIsAnother) {
  QuorumConfig config = config_for(cluster, milliseconds(3000));
  config.lock.node_timeout = milliseconds(100);  // failed renewals retry soon
  // A connection reset while its node was paused comes back soon after the
  // node resumes (the default backoff may reach 2 s, close to the deadline).
  config.lock.reconnect_max = milliseconds(100);
  BlockingClient client(config, metrics);
  GuardOptions options = watched(0.6);
  Guard guard = client.lock(Resource("job"), options);
  ASSERT_TRUE(guard.owns_lock()) << guard.error().message();
  const std::stop_token first = guard.at_risk_token();
  for (std::size_t episode = 1; episode <= 2; ++episode) {
    pause_majority();
    ASSERT_TRUE(eventually([&] { return signals.risks() == episode; }, milliseconds(5000)))
        << "episode " << episode;
    EXPECT_TRUE(guard.at_risk());
    resume_majority();
    const int renewed = guard.renewals();
    ASSERT_TRUE(eventually([&] { return guard.renewals() > renewed; }, milliseconds(5000)));
    EXPECT_FALSE(guard.at_risk()) << "episode " << episode;
    EXPECT_EQ(signals.ends(), episode) << "on_at_risk(false) once per episode a renewal ends";
    EXPECT_FALSE(guard.at_risk_token().stop_requested()) << "a new episode's token";
    EXPECT_TRUE(first.stop_requested());
  }
  EXPECT_EQ(signals.losses(), 0U);
  EXPECT_EQ(signals.risks(), 2U);
  EXPECT_EQ(metrics->snapshot().at_risk, 2U);
}

// While renewals succeed, no episode: with a renewal every 300 ms, half of
// a 3 s TTL is five missed renewals away.
TEST_F(AtRiskTest, NeverFiresWhileRenewalsSucceed) {
  BlockingClient client(config_for(cluster, milliseconds(3000)), metrics);
  GuardOptions options = watched(0.5);
  options.renew_interval = milliseconds(300);
  Guard guard = client.lock(Resource("job"), options);
  ASSERT_TRUE(guard.owns_lock()) << guard.error().message();
  ASSERT_TRUE(eventually([&] { return guard.renewals() >= 5; }, milliseconds(10000)));
  EXPECT_EQ(signals.risks(), 0U);
  EXPECT_FALSE(guard.at_risk());
  EXPECT_FALSE(guard.at_risk_token().stop_requested());
  EXPECT_EQ(metrics->snapshot().at_risk, 0U);
}

// A share outside (0, 1) is refused before anything is asked of the nodes.
TEST_F(AtRiskTest, AShareOutsideZeroToOneIsRefused) {
  BlockingClient client(config_for(cluster, milliseconds(1000)));
  for (double share : {0.0, 1.0, -0.5, 2.0}) {
    GuardOptions options;
    options.at_risk_share = share;
    const Guard guard = client.lock(Resource("job"), options);
    EXPECT_FALSE(guard.owns_lock()) << share;
    EXPECT_EQ(guard.error(), make_error_code(errc::invalid_argument)) << share;
  }
}

// Off by default: no token to wait on, never at risk.
TEST_F(AtRiskTest, OffByDefault) {
  BlockingClient client(config_for(cluster, milliseconds(1000)));
  Guard guard = client.lock(Resource("job"));
  ASSERT_TRUE(guard.owns_lock());
  EXPECT_FALSE(guard.at_risk_token().stop_possible());
  EXPECT_FALSE(guard.at_risk());
}

}  // namespace
}  // namespace redlock::test
