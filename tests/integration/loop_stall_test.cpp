// A loop that was busy elsewhere — a long callback of the application's, a
// burst of work, the process descheduled — must not turn answers that came
// in meanwhile into timeouts. libuv runs due timers before it polls for
// I/O, so after a stall the requests' deadlines fire before the replies
// waiting in the sockets are read; a connection reads what has arrived
// before it judges a request late (docs/engine.md, "Deadlines").
// Real nodes; the stall is a blocking sleep on the loop thread.
#include <gtest/gtest.h>
#include <uv.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

// Runs `step` in the loop's check phase, right after each poll for I/O.
// An idle handle keeps the poll from blocking, so the checks come one per
// loop turn.
struct CheckPhase {
  uv_check_t check{};
  uv_idle_t idle{};
  std::function<void()> step;

  void start(uv_loop_t* loop) {
    check.data = this;
    uv_check_init(loop, &check);
    uv_idle_init(loop, &idle);
    uv_idle_start(&idle, [](uv_idle_t*) {});
    uv_check_start(&check,
                   [](uv_check_t* handle) { static_cast<CheckPhase*>(handle->data)->step(); });
  }
  void close() {
    uv_close(reinterpret_cast<uv_handle_t*>(&check), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&idle), nullptr);
  }
};

TEST(LoopStall, AnswersThatArrivedDuringAStallAreNotTimeouts) {
  RedisCluster cluster{3};
  QuorumConfig config = config_for(cluster, milliseconds(10000));
  config.lock.node_timeout = milliseconds(100);
  config.lock.retry_count = 0;  // one attempt: a timeout cannot be retried away
  LoopRun run(config);

  std::optional<AcquireResult> warm;
  std::optional<AcquireResult> result;
  CheckPhase phase;
  int turn = 0;
  // Turn 0: the nodes are paused and the acquire is made; its requests
  // leave before the next poll and wait in the paused nodes' sockets.
  // Turn 1: the loop stalls for four node timeouts; the nodes resume
  // 50 ms into it and answer while the loop is still blocked.
  phase.step = [&] {
    if (turn == 0) {
      for (std::size_t i = 0; i < cluster.size(); ++i) cluster.node(i).pause();
      run.client().acquire(Resource("stall"), {}, [&](AcquireResult answer) {
        result = std::move(answer);
        phase.close();
        if (!result->ok()) return run.done();
        run.client().release(*result->lock, [&](ReleaseResult) { run.done(); });
      });
    } else if (turn == 1) {
      std::thread resumer([&] {
        std::this_thread::sleep_for(milliseconds(50));
        for (std::size_t i = 0; i < cluster.size(); ++i) cluster.node(i).resume();
      });
      std::this_thread::sleep_for(milliseconds(400));
      resumer.join();
    }
    ++turn;
  };
  ASSERT_TRUE(run.run(
      [&] {
        // Connected first, so the stall meets the acquire's requests only.
        run.client().acquire(Resource("stall-warm"), {}, [&](AcquireResult warmed) {
          warm = std::move(warmed);
          if (!warm->ok()) return run.done();
          run.client().release(*warm->lock, [&](ReleaseResult) { phase.start(run.loop()); });
        });
      },
      std::chrono::seconds(20)));
  ASSERT_TRUE(warm.has_value() && warm->ok());
  ASSERT_TRUE(result.has_value());
  ASSERT_GE(turn, 2) << "the acquire was answered before the stall";
  std::string outcomes;
  for (const NodeOutcome& node : result->nodes) {
    outcomes += " " + node.name + "=" + std::string(to_string(node.status)) + " " + node.detail;
  }
  EXPECT_TRUE(result->ok()) << result->error.message() << ":" << outcomes;
}

}  // namespace
}  // namespace redlock::test
