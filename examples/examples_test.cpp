// Smoke tests of the example programs: each runs as a real process, as a
// user would start it, against real redis-server nodes on loopback
// (example_process.hpp).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "example_process.hpp"
#include "redis_fixture.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

// The number after "label: " at the start of a line of `text`, if any.
std::optional<long long> figure(const std::string& text, const std::string& label) {
  const std::string start = label + ": ";
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(start, 0) != 0) continue;
    long long value = 0;
    std::istringstream rest(line.substr(start.size()));
    if (rest >> value) return value;
  }
  return std::nullopt;
}

// Waits (at most `limit`) until `done` holds; returns whether it did.
template <typename Condition>
bool within(milliseconds limit, Condition done) {
  const auto give_up = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() >= give_up) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

TEST(RunOnceJob, ExactlyOneOfThreeConcurrentInstancesRunsTheJob) {
  RedisCluster cluster{3};
  const fs::path config = cluster.write_config();
  ScratchDir done;
  const std::vector<std::string> arguments = {"--config",   config.string(), "--date",
                                              "2030-01-01", "--done-dir",    done.path().string()};
  std::vector<std::unique_ptr<Example>> instances;
  instances.reserve(3);
  for (int i = 0; i < 3; ++i) {
    instances.push_back(std::make_unique<Example>(RUN_ONCE_JOB_BINARY, arguments));
  }
  std::string outputs;
  for (auto& instance : instances) {
    EXPECT_EQ(instance->wait(), 0) << instance->err();
    outputs += instance->out();
  }
  EXPECT_EQ(count_of(outputs, "ran the job"), 1u) << outputs;

  // Later the same day: the done marker makes the next instance skip.
  Example later(RUN_ONCE_JOB_BINARY, arguments);
  EXPECT_EQ(later.wait(), 0) << later.err();
  EXPECT_NE(later.out().find("already done"), std::string::npos) << later.out();
}

TEST(FencedDocument, TwoRunsUpdateTheDocumentTwice) {
  RedisCluster cluster{3};
  RedisServer store;
  const std::vector<std::string> store_flag = {"--store", store.address()};
  std::vector<std::string> first = {"--config", cluster.write_config().string()};
  first.insert(first.end(), store_flag.begin(), store_flag.end());
  Example one(FENCED_DOCUMENT_BINARY, first);
  ASSERT_EQ(one.wait(), 0) << one.err();
  EXPECT_NE(one.out().find("revision 0 -> 1"), std::string::npos) << one.out();

  // The second run names the nodes inline instead of with a quorum file.
  std::vector<std::string> second = store_flag;
  for (const std::string& address : cluster.addresses()) {
    second.insert(second.end(), {"--node", address});
  }
  Example two(FENCED_DOCUMENT_BINARY, second);
  ASSERT_EQ(two.wait(), 0) << two.err();
  EXPECT_NE(two.out().find("revision 1 -> 2"), std::string::npos) << two.out();
  EXPECT_EQ(store.probe().get("doc:readme"), "revision 2");
}

TEST(FencedDocument, AStaleTokenIsFencedOutAndChangesNothing) {
  RedisCluster cluster{3};
  RedisServer store;
  const std::vector<std::string> arguments = {"--config", cluster.write_config().string(),
                                              "--store", store.address()};
  for (int run = 0; run < 2; ++run) {
    Example fresh(FENCED_DOCUMENT_BINARY, arguments);
    ASSERT_EQ(fresh.wait(), 0) << fresh.err();
  }
  // Tokens start at 1 and grow, so after two holders the mark is at least 2.
  std::vector<std::string> stale_arguments = arguments;
  stale_arguments.insert(stale_arguments.end(), {"--stale-token", "1"});
  Example stale(FENCED_DOCUMENT_BINARY, stale_arguments);
  EXPECT_EQ(stale.wait(), 69);
  EXPECT_NE(stale.err().find("fenced out"), std::string::npos) << stale.err();
  EXPECT_EQ(store.probe().get("doc:readme"), "revision 2");
}

