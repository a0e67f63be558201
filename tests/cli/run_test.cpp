// `redlock run` end to end: the lock held exactly while the command runs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>  // sigabbrev_np
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_support.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

class RunTest : public CliClusterTest {
 protected:
  TempDir work_;
};

TEST_F(RunTest, CommandSeesTheLockInItsEnvironmentWhileItIsHeld) {
  const auto file = config();
  const auto seen = work_ / "env";
  const auto go = work_ / "go";
  const std::string script = R"(printf '%s\n' "$REDLOCK_RESOURCE" "$REDLOCK_VALUE" )" +
                             std::string(R"("$REDLOCK_FENCE" "$REDLOCK_VALIDITY_MS" > ')") +
                             seen.string() + ".tmp' && mv '" + seen.string() + ".tmp' '" +
                             seen.string() + "'; " + wait_for_file(go);
  CliProcess run(
      command("run", file, {"--resource", "env job", "--fenced", "--", "sh", "-c", script}));
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(seen); }));
  const std::string text = read_file(seen).value_or("");
  std::vector<std::string> lines;
  for (std::size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos;
       start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  ASSERT_EQ(lines.size(), 4U) << text;
  EXPECT_EQ(lines[0], "env job");
  EXPECT_EQ(lines[1].size(), 32U);
  EXPECT_GE(std::stoll(lines[2]), 1);  // the fencing token
  EXPECT_GT(std::stoll(lines[3]), 0);  // validity at acquisition
  EXPECT_LE(std::stoll(lines[3]), 10000);
  // While the command runs, the nodes hold exactly the value it was given.
  EXPECT_GE(nodes_holding(cluster_, "env job", lines[1]), 3U);

  std::ofstream(go).put('\n');
  const CliResult result = run.wait();
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(nodes_holding(cluster_, "env job"), 0U);
}

TEST_F(RunTest, UnfencedRunDoesNotPassAnOuterToken) {
  const auto file = config();
  const auto seen = work_ / "fence";
  CliOptions options;
  options.environment = {{"REDLOCK_FENCE", "99"}};
  const CliResult result =
      run_cli(command("run", file,
                      {"--resource", "plain", "--", "sh", "-c",
                       "echo \"${REDLOCK_FENCE-unset}\" > '" + seen.string() + "'"}),
              options);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(read_file(seen), "unset\n");
}

TEST_F(RunTest, ExitsWithTheCommandsStatusAndReleases) {
  const auto file = config();
  const CliResult result =
      run_cli(command("run", file, {"--resource", "status", "--", "sh", "-c", "exit 7"}));
  EXPECT_EQ(result.exit_code, 7) << describe(result);
  EXPECT_EQ(nodes_holding(cluster_, "status"), 0U);
}

TEST_F(RunTest, CommandKilledBySignalGives128PlusSignal) {
  const auto file = config();
  const CliResult result =
      run_cli(command("run", file, {"--resource", "killed", "--", "sh", "-c", "kill -KILL $$"}));
  EXPECT_EQ(result.exit_code, 128 + SIGKILL) << describe(result);
  EXPECT_EQ(nodes_holding(cluster_, "killed"), 0U);
}

TEST_F(RunTest, MissingCommandExits127AndReleases) {
  const auto file = config();
  const CliResult result = run_cli(
      command("run", file, {"--resource", "missing", "--", "redlock-no-such-command-here"}));
  EXPECT_EQ(result.exit_code, 127) << describe(result);
  EXPECT_NE(result.err.find("cannot run \"redlock-no-such-command-here\""), std::string::npos)
      << result.err;
  EXPECT_EQ(nodes_holding(cluster_, "missing"), 0U);
}

TEST_F(RunTest, RenewsALockThatOutlivesItsTtl) {
  const auto file = config();
  // 2.5 TTLs long: without renewal the lock would be lost (exit 69).
  const CliResult result =
      run_cli(command("run", file, {"--resource", "long", "--ttl", "800", "--", "sleep", "2"}));
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(nodes_holding(cluster_, "long"), 0U);
}

TEST_F(RunTest, WaitZeroOnAHeldLockExits75AtOnce) {
  const auto file = config(milliseconds(30000));
  const CliResult holder = run_cli(command("acquire", file, {"--resource", "held"}));
  ASSERT_EQ(holder.exit_code, 0) << describe(holder);
  const auto ran = work_ / "ran";
  const CliResult result = run_cli(
      command("run", file, {"--resource", "held", "--wait", "0", "--", "touch", ran.string()}));
  EXPECT_EQ(result.exit_code, 75) << describe(result);
  EXPECT_LT(result.elapsed, milliseconds(5000));  // no waiting: one attempt, far below the TTL
  EXPECT_FALSE(std::filesystem::exists(ran));
  EXPECT_NE(result.err.find("not_acquired"), std::string::npos) << result.err;
  // The holder keeps its lock; the failed run left nothing of its own.
  EXPECT_EQ(nodes_holding(cluster_, "held", parse_output(holder)["value"].text),
            nodes_holding(cluster_, "held"));
}

