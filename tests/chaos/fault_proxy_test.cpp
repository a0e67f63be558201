// The fault proxy against real redis-server processes on loopback: every
// mode of a link, the target going away and coming back, the buffer bound
// and teardown with traffic in flight.
#include "fault_proxy.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "redis_fixture.hpp"
#include "redis_probe.hpp"

namespace redlock::chaos {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Upper bounds that only prove the absence of a hang.
constexpr milliseconds kGenerous{10000};
// How long a test looks for bytes that must not arrive.
constexpr milliseconds kQuietWindow{150};
constexpr milliseconds kShortHiredisTimeout{300};

const std::string kPing = "*1\r\n$4\r\nPING\r\n";
const std::string kPong = "+PONG\r\n";
const std::string kIncr = "*2\r\n$4\r\nINCR\r\n$7\r\ncounter\r\n";

// `count` INCRs of "counter" in one send, and the replies they get from a
// fresh node, in order.
struct Increments {
  std::string commands;
  std::string replies;
};
Increments increments(int count) {
  Increments out;
  for (int i = 1; i <= count; ++i) {
    out.commands += kIncr;
    out.replies += ":" + std::to_string(i) + "\r\n";
  }
  return out;
}

std::string set_command(const std::string& key, const std::string& value) {
  return "*3\r\n$3\r\nSET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n$" +
         std::to_string(value.size()) + "\r\n" + value + "\r\n";
}

// The node's connected_clients (its inspection client included), or -1.
int connected_clients(test::RedisProbe& direct) {
  const auto info = direct.info("clients");
  if (!info) return -1;
  const auto field = test::info_field(*info, "connected_clients");
  return field ? std::stoi(*field) : -1;
}

template <typename Predicate>
bool wait_until(Predicate predicate, milliseconds timeout = kGenerous) {
  const auto deadline = Clock::now() + timeout;
  while (!predicate()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

milliseconds elapsed_since(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

struct ReadResult {
  std::string bytes;
  bool closed = false;  // EOF or a socket error
  int error = 0;        // errno of that error; 0 for EOF
};

// A plain blocking TCP client, so a test controls exactly when it connects,
// what it sends, and sees a reset as ECONNRESET.
class RawClient {
 public:
  explicit RawClient(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  [[nodiscard]] bool connected() const { return fd_ >= 0; }

  // False when the socket is gone or the peer reset it.
  [[nodiscard]] bool send(std::string_view bytes) const {
    while (!bytes.empty()) {
      const ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent < 0) {
        if (errno == EINTR) continue;
        return false;
      }
      bytes.remove_prefix(static_cast<std::size_t>(sent));
    }
    return true;
  }

  // Reads until `size` bytes arrived, the connection ended, or `timeout`.
  ReadResult read(std::size_t size, milliseconds timeout) {
    ReadResult result;
    const auto deadline = Clock::now() + timeout;
    while (result.bytes.size() < size) {
      const auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) break;
      pollfd readable{fd_, POLLIN, 0};
      const int ready = ::poll(&readable, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) break;
      char buffer[4096];
      const ssize_t received = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (received > 0) {
        result.bytes.append(buffer, static_cast<std::size_t>(received));
      } else if (received == 0) {
        result.closed = true;
        break;
      } else if (errno != EINTR && errno != EAGAIN) {
        result.closed = true;
        result.error = errno;
        break;
      }
    }
    return result;
  }

  // Reads until the connection ends (or `timeout`).
  ReadResult read_until_closed(milliseconds timeout = kGenerous) {
    return read(std::numeric_limits<std::size_t>::max(), timeout);
  }

 private:
  int fd_ = -1;
};

// True when a fresh connection through `port` gets PONG for PING.
bool ping_through(std::uint16_t port) {
  RawClient client(port);
  return client.connected() && client.send(kPing) &&
         client.read(kPong.size(), kGenerous).bytes == kPong;
}

class FaultProxyTest : public ::testing::Test {
 protected:
  void SetUp() override { add_link_to(server_, link_, port_); }

  void add_link_to(const test::RedisServer& server, FaultProxy::LinkId& id, std::uint16_t& port) {
    const std::error_code error = proxy_->add_link("client-n" + std::to_string(server.port()),
                                                   "127.0.0.1", server.port(), id, port);
    ASSERT_FALSE(error) << error.message();
    ASSERT_NE(port, 0);
  }

  [[nodiscard]] ProxyStats stats() const { return proxy_->stats(link_); }

  // Waits until the proxy keeps at least `bytes` bytes for the link.
  bool wait_until_buffered(std::uint64_t bytes) {
    return wait_until([&] { return stats().bytes_buffered >= bytes; });
  }

  test::RedisServer server_;
  std::unique_ptr<FaultProxy> proxy_ = std::make_unique<FaultProxy>();
  FaultProxy::LinkId link_ = 0;
  std::uint16_t port_ = 0;
};

using FaultProxyPass = FaultProxyTest;

TEST_F(FaultProxyPass, ForwardsCommandsToTheTargetAndRepliesBack) {
  test::RedisProbe through_proxy(port_);
  EXPECT_TRUE(through_proxy.ping());
  EXPECT_TRUE(through_proxy.set("chaos-key", "chaos-value"));
  EXPECT_EQ(through_proxy.get("chaos-key"), "chaos-value");
  // The write reached the real node, not something else.
  EXPECT_EQ(server_.probe().get("chaos-key"), "chaos-value");
}

TEST_F(FaultProxyPass, ForwardsLargeValuesIntact) {
  std::string value(4u << 20, '\0');
  for (std::size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>('a' + i % 26);
  test::RedisProbe through_proxy(port_, kGenerous);
  ASSERT_TRUE(through_proxy.set("large", value));
  EXPECT_EQ(through_proxy.get("large"), value);
}

TEST_F(FaultProxyPass, CountsConnectionsAndForwardedBytes) {
  ASSERT_TRUE(ping_through(port_));
  ASSERT_TRUE(ping_through(port_));
  const ProxyStats counted = stats();
  EXPECT_EQ(counted.connections_accepted, 2u);
  EXPECT_EQ(counted.bytes_forwarded, 2 * (kPing.size() + kPong.size()));
  EXPECT_EQ(counted.connections_reset, 0u);
  EXPECT_EQ(counted.bytes_dropped, 0u);
  EXPECT_EQ(counted.overflows, 0u);
}

TEST_F(FaultProxyPass, LinksAreIndependent) {
  test::RedisServer other;
  FaultProxy::LinkId other_link = 0;
  std::uint16_t other_port = 0;
  add_link_to(other, other_link, other_port);
  ASSERT_NE(other_link, link_);
  ASSERT_NE(other_port, port_);

  proxy_->set_mode(link_, Direction::both, LinkMode::reset);
  EXPECT_TRUE(ping_through(other_port));
  EXPECT_EQ(proxy_->stats(other_link).connections_reset, 0u);
}

TEST(FaultProxyLinks, RejectsATargetThatIsNotAnAddress) {
  FaultProxy proxy;
  FaultProxy::LinkId id = 0;
  std::uint16_t port = 0;
  EXPECT_TRUE(proxy.add_link("bad", "not an address", 6379, id, port));
}

TEST(FaultProxyLinks, NamesEveryMode) {
  EXPECT_STREQ(to_string(LinkMode::pass), "pass");
  EXPECT_STREQ(to_string(LinkMode::delay), "delay");
  EXPECT_STREQ(to_string(LinkMode::blackhole), "blackhole");
  EXPECT_STREQ(to_string(LinkMode::hold), "hold");
  EXPECT_STREQ(to_string(LinkMode::reset), "reset");
  EXPECT_STREQ(to_string(LinkMode::timeout), "timeout");
}

using FaultProxyDelay = FaultProxyTest;

TEST_F(FaultProxyDelay, EachDirectionAddsAtLeastItsDelay) {
  constexpr milliseconds kDelay{150};
  proxy_->set_mode(link_, Direction::both, LinkMode::delay, kDelay);
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  const auto sent_at = Clock::now();
  ASSERT_TRUE(client.send(kPing));
  EXPECT_EQ(client.read(kPong.size(), kGenerous).bytes, kPong);
  const milliseconds round_trip = elapsed_since(sent_at);
  EXPECT_GE(round_trip, 2 * kDelay);
  EXPECT_LT(round_trip, kGenerous);
}

TEST_F(FaultProxyDelay, KeepsByteOrder) {
  proxy_->set_mode(link_, Direction::both, LinkMode::delay, milliseconds(20));
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  const Increments sent = increments(50);
  ASSERT_TRUE(client.send(sent.commands));
  EXPECT_EQ(client.read(sent.replies.size(), kGenerous).bytes, sent.replies);
}

using FaultProxyBlackhole = FaultProxyTest;

TEST_F(FaultProxyBlackhole, UpKeepsCommandsUntilTheHealThenDeliversThemInOrder) {
  proxy_->set_mode(link_, Direction::up, LinkMode::blackhole);
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  const Increments sent = increments(50);
  ASSERT_TRUE(client.send(sent.commands));
  // Every command is in the proxy...
  ASSERT_TRUE(wait_until_buffered(sent.commands.size()));
  // ...and none of it got through: no reply, and the node saw nothing.
  const ReadResult during = client.read(sent.replies.size(), kQuietWindow);
  EXPECT_TRUE(during.bytes.empty());
  EXPECT_FALSE(during.closed);
  EXPECT_FALSE(server_.probe().exists("counter"));
  EXPECT_EQ(stats().bytes_forwarded, 0u);

  proxy_->set_mode(link_, Direction::up, LinkMode::pass);
  // Complete and in order: the node ran the 50 INCRs one after the other.
  EXPECT_EQ(client.read(sent.replies.size(), kGenerous).bytes, sent.replies);
  EXPECT_EQ(server_.probe().get("counter"), "50");
  const ProxyStats counted = stats();
  EXPECT_EQ(counted.bytes_dropped, 0u);
  EXPECT_EQ(counted.bytes_buffered, 0u);
  EXPECT_EQ(counted.connections_reset, 0u);
}

TEST_F(FaultProxyBlackhole, DownKeepsRepliesSoLaterRepliesStillMatchTheirRequests) {
  proxy_->set_mode(link_, Direction::down, LinkMode::blackhole);
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  const Increments sent = increments(50);
  ASSERT_TRUE(client.send(sent.commands));
  // The node answered every command; the proxy keeps the answers.
  ASSERT_TRUE(wait_until([&] { return server_.probe().get("counter") == "50"; }));
  ASSERT_TRUE(wait_until_buffered(sent.replies.size()));
  const ReadResult during = client.read(sent.replies.size(), kQuietWindow);
  EXPECT_TRUE(during.bytes.empty());
  EXPECT_FALSE(during.closed);

  proxy_->set_mode(link_, Direction::down, LinkMode::pass);
  EXPECT_EQ(client.read(sent.replies.size(), kGenerous).bytes, sent.replies);
  // A command after the heal gets its own reply, not an earlier one's.
  ASSERT_TRUE(client.send(kPing));
  EXPECT_EQ(client.read(kPong.size(), kGenerous).bytes, kPong);
  EXPECT_EQ(stats().bytes_dropped, 0u);
}

TEST_F(FaultProxyBlackhole, StopsReadingAtTheBoundInsteadOfResetting) {
  constexpr std::size_t kBound = 1024;
  proxy_ = std::make_unique<FaultProxy>(kBound);
  add_link_to(server_, link_, port_);
  proxy_->set_mode(link_, Direction::up, LinkMode::blackhole);
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  // Far more than the bound, but little enough for the kernel's socket
  // buffers, so the send completes while the proxy reads nothing more.
  std::string value(64 * kBound, '\0');
  for (std::size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>('a' + i % 26);
  ASSERT_TRUE(client.send(set_command("big", value)));

  ASSERT_TRUE(wait_until_buffered(kBound));
  const ReadResult during = client.read(1, kQuietWindow);
  EXPECT_TRUE(during.bytes.empty());
  EXPECT_FALSE(during.closed);
  ProxyStats counted = stats();
  EXPECT_EQ(counted.bytes_buffered, kBound) << "the proxy keeps exactly the bound, no more";
  EXPECT_EQ(counted.overflows, 0u);
  EXPECT_EQ(counted.connections_reset, 0u);
  EXPECT_FALSE(server_.probe().exists("big"));

  proxy_->set_mode(link_, Direction::up, LinkMode::pass);
  EXPECT_EQ(client.read(5, kGenerous).bytes, "+OK\r\n");
  EXPECT_EQ(server_.probe().get("big"), value);
  counted = stats();
  EXPECT_EQ(counted.bytes_buffered, 0u);
  EXPECT_EQ(counted.connections_reset, 0u);
}

TEST_F(FaultProxyBlackhole, TheTargetClosingIsSeenOnlyAfterTheHeal) {
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.send(kPing));
  ASSERT_EQ(client.read(kPong.size(), kGenerous).bytes, kPong);

  proxy_->set_mode(link_, Direction::down, LinkMode::blackhole);
  server_.kill9();
  // The end of the node's stream cannot cross the partition either.
  const ReadResult during = client.read(1, kQuietWindow);
  EXPECT_TRUE(during.bytes.empty());
  EXPECT_FALSE(during.closed);

  proxy_->set_mode(link_, Direction::down, LinkMode::pass);
  EXPECT_TRUE(client.read_until_closed().closed);
}

using FaultProxyHold = FaultProxyTest;

TEST_F(FaultProxyHold, DownKeepsTheReplyUntilPass) {
  proxy_->set_mode(link_, Direction::down, LinkMode::hold);
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.send(kPing));
  // The node has answered and the proxy keeps the answer...
  ASSERT_TRUE(wait_until_buffered(kPong.size()));
  // ...which the client does not get.
  const ReadResult while_held = client.read(kPong.size(), kQuietWindow);
  EXPECT_TRUE(while_held.bytes.empty());
  EXPECT_FALSE(while_held.closed);

  proxy_->set_mode(link_, Direction::down, LinkMode::pass);
  EXPECT_EQ(client.read(kPong.size(), kGenerous).bytes, kPong);
  EXPECT_EQ(stats().bytes_buffered, 0u);
}

TEST_F(FaultProxyHold, HeldBytesAreDelayedFromTheChange) {
  constexpr milliseconds kDelay{200};
  proxy_->set_mode(link_, Direction::up, LinkMode::hold);
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.send(kPing));
  ASSERT_TRUE(wait_until_buffered(kPing.size()));
  // Held for longer than the delay: a delay counted from arrival instead of
  // from the change would send the bytes at once.
  std::this_thread::sleep_for(kDelay);

  const auto changed_at = Clock::now();
  proxy_->set_mode(link_, Direction::up, LinkMode::delay, kDelay);
  EXPECT_EQ(client.read(kPong.size(), kGenerous).bytes, kPong);
  EXPECT_GE(elapsed_since(changed_at), kDelay);
}

TEST_F(FaultProxyHold, BlackholeKeepsHeldBytesUntilTheHeal) {
  proxy_->set_mode(link_, Direction::down, LinkMode::hold);
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.send(kPing));
  ASSERT_TRUE(wait_until_buffered(kPong.size()));

  proxy_->set_mode(link_, Direction::down, LinkMode::blackhole);
  EXPECT_EQ(stats().bytes_buffered, kPong.size());
  EXPECT_EQ(stats().bytes_dropped, 0u);
  EXPECT_TRUE(client.read(kPong.size(), kQuietWindow).bytes.empty());

  proxy_->set_mode(link_, Direction::down, LinkMode::pass);
  EXPECT_EQ(client.read(kPong.size(), kGenerous).bytes, kPong);
  // The next command gets exactly its own reply.
  ASSERT_TRUE(client.send(kPing));
  EXPECT_EQ(client.read(kPong.size(), kGenerous).bytes, kPong);
}

TEST_F(FaultProxyHold, OverTheBoundResetsTheConnection) {
  constexpr std::size_t kBound = 1024;
  proxy_ = std::make_unique<FaultProxy>(kBound);
  add_link_to(server_, link_, port_);
  proxy_->set_mode(link_, Direction::up, LinkMode::hold);
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  // Sending may already fail when the reset comes first.
  static_cast<void>(client.send(set_command("big", std::string(4 * kBound, 'x'))));

  const ReadResult result = client.read_until_closed();
  EXPECT_TRUE(result.closed);
  EXPECT_EQ(result.error, ECONNRESET);
  const ProxyStats counted = stats();
  EXPECT_EQ(counted.overflows, 1u);
  EXPECT_EQ(counted.connections_reset, 1u);
  EXPECT_EQ(counted.bytes_buffered, 0u);
  EXPECT_FALSE(server_.probe().exists("big"));
}

using FaultProxyReset = FaultProxyTest;

TEST_F(FaultProxyReset, EstablishedConnectionsSeeAReset) {
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.send(kPing));
  ASSERT_EQ(client.read(kPong.size(), kGenerous).bytes, kPong);

