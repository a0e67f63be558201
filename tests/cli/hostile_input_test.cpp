// The CLI against what it must not trust: nodes that answer slowly, without
// end or with forged text, quorum files built to crash the parser or to
// never end, and addresses that carry a password where a port should be.
#include <gtest/gtest.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "cli_test_support.hpp"
#include "hostile_node.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Every line of stderr is one of redlock's own, and none carries a byte
// that a terminal would act on.
void expect_clean_lines(const std::string& err) {
  EXPECT_TRUE(std::none_of(err.begin(), err.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && c != '\n') || byte == 0x7F;
  })) << err;
  std::size_t start = 0;
  while (start < err.size()) {
    const std::size_t end = err.find('\n', start);
    const std::string line = err.substr(start, end - start);
    EXPECT_TRUE(line.starts_with("redlock: ")) << line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

// A node's error reply with a line of its own and a terminal escape in it,
// and what it must look like once it reaches the user: escaped.
constexpr const char* kForgeryBytes =
    "ERR x\nredlock: acquire: node 10.9.9.9:6379: granted\x1b]0;pwned\x07";
constexpr const char* kForgery =
    "ERR x\\nredlock: acquire: node 10.9.9.9:6379: granted\\x1b]0;pwned\\x07";

TEST(HostileNode, AnErrorReplyCannotForgeLinesOrSendEscapes) {
  HostileNode node{std::string(kForgeryBytes)};
  const CliResult acquired =
      run_cli({"acquire", "--node", node.address(), "--resource", "r", "--wait", "0"});
  EXPECT_EQ(acquired.exit_code, 75) << describe(acquired);
  expect_clean_lines(acquired.err);
  EXPECT_EQ(acquired.err.find("\nredlock: acquire: node 10.9.9.9"), std::string::npos)
      << acquired.err;
  EXPECT_NE(acquired.err.find(kForgery), std::string::npos) << acquired.err;

  const CliResult status = run_cli({"status", "--node", node.address()});
  EXPECT_EQ(status.exit_code, 75) << describe(status);
  expect_clean_lines(status.err);
  EXPECT_NE(status.err.find(std::string("PING: ") + kForgery), std::string::npos) << status.err;

  const CliResult inspected = run_cli({"inspect", "--node", node.address(), "--resource", "r"});
  EXPECT_EQ(inspected.exit_code, 75) << describe(inspected);
  expect_clean_lines(inspected.err);
  EXPECT_NE(inspected.err.find("inspect: node " + node.address() + ": no answer: "),
            std::string::npos)
      << inspected.err;
  EXPECT_NE(inspected.err.find(kForgery), std::string::npos) << inspected.err;
  // In the JSON, the already escaped text, as JSON: no raw control byte.
  EXPECT_EQ(inspected.out.find('\x1b'), std::string::npos) << inspected.out;
  const JsonValue json = parse_output(inspected);
  EXPECT_TRUE(json["nodes"].items.at(0)["detail"].text.ends_with(kForgery)) << inspected.out;
}

// A node answering a byte every quarter second kept `status` reading for
// ever: each read was bounded, the whole probe was not.
TEST(HostileNode, StatusEndsWithinTheConnectTimeoutWhenANodeTrickles) {
  HostileNode node(HostileMode::slow);
  TempDir work;
  const auto file = work / "q.toml";
  write_text(file,
             "[[node]]\naddress = \"" + node.address() + "\"\n[lock]\nconnect_timeout_ms = 500\n");
  const CliResult result = run_cli({"status", "--config", file.string()}, {}, seconds(10));
  EXPECT_FALSE(result.timed_out) << describe(result);
  EXPECT_EQ(result.exit_code, 75) << describe(result);
  EXPECT_LT(result.elapsed, milliseconds(500 + 2000)) << describe(result);
  EXPECT_NE(result.err.find("status: node " + node.address() + ": PING: timed out after 500 ms"),
            std::string::npos)
      << result.err;
}

// A node that reads and never answers: the probe says how long it waited,
// not a socket error.
TEST(HostileNode, StatusSaysAProbeTimedOutWhenANodeNeverAnswers) {
  HostileNode node(HostileMode::silent);
  TempDir work;
  const auto file = work / "q.toml";
  write_text(file,
             "[[node]]\naddress = \"" + node.address() + "\"\n[lock]\nconnect_timeout_ms = 300\n");
  const CliResult result = run_cli({"status", "--config", file.string()}, {}, seconds(10));
  EXPECT_EQ(result.exit_code, 75) << describe(result);
  EXPECT_NE(result.err.find("status: node " + node.address() + ": PING: timed out after 300 ms"),
            std::string::npos)
      << result.err;
}

// A Unix socket whose listener accepts nothing and whose backlog is full
// refuses a connect at once with EAGAIN: the probe said "connect: Resource
// temporarily unavailable". It is a node that has not answered within the
// connect timeout, and the message says so.
TEST(HostileNode, StatusSaysAConnectTimedOutWhenAUnixListenerNeverAccepts) {
  TempDir work;
  const std::string path = (work / "full.sock").string();
  const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof address.sun_path);
  std::copy(path.begin(), path.end(), address.sun_path);
  const auto* generic = reinterpret_cast<const sockaddr*>(&address);
  ASSERT_EQ(::bind(listener, generic, sizeof address), 0);
  ASSERT_EQ(::listen(listener, 0), 0);
  // Fill the backlog until a connect is refused (a few at most).
  std::vector<int> waiting;
  bool full = false;
  for (int i = 0; i < 16 && !full; ++i) {
    const int client = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ASSERT_GE(client, 0);
    full = ::connect(client, generic, sizeof address) != 0 && errno == EAGAIN;
    waiting.push_back(client);
  }
  ASSERT_TRUE(full) << "the backlog never filled";
  const auto file = work / "q.toml";
  write_text(file,
             "[[node]]\naddress = \"unix://" + path + "\"\n[lock]\nconnect_timeout_ms = 300\n");
  const CliResult result = run_cli({"status", "--config", file.string()}, {}, seconds(10));
  for (const int fd : waiting) ::close(fd);
  ::close(listener);
  EXPECT_EQ(result.exit_code, 75) << describe(result);
  EXPECT_NE(result.err.find("connect: timed out after 300 ms"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("temporarily unavailable"), std::string::npos) << result.err;
}

// An error line without CRLF and an endless bulk string were buffered
// whole: gigabytes. A reply past the limit ends the probe.
TEST(HostileNode, StatusRefusesRepliesLargerThanTheLimit) {
  for (const HostileMode mode : {HostileMode::endless_error, HostileMode::endless_bulk}) {
    HostileNode node(mode);
    const CliResult result = run_cli({"status", "--node", node.address()}, {}, seconds(10));
    EXPECT_FALSE(result.timed_out) << hostile_mode_name(mode) << ": " << describe(result);
    EXPECT_EQ(result.exit_code, 75) << hostile_mode_name(mode) << ": " << describe(result);
    EXPECT_LT(result.elapsed, milliseconds(1000 + 2000))
        << hostile_mode_name(mode) << ": " << describe(result);
    EXPECT_NE(result.err.find("PING: protocol error: reply larger than 1 MiB"), std::string::npos)
        << hostile_mode_name(mode) << ": " << result.err;
  }
}

TEST(HostileFile, KeyAndNodeNamesAreEscapedInErrorsAndTables) {
  TempDir work;
  const auto bad_key = work / "key.toml";
  write_text(bad_key,
             "[[node]]\naddress = \"127.0.0.1:1\"\n[lock]\n\"tt\\u001b[2Jl\\nredlock: ok\" = 1\n");
  const CliResult checked = run_cli({"check-config", bad_key.string()});
  EXPECT_EQ(checked.exit_code, 78) << describe(checked);
  expect_clean_lines(checked.err);
  EXPECT_NE(checked.err.find(":4:1: lock.tt\\x1b[2Jl\\nredlock: ok: unknown key"),
            std::string::npos)
      << checked.err;

  const auto named = work / "named.toml";
  write_text(named, "[[node]]\naddress = \"127.0.0.1:1\"\nname = \"n\\u001b[31m\\nx\"\n");
  const CliResult status = run_cli({"status", "--config", named.string()});
  EXPECT_EQ(status.exit_code, 75) << describe(status);
  expect_clean_lines(status.err);
  EXPECT_EQ(status.out.find('\x1b'), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("n\\x1b[31m\\nx"), std::string::npos) << status.out;
  EXPECT_NE(status.err.find("status: node n\\x1b[31m\\nx: connect:"), std::string::npos)
      << status.err;

  // The path is the user's too.
  const auto odd_path = work / "odd\x1b[1m.toml";
  write_text(odd_path, "[lock]\nttl_ms = 0\n");
  const CliResult path = run_cli({"check-config", odd_path.string()});
  EXPECT_EQ(path.exit_code, 78) << describe(path);
  expect_clean_lines(path.err);
  EXPECT_NE(path.err.find("odd\\x1b[1m.toml:2:10:"), std::string::npos) << path.err;
}

// toml++ 3.3.0 overflowed its stack on these; non-ASCII in a bare key
// reached undefined behaviour in its Unicode tables.
TEST(HostileFile, CraftedFilesAreConfigErrorsWithAPosition) {
  TempDir work;
  std::string dotted;
  for (int i = 0; i < 40000; ++i) dotted += i == 0 ? "a" : ".a";
  const std::vector<std::pair<std::string, std::string>> files = {
      {"[" + dotted + "]\n", ":1:66: invalid TOML: nested deeper than 32 levels"},
      {"[[node]]\naddress = \"127.0.0.1:1\"\n[lock]\n" + dotted + " = 1\n",
       ":4:63: invalid TOML: nested deeper than 32 levels"},
      {"a\xc3\xa9 = 1\n", ":1:2: invalid TOML: a bare key may hold only ASCII"},
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto file = work / ("crafted" + std::to_string(i) + ".toml");
    write_text(file, files[i].first);
    const CliResult result = run_cli({"check-config", file.string()});
    EXPECT_EQ(result.exit_code, 78) << describe(result);
    EXPECT_NE(result.err.find(file.string() + files[i].second), std::string::npos) << result.err;
  }
}

// A FIFO blocked the open for ever, /dev/zero read until memory ran out.
TEST(HostileFile, OnlyRegularFilesAreRead) {
  TempDir work;
  const auto fifo = work / "fifo.toml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo.string(), std::string("/dev/zero")}) {
    const CliResult result = run_cli({"check-config", path}, {}, seconds(5));
    EXPECT_FALSE(result.timed_out) << describe(result);
    EXPECT_EQ(result.exit_code, 78) << describe(result);
    EXPECT_NE(result.err.find(path + ": cannot read: not a regular file"), std::string::npos)
        << result.err;
  }
}