TEST_F(RunTest, WaitBoundsTheWait) {
  const auto file = config(milliseconds(30000));
  const CliResult holder = run_cli(command("acquire", file, {"--resource", "bounded"}));
  ASSERT_EQ(holder.exit_code, 0) << describe(holder);
  const CliResult result =
      run_cli(command("run", file, {"--resource", "bounded", "--wait", "400", "--", "true"}));
  EXPECT_EQ(result.exit_code, 75) << describe(result);
  EXPECT_LT(result.elapsed, milliseconds(10000));
}

TEST_F(RunTest, WaitsForTheHolderToLetGo) {
  const auto file = config();
  const CliResult holder =
      run_cli(command("acquire", file, {"--resource", "queue", "--ttl", "700"}));
  ASSERT_EQ(holder.exit_code, 0) << describe(holder);
  const CliResult result =
      run_cli(command("run", file, {"--resource", "queue", "--wait", "15000", "--", "true"}));
  EXPECT_EQ(result.exit_code, 0) << describe(result);
}

// 8 concurrent workers, each running `redlock run` 25 times around a
// read-increment-write of a counter file: a lost update would show.
TEST_F(RunTest, ConcurrentRunsNeverLoseAnIncrement) {
  constexpr int kWorkers = 8;
  constexpr int kCycles = 25;
  const auto file = config(milliseconds(5000));
  const auto counter = work_ / "counter";
  std::ofstream(counter) << "0\n";
  const std::string increment =
      "n=$(cat '" + counter.string() + "'); echo $((n+1)) > '" + counter.string() + "'";

  std::atomic<int> failures{0};
  std::vector<std::string> failure_texts(kWorkers);
  std::vector<std::thread> workers;
  workers.reserve(kWorkers);
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      for (int c = 0; c < kCycles; ++c) {
        const CliResult result = run_cli(
            command("run", file,
                    {"--resource", "counter", "--wait", "60000", "--", "sh", "-c", increment}),
            {}, std::chrono::seconds(90));
        if (result.exit_code != 0) {
          ++failures;
          failure_texts[static_cast<std::size_t>(w)] = describe(result);
          return;
        }
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  for (const std::string& text : failure_texts) EXPECT_TRUE(text.empty()) << text;
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(read_file(counter), std::to_string(kWorkers * kCycles) + "\n");
  EXPECT_EQ(nodes_holding(cluster_, "counter"), 0U);
}

struct LossCase {
  const char* name;
  const char* prelude;  // shell code before the command execs sleep
  bool needs_sigkill;
};

void PrintTo(const LossCase& loss_case, std::ostream* out) { *out << loss_case.name; }

class RunLossTest : public RunTest, public ::testing::WithParamInterface<LossCase> {};

// The lock is lost while the command runs (a majority of nodes stopped):
// the command's group is terminated and run exits 69 within ttl + grace.
TEST_P(RunLossTest, LossKillsTheCommandAndExits69) {
  constexpr auto kTtl = milliseconds(1000);
  constexpr auto kGrace = milliseconds(500);
  const auto file = config(kTtl);
  const auto pid_file = work_ / "pid";
  const std::string script = std::string(GetParam().prelude) + "echo $$ > '" + pid_file.string() +
                             ".tmp' && mv '" + pid_file.string() + ".tmp' '" + pid_file.string() +
                             "'; exec sleep 30";
  CliProcess run(
      command("run", file,
              {"--resource", "lost", "--ttl", "1000", "--grace", "500", "--", "sh", "-c", script}));
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(pid_file); }));
  const pid_t child = std::stoi(read_file(pid_file).value_or("0"));
  ASSERT_GT(child, 0);

  const auto stopped_at = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < 3; ++i) cluster_.node(i).stop();
  const CliResult result = run.wait(std::chrono::seconds(30));
  const auto took = std::chrono::steady_clock::now() - stopped_at;

  EXPECT_EQ(result.exit_code, 69) << describe(result);
  // Generous: the lock runs out within one TTL of the last renewal.
  EXPECT_LT(took, kTtl + kGrace + milliseconds(10000));
  EXPECT_NE(result.err.find("lock lost while the command ran"), std::string::npos) << result.err;
  // The loss names the nodes that let it go, as a failed acquire would.
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_NE(result.err.find("redlock: renew: node " + cluster_.node(i).address() + ": "),
              std::string::npos)
        << result.err;
  }
  EXPECT_EQ(result.err.find("sent SIGKILL") != std::string::npos, GetParam().needs_sigkill)
      << result.err;
  // run reaped its child before exiting, so the pid is gone.
  EXPECT_FALSE(process_exists(child));
}