  proxy_->set_mode(link_, Direction::up, LinkMode::reset);
  const ReadResult result = client.read_until_closed();
  EXPECT_TRUE(result.closed);
  EXPECT_EQ(result.error, ECONNRESET);
  EXPECT_EQ(stats().connections_reset, 1u);
}

TEST_F(FaultProxyReset, NewConnectionsAreResetUntilPass) {
  proxy_->set_mode(link_, Direction::down, LinkMode::reset);
  {
    // The kernel completes the handshake; the proxy then resets at once.
    RawClient client(port_);
    if (client.connected()) {
      static_cast<void>(client.send(kPing));  // the reset may come first
      const ReadResult result = client.read_until_closed();
      EXPECT_TRUE(result.closed);
      EXPECT_TRUE(result.bytes.empty());
    }
  }
  EXPECT_TRUE(wait_until([&] { return stats().connections_reset >= 1; }));

  proxy_->set_mode(link_, Direction::down, LinkMode::pass);
  EXPECT_TRUE(ping_through(port_));
}

using FaultProxyTimeout = FaultProxyTest;

TEST_F(FaultProxyTimeout, KeepsBytesBackThenResetsBothSidesWhenItEnds) {
  test::RedisProbe direct = server_.probe();
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.send(kPing));
  ASSERT_EQ(client.read(kPong.size(), kGenerous).bytes, kPong);
  ASSERT_EQ(connected_clients(direct), 2);  // the inspection client and the proxy

  proxy_->set_mode(link_, Direction::up, LinkMode::timeout);
  const std::string command = set_command("lost", "value");
  ASSERT_TRUE(client.send(command));
  ASSERT_TRUE(wait_until_buffered(command.size()));
  // While it lasts nothing gets through and the connection stays open.
  const ReadResult during = client.read(1, kQuietWindow);
  EXPECT_TRUE(during.bytes.empty());
  EXPECT_FALSE(during.closed);
  EXPECT_FALSE(direct.exists("lost"));

  proxy_->set_mode(link_, Direction::up, LinkMode::pass);
  const ReadResult after = client.read_until_closed();
  EXPECT_TRUE(after.closed);
  EXPECT_EQ(after.error, ECONNRESET);
  // The node's side is gone too, and what was kept never reached it.
  EXPECT_TRUE(wait_until([&] { return connected_clients(direct) == 1; }));
  EXPECT_FALSE(direct.exists("lost"));
  const ProxyStats counted = stats();
  EXPECT_EQ(counted.connections_reset, 1u);
  EXPECT_EQ(counted.bytes_dropped, command.size());
  EXPECT_EQ(counted.bytes_buffered, 0u);
  // Connections after the timeout get the new mode.
  EXPECT_TRUE(ping_through(port_));
}