// Without '@host', "alice:s3cretPW" reads as a host and a port, and
// "alice:1234/s3cretPW" as a host, a port and a database.
TEST(HostileAddress, NoErrorQuotesAnyPartOfAUserinfo) {
  TempDir work;
  const std::vector<std::pair<std::string, std::string>> addresses = {
      {"redis://alice:s3cretPW", "s3cretPW"},
      {"redis://alice:1234/s3cretPW", "s3cretPW"},
      {"redis://alice:123456", "123456"},
  };
  for (const auto& [address, secret] : addresses) {
    const CliResult flag = run_cli({"status", "--node", address});
    EXPECT_EQ(flag.exit_code, 78) << describe(flag);
    EXPECT_EQ(flag.err.find(secret), std::string::npos) << flag.err;
    EXPECT_EQ(flag.err.find("alice"), std::string::npos) << flag.err;

    const auto file = work / "q.toml";
    write_text(file, "[[node]]\naddress = \"" + address + "\"\n");
    const CliResult from_file = run_cli({"status", "--config", file.string()});
    EXPECT_EQ(from_file.exit_code, 78) << describe(from_file);
    EXPECT_EQ(from_file.err.find(secret), std::string::npos) << from_file.err;
  }
}

// The command gets the lock, not the credentials of the lock's nodes.
TEST(HostileAddress, RunHidesThePasswordVariablesFromTheCommand) {
  RedisServerOptions options;
  options.extra_arguments = {"--requirepass", "node-secret"};
  RedisServer server(options);
  TempDir work;
  const auto file = work / "q.toml";
  write_text(file, "[[node]]\naddress = \"" + server.address() +
                       "\"\npassword_env = \"REDLOCK_TEST_NODE_PASSWORD\"\n");
  CliOptions environment;
  environment.environment = {{"REDLOCK_TEST_NODE_PASSWORD", "node-secret"},
                             {"REDLOCK_TEST_OTHER", "kept"}};
  const CliResult result =
      run_cli({"run", "--config", file.string(), "--resource", "r", "--", "sh", "-c",
               "echo \"password=${REDLOCK_TEST_NODE_PASSWORD-unset} "
               "other=${REDLOCK_TEST_OTHER-unset}\""},
              environment);
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(result.out, "password=unset other=kept\n") << describe(result);
}