// With --at-risk-signal, renewals made late (a majority of nodes paused)
// send the signal to the command before any loss, once per episode; the
// nodes resumed, a renewal succeeds and the command ends normally under
// its lock.
TEST_F(RunTest, AtRiskSignalReachesTheCommandBeforeAnyLoss) {
  // A connection reset while its node was paused comes back soon after the
  // node resumes (the default backoff may reach 2 s, close to the deadline).
  const auto file = config(milliseconds(3000), "reconnect_max_ms = 100\n");
  const auto started = work_ / "started";
  const auto risk = work_ / "risk";
  const auto done = work_ / "done";
  // The signal goes to the whole process group: a `sleep` it kills leaves
  // 138 as the loop's status when `done` appears right after, so the script
  // ends with its own status rather than the last sleep's.
  const std::string script = "trap 'echo risk >> \"" + risk.string() + "\"' USR1; touch '" +
                             started.string() + "'; while [ ! -e '" + done.string() +
                             "' ]; do sleep 0.05; done; exit 0";
  CliProcess run(command("run", file,
                         {"--resource", "at-risk", "--ttl", "3000", "--at-risk-signal", "USR1",
                          "--", "sh", "-c", script}));
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(started); }));
  for (std::size_t i = 0; i < 3; ++i) cluster_.node(i).pause();
  const bool warned = eventually([&] { return std::filesystem::exists(risk); });
  for (std::size_t i = 0; i < 3; ++i) cluster_.node(i).resume();
  ASSERT_TRUE(warned) << "no at-risk signal while renewals hung";
  // A renewal succeeds again (the lock held on a majority with its TTL
  // renewed), then the command ends.
  ASSERT_TRUE(eventually([&] {
    return cluster_.node(0).probe().command({"PTTL", lock_key("at-risk")}).integer > 2500;
  }));
  { std::ofstream touch(done); }
  const CliResult result = run.wait(std::chrono::seconds(30));
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("lock at risk (renewals late, less than half the TTL left); sending "
                            "SIGUSR1 to process group"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(read_file(risk).value_or(""), "risk\n") << "one episode, one signal";
}

// An unknown signal name is a usage error before anything is acquired.
TEST_F(RunTest, AtRiskSignalMustNameASignal) {
  const auto file = config();
  const CliResult result = run_cli(
      command("run", file, {"--resource", "x", "--at-risk-signal", "SIGNOPE", "--", "true"}));
  EXPECT_EQ(result.exit_code, 64) << describe(result);
  EXPECT_NE(result.err.find("--at-risk-signal: expected a signal name"), std::string::npos)
      << result.err;
  EXPECT_EQ(nodes_holding(cluster_, "x"), 0U);
}

// The key is deleted from every node while the command runs: the next
// renewal is refused everywhere. The loss line said only "no_quorum: too few
// nodes granted the request"; now every node is named with its answer.
TEST_F(RunTest, LossNamesEveryNodeAndWhatItAnswered) {
  const auto file = config(milliseconds(1500));
  const auto started = work_ / "started";
  CliProcess run(command("run", file,
                         {"--resource", "taken", "--ttl", "1500", "--grace", "0", "--", "sh", "-c",
                          "touch '" + started.string() + "'; exec sleep 30"}));
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(started); }));
  ASSERT_EQ(nodes_holding(cluster_, "taken"), cluster_.size());
  for (std::size_t i = 0; i < cluster_.size(); ++i) {
    (void)cluster_.node(i).probe().command({"DEL", lock_key("taken")});
  }
  const CliResult result = run.wait(std::chrono::seconds(30));
  EXPECT_EQ(result.exit_code, 69) << describe(result);
  EXPECT_NE(result.err.find("lock lost while the command ran"), std::string::npos) << result.err;
  // Every node named: not_held, or pending when the loss was decided (at
  // the majority's refusals) before its answer came; a majority refused.
  std::size_t refused = 0;
  for (std::size_t i = 0; i < cluster_.size(); ++i) {
    const std::string line = "redlock: renew: node " + cluster_.node(i).address() + ": ";
    const bool not_held = result.err.find(line + "not_held\n") != std::string::npos;
    EXPECT_TRUE(not_held || result.err.find(line + "pending\n") != std::string::npos) << result.err;
    if (not_held) ++refused;
  }
  EXPECT_GE(refused, cluster_.size() / 2 + 1) << result.err;
}