TEST(KeyPool, NWorkersGetDistinctKeysAndOneMoreFindsNoneFree) {
  constexpr int kPool = 3;
  RedisCluster cluster{3};
  const std::vector<std::string> arguments = {"--config",  cluster.write_config().string(),
                                              "--pool",    std::to_string(kPool),
                                              "--hold-ms", "20000"};
  std::vector<std::unique_ptr<Example>> holders;
  holders.reserve(kPool);
  // Each holder prints "took pool:K" once it holds its key. They start one
  // after another: two workers trying the same free key in the same instant
  // may both miss it (key_pool.cpp says so), which would make this flaky.
  std::set<std::string> keys;
  for (int i = 0; i < kPool; ++i) {
    holders.push_back(std::make_unique<Example>(KEY_POOL_BINARY, arguments));
    auto& holder = holders.back();
    const auto give_up = Clock::now() + milliseconds(10000);
    while (holder->out().find('\n') == std::string::npos && holder->running() &&
           Clock::now() < give_up) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    const std::string out = holder->out();
    ASSERT_EQ(out.rfind("took pool:", 0), 0u) << out << holder->err();
    keys.insert(out.substr(5, out.find(' ', 5) - 5));
  }
  EXPECT_EQ(keys.size(), static_cast<std::size_t>(kPool));

  std::vector<std::string> last_arguments = arguments;
  last_arguments.back() = "0";
  Example last(KEY_POOL_BINARY, last_arguments);
  EXPECT_EQ(last.wait(), 75) << last.err();
  EXPECT_NE(last.out().find("no free key"), std::string::npos) << last.out();

  // A signal ends the hold early; the holder still releases its key.
  for (auto& holder : holders) {
    holder->signal(SIGTERM);
    EXPECT_EQ(holder->wait(), 0) << holder->err();
    EXPECT_NE(holder->out().find("released pool:"), std::string::npos) << holder->out();
  }
}

TEST(ApiKeys, ThirtyTasksShareTenKeysNeverMoreThanTenAtOnceNorOneKeyTwice) {
  RedisCluster cluster{3};
  Example run(API_KEYS_BINARY, {"--config", cluster.write_config().string()});
  ASSERT_EQ(run.wait(milliseconds(60000)), 0) << run.out() << run.err();
  const std::string out = run.out();
  EXPECT_EQ(figure(out, "tasks done"), 30) << out;
  const auto most = figure(out, "most at once");
  ASSERT_TRUE(most.has_value()) << out;
  EXPECT_GE(*most, 1);
  EXPECT_LE(*most, 10);
  EXPECT_EQ(figure(out, "overlaps"), 0) << out;
  EXPECT_LE(figure(out, "keys used").value_or(99), 10) << out;
  EXPECT_NE(out.find("most at once: " + std::to_string(*most) + " of 10 keys"), std::string::npos)
      << out;

  // Every task named the key it used, and each key is one of the ten.
  EXPECT_EQ(count_of(out, " uses key-"), 30u) << out;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find(" uses key-");
    if (at == std::string::npos) continue;
    const int key = std::stoi(line.substr(at + 10));
    EXPECT_TRUE(key >= 0 && key < 10) << line;
  }
  // Every task released its permit: no permit key is left on any node.
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_TRUE(
        within(milliseconds(5000),
               [&] { return cluster.node(i).probe().keys("redlock:sem:llm-keys:*").empty(); }))
        << "node " << i;
  }
}

TEST(ApiKeys, AnotherKeyCountIsRefusedWhileAKeyIsHeld) {
  RedisCluster cluster{3};
  const std::string config = cluster.write_config().string();
  // One task that holds its key for a minute (it is killed at the end).
  Example holder(API_KEYS_BINARY,
                 {"--config", config, "--tasks", "1", "--threads", "1", "--work-ms", "60000"});
  ASSERT_TRUE(within(milliseconds(10000), [&] {
    return holder.out().find("uses key-") != std::string::npos || !holder.running();
  }));
  ASSERT_NE(holder.out().find("task 0 uses key-"), std::string::npos)
      << holder.out() << holder.err();

  Example other(API_KEYS_BINARY, {"--config", config, "--keys", "5", "--tasks", "2"});
  EXPECT_EQ(other.wait(), 64) << other.out() << other.err();
  EXPECT_NE(other.err().find("records 10 permits for llm-keys, not 5"), std::string::npos)
      << other.err();
  EXPECT_EQ(figure(other.out(), "tasks done"), 0) << other.out();
  EXPECT_TRUE(holder.running()) << "the holder is still working";
}