// ttl 1..3 leave no validity after the default drift (ceil(ttl / 100) + 2
// ms): the file refuses them, and so does the command line, before asking
// any node.
TEST(CliTtl, ATtlThatCanNeverGiveALockIsAUsageError) {
  const std::vector<std::vector<std::string>> invocations = {
      {"acquire", "--node", "127.0.0.1:1", "--resource", "r", "--ttl", "1"},
      {"acquire", "--node", "127.0.0.1:1", "--resource", "r", "--ttl", "3"},
      {"extend", "--node", "127.0.0.1:1", "--resource", "r", "--value", "v", "--ttl", "2"},
      {"run", "--node", "127.0.0.1:1", "--resource", "r", "--ttl", "3", "--", "true"},
  };
  for (const auto& arguments : invocations) {
    const CliResult result = run_cli(arguments);
    EXPECT_EQ(result.exit_code, 64) << describe(result);
    EXPECT_NE(result.err.find("can never give a valid lock"), std::string::npos) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }
  const CliResult four =
      run_cli({"acquire", "--node", "127.0.0.1:1", "--resource", "r", "--ttl", "4", "--wait", "0"});
  EXPECT_EQ(four.exit_code, 75) << describe(four);
}

// Whether "localhost" names 127.0.0.1 alone on this machine.
bool localhost_is_only_ipv4_loopback() {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo("localhost", "6379", &hints, &found) != 0) return false;
  bool only = found != nullptr;
  for (const addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    only = only && entry->ai_family == AF_INET &&
           reinterpret_cast<const sockaddr_in*>(entry->ai_addr)->sin_addr.s_addr ==
               htonl(INADDR_LOOPBACK);
  }
  ::freeaddrinfo(found);
  return only;
}