TEST_F(FaultProxyTimeout, ConnectionsOpenedWhileItLastsAreResetToo) {
  proxy_->set_mode(link_, Direction::down, LinkMode::timeout);
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.send(kPing));
  ASSERT_TRUE(wait_until_buffered(kPong.size()));
  EXPECT_TRUE(client.read(kPong.size(), kQuietWindow).bytes.empty());

  proxy_->set_mode(link_, Direction::down, LinkMode::pass);
  const ReadResult after = client.read_until_closed();
  EXPECT_TRUE(after.closed);
  EXPECT_TRUE(after.bytes.empty()) << "the kept reply is discarded, not delivered";
  EXPECT_EQ(after.error, ECONNRESET);
  EXPECT_EQ(stats().connections_reset, 1u);
}

TEST_F(FaultProxyTimeout, SettingTheTimeoutAgainDoesNotEndIt) {
  proxy_->set_mode(link_, Direction::both, LinkMode::timeout);
  RawClient client(port_);
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.send(kPing));
  ASSERT_TRUE(wait_until_buffered(kPing.size()));

  proxy_->set_mode(link_, Direction::up, LinkMode::timeout);
  const ReadResult during = client.read(1, kQuietWindow);
  EXPECT_FALSE(during.closed);
  EXPECT_EQ(stats().connections_reset, 0u);
  EXPECT_EQ(stats().bytes_buffered, kPing.size());
}