// One HTTP/1.1 GET to 127.0.0.1:port; the whole response ("" when the
// connection failed). Bounded: the socket times out after 5 s.
std::string http_get(std::uint16_t port, const std::string& path) {
  const int connection = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (connection < 0) return "";
  const timeval limit{5, 0};
  (void)::setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (::connect(connection, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) {
    const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    if (::send(connection, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      for (ssize_t got = 0; (got = ::recv(connection, buffer, sizeof buffer, 0)) > 0;) {
        answer.append(buffer, static_cast<std::size_t>(got));
      }
    }
  }
  ::close(connection);
  return answer;
}

// docs/api.md's "Export metrics": a scrape over loopback gets the client's
// Prometheus text, with the lock it took counted and every node named.
TEST(MetricsHttp, ServesThePrometheusTextOnLoopback) {
  RedisCluster cluster{3};
  const fs::path config = cluster.write_config();
  Example server(METRICS_HTTP_BINARY,
                 {"--config", config.string(), "--port", "0", "--resource", "scraped"});
  std::optional<long long> port;
  ASSERT_TRUE(within(milliseconds(20000), [&] {
    const std::string out = server.out();
    const auto at = out.find("listening on 127.0.0.1:");
    if (at == std::string::npos || out.find('\n', at) == std::string::npos) return false;
    port = std::stoll(out.substr(at + std::string_view("listening on 127.0.0.1:").size()));
    return true;
  })) << server.err();
  ASSERT_TRUE(port && *port > 0 && *port < 65536);

  const std::string scrape = http_get(static_cast<std::uint16_t>(*port), "/metrics");
  EXPECT_EQ(scrape.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << scrape;
  EXPECT_NE(scrape.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << scrape;
  EXPECT_NE(scrape.find("# TYPE redlock_acquires_total counter"), std::string::npos) << scrape;
  // It took its lock once before it listened: the counter is at least 1.
  const std::string won_sample = "\nredlock_acquires_total{result=\"won\"} ";
  const auto won_at = scrape.find(won_sample);
  ASSERT_NE(won_at, std::string::npos) << scrape;
  EXPECT_GE(std::stoll(scrape.substr(won_at + won_sample.size())), 1) << scrape;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_NE(scrape.find("redlock_node_replies_total{node=\"" + cluster.node(i).address() + "\"}"),
              std::string::npos)
        << scrape;
  }
  EXPECT_EQ(http_get(static_cast<std::uint16_t>(*port), "/").rfind("HTTP/1.1 404", 0), 0u);

  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 0) << server.err();
}

TEST(Examples, UsageAndConfigurationErrorsHaveTheirExitCodes) {
  // No --store: a usage error, before any quorum is read.
  Example no_store(FENCED_DOCUMENT_BINARY, {"--node", "127.0.0.1:1"});
  EXPECT_EQ(no_store.wait(), 64);
  // No flags, no $REDLOCK_CONFIG, no ./redlock.toml: nothing says where the quorum is.
  Example no_quorum(KEY_POOL_BINARY, {});
  EXPECT_EQ(no_quorum.wait(), 78);
  EXPECT_FALSE(no_quorum.err().empty());
  Example unknown(RUN_ONCE_JOB_BINARY, {"--bogus", "1"});
  EXPECT_EQ(unknown.wait(), 64);
  Example no_keys(API_KEYS_BINARY, {"--node", "127.0.0.1:1", "--keys", "0"});
  EXPECT_EQ(no_keys.wait(), 64);
}

}  // namespace
}  // namespace redlock::test