// Two spellings the parser cannot tell apart as one server (a host name
// and its address): status says they are one, by the node's run_id.
TEST(HostileAddress, StatusReportsOneServerNamedTwice) {
  if (!localhost_is_only_ipv4_loopback()) GTEST_SKIP() << "localhost is not 127.0.0.1 alone here";
  RedisServer server;
  const std::string by_address = server.address();
  const std::string by_name = "localhost:" + std::to_string(server.port());
  RedisServer other;
  const CliResult result = run_cli(
      {"status", "--json", "--node", by_address, "--node", other.address(), "--node", by_name});
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.find("status: warning: node " + by_name + " is the same server as node " +
                            by_address),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("counts as one master, not two; next step: "
                            "docs/operations.md#how-many-nodes-and-where"),
            std::string::npos)
      << result.err;
  const JsonValue json = parse_output(result);
  const JsonValue& nodes = json["nodes"];
  ASSERT_EQ(nodes.items.size(), 3U);
  EXPECT_TRUE(nodes.items[0]["same_server_as"].is_null());
  EXPECT_TRUE(nodes.items[1]["same_server_as"].is_null());
  EXPECT_EQ(nodes.items[2]["same_server_as"].text, by_address);
  EXPECT_EQ(nodes.items[2]["run_id"].text, nodes.items[0]["run_id"].text);
  EXPECT_NE(nodes.items[1]["run_id"].text, nodes.items[0]["run_id"].text);
}

}  // namespace
}  // namespace redlock::test