using FaultProxyTarget = FaultProxyTest;

TEST_F(FaultProxyTarget, KilledThenRestartedOnTheSamePortWorksAgain) {
  RawClient established(port_);
  ASSERT_TRUE(established.connected());
  ASSERT_TRUE(established.send(kPing));
  ASSERT_EQ(established.read(kPong.size(), kGenerous).bytes, kPong);

  const std::uint16_t node_port = server_.port();
  server_.kill9();
  // The node's end closed, so the proxy closes the client's end.
  EXPECT_TRUE(established.read_until_closed().closed);
  // With the node down a new connection fails instead of hanging.
  {
    RawClient while_down(port_);
    if (while_down.connected()) {
      static_cast<void>(while_down.send(kPing));  // the reset may come first
      const ReadResult result = while_down.read_until_closed();
      EXPECT_TRUE(result.closed);
      EXPECT_TRUE(result.bytes.empty());
    }
  }

  server_.restart();
  ASSERT_EQ(server_.port(), node_port);
  EXPECT_TRUE(ping_through(port_));
}

TEST(FaultProxyLifetime, DestroyingWithOpenConnectionsAndHeldBytesReturnsPromptly) {
  test::RedisServer server;
  auto proxy = std::make_unique<FaultProxy>();
  FaultProxy::LinkId link = 0;
  std::uint16_t port = 0;
  ASSERT_FALSE(proxy->add_link("client-n1", "127.0.0.1", server.port(), link, port));
  proxy->set_mode(link, Direction::down, LinkMode::hold);
  RawClient first(port);
  RawClient second(port);
  ASSERT_TRUE(first.connected() && second.connected());
  ASSERT_TRUE(first.send(kPing) && second.send(kPing));
  ASSERT_TRUE(wait_until([&] { return proxy->stats(link).bytes_buffered >= 2 * kPong.size(); }));

  const auto destroying_at = Clock::now();
  proxy.reset();
  EXPECT_LT(elapsed_since(destroying_at), kGenerous);
  EXPECT_TRUE(first.read_until_closed().closed);
  EXPECT_TRUE(second.read_until_closed().closed);
}

}  // namespace
}  // namespace redlock::chaos