INSTANTIATE_TEST_SUITE_P(Children, RunLossTest,
                         ::testing::Values(LossCase{"ExitsOnSigterm", "", false},
                                           LossCase{"IgnoresSigterm", "trap '' TERM; ", true}),
                         [](const ::testing::TestParamInfo<LossCase>& param_info) {
                           return std::string(param_info.param.name);
                         });

class RunSignalTest : public RunTest, public ::testing::WithParamInterface<int> {};

// A signal to run reaches the command's group; the lock is released and run
// exits with the command's status (128 + the signal, for sleep).
TEST_P(RunSignalTest, SignalIsForwardedAndTheLockReleased) {
  const int signal_number = GetParam();
  const auto file = config();
  const auto pid_file = work_ / "pid";
  const std::string script = "echo $$ > '" + pid_file.string() + ".tmp' && mv '" +
                             pid_file.string() + ".tmp' '" + pid_file.string() + "'; exec sleep 30";
  CliProcess run(command("run", file, {"--resource", "signalled", "--", "sh", "-c", script}));
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(pid_file); }));
  const pid_t child = std::stoi(read_file(pid_file).value_or("0"));
  ASSERT_GE(nodes_holding(cluster_, "signalled"), 3U);

  run.signal(signal_number);
  const CliResult result = run.wait(std::chrono::seconds(20));
  EXPECT_EQ(result.exit_code, 128 + signal_number) << describe(result);
  EXPECT_FALSE(process_exists(child));
  EXPECT_EQ(nodes_holding(cluster_, "signalled"), 0U);
}

INSTANTIATE_TEST_SUITE_P(Signals, RunSignalTest, ::testing::Values(SIGINT, SIGTERM, SIGHUP),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return std::string(sigabbrev_np(param_info.param));
                         });

// A signal that arrives while run still waits for the lock ends the wait at
// once: the command never starts and the holder keeps its lock.
TEST_F(RunTest, SignalWhileWaitingEndsTheWaitAtOnce) {
  const auto file = config(milliseconds(30000));
  const CliResult holder = run_cli(command("acquire", file, {"--resource", "awaited"}));
  ASSERT_EQ(holder.exit_code, 0) << describe(holder);
  const auto ran = work_ / "ran";
  CliProcess run(command(
      "run", file, {"--resource", "awaited", "--wait", "30000", "--", "touch", ran.string()}));
  // It is waiting once it is in the node's fair queue (where a waiter
  // waits by default).
  ASSERT_TRUE(eventually([&] {
    return cluster_.node(0).probe().command({"ZCARD", "redlock:queue:awaited"}).integer > 0;
  }));
  const auto signalled_at = std::chrono::steady_clock::now();
  run.signal(SIGTERM);
  const CliResult result = run.wait(std::chrono::seconds(20));
  EXPECT_EQ(result.exit_code, 128 + SIGTERM) << describe(result);
  EXPECT_LT(std::chrono::steady_clock::now() - signalled_at, milliseconds(5000))
      << "not the 30 s wait";
  EXPECT_FALSE(std::filesystem::exists(ran));
  EXPECT_NE(result.err.find("while waiting for the lock"), std::string::npos) << result.err;
  EXPECT_EQ(nodes_holding(cluster_, "awaited", parse_output(holder)["value"].text),
            nodes_holding(cluster_, "awaited"));
}

TEST_F(RunTest, FailedAcquireRunsNothingAndLeavesNoKey) {
  const auto file = config();
  for (std::size_t i = 0; i < 3; ++i) cluster_.node(i).stop();
  const auto ran = work_ / "ran";
  const CliResult result = run_cli(
      command("run", file, {"--resource", "noquorum", "--wait", "0", "--", "touch", ran.string()}));
  EXPECT_EQ(result.exit_code, 75) << describe(result);
  EXPECT_FALSE(std::filesystem::exists(ran));
  EXPECT_NE(result.err.find("node " + cluster_.node(0).address()), std::string::npos) << result.err;
  EXPECT_TRUE(
      eventually([&] { return nodes_holding(cluster_, "noquorum") == 0; }, milliseconds(3000)));
}

}  // namespace
}  // namespace redlock::test
