#include "bench_nodes.hpp"

#include <hiredis/hiredis.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "redis_fixture.hpp"
#include "test_certificates.hpp"

namespace redlock::bench {

namespace {

constexpr std::size_t kStartedNodes = 5;

BenchNode parse_node(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    throw std::runtime_error("REDLOCK_BENCH_NODES: expected host:port, got '" + std::string(text) +
                             "'");
  }
  BenchNode node;
  node.host = std::string(text.substr(0, colon));
  const std::string_view port = text.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) {
    throw std::runtime_error("REDLOCK_BENCH_NODES: bad port in '" + std::string(text) + "'");
  }
  node.port = static_cast<std::uint16_t>(value);
  return node;
}

std::vector<BenchNode> nodes_from_environment(std::string_view list) {
  std::vector<BenchNode> nodes;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    if (!item.empty()) nodes.push_back(parse_node(item));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  if (nodes.empty()) throw std::runtime_error("REDLOCK_BENCH_NODES names no node");
  return nodes;
}

// INFO's process_id of a node, when that process is a redis-server on this
// machine (a node in a container reports a pid of its own namespace); 0
// otherwise.
int local_pid(const BenchNode& node) {
  const timeval timeout{2, 0};
  redisContext* context = redisConnectWithTimeout(node.host.c_str(), node.port, timeout);
  int pid = 0;
  if (context != nullptr && context->err == 0) {
    auto* reply = static_cast<redisReply*>(redisCommand(context, "INFO server"));
    if (reply != nullptr && reply->type == REDIS_REPLY_STRING) {
      const std::string_view info(reply->str, reply->len);
      const std::size_t at = info.find("process_id:");
      if (at != std::string_view::npos) {
        const char* first = info.data() + at + 11;
        std::from_chars(first, info.data() + info.size(), pid);
      }
    }
    freeReplyObject(reply);
  }
  redisFree(context);
  if (pid <= 0) return 0;
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name.rfind("redis-server", 0) == 0 ? pid : 0;
}

}  // namespace

std::vector<BenchNode> started_nodes(std::size_t count) {
  // One cluster per count asked for, started on first use; stopped by the
  // fixture's destructor at exit.
  static std::map<std::size_t, std::unique_ptr<test::RedisCluster>> clusters;
  std::unique_ptr<test::RedisCluster>& cluster = clusters[count];
  if (!cluster) cluster = std::make_unique<test::RedisCluster>(count);
  std::vector<BenchNode> nodes;
  for (std::size_t i = 0; i < cluster->size(); ++i) {
    nodes.push_back(BenchNode{"127.0.0.1", cluster->node(i).port(), cluster->node(i).pid()});
  }
  return nodes;
}

std::string BenchNode::address() const { return host + ":" + std::to_string(port); }

const char* transport_name(Transport transport) noexcept {
  switch (transport) {
    case Transport::tcp:
      return "tcp";
    case Transport::tls:
      return "tls";
    case Transport::unix_socket:
      return "unix";
  }
  return "?";
}

namespace {

test::RedisCluster& transport_cluster() {
  static const std::unique_ptr<test::RedisCluster> cluster = [] {
    const test::TestCertificates& certs = test::TestCertificates::shared();
    test::RedisServerOptions options;
    options.tls = test::TlsServerOptions{certs.server_cert(), certs.server_key(), certs.ca_file()};
    options.unix_socket = true;
    return std::make_unique<test::RedisCluster>(
        std::vector<test::RedisServerOptions>(kStartedNodes, options));
  }();
  return *cluster;
}

}  // namespace

const std::vector<BenchNode>& transport_nodes() {
  static const std::vector<BenchNode> nodes = [] {
    test::RedisCluster& cluster = transport_cluster();
    std::vector<BenchNode> started;
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      started.push_back(BenchNode{"127.0.0.1", cluster.node(i).port(), cluster.node(i).pid()});
    }
    return started;
  }();
  return nodes;
}

std::vector<std::string> transport_addresses(Transport transport) {
  test::RedisCluster& cluster = transport_cluster();
  std::vector<std::string> addresses;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    const test::RedisServer& node = cluster.node(i);
    addresses.push_back(transport == Transport::tcp   ? node.address()
                        : transport == Transport::tls ? node.tls_address()
                                                      : node.unix_address());
  }
  return addresses;
}

std::string transport_ca_file() { return test::TestCertificates::shared().ca_file(); }

const std::vector<BenchNode>& bench_nodes() {
  static const std::vector<BenchNode> nodes = [] {
    const char* list = std::getenv("REDLOCK_BENCH_NODES");
    if (list == nullptr || *list == '\0') return started_nodes(kStartedNodes);
    std::vector<BenchNode> listed = nodes_from_environment(list);
    for (BenchNode& node : listed) node.pid = local_pid(node);
    return listed;
  }();
  return nodes;
}

std::optional<double> node_cpu_seconds(const std::vector<BenchNode>& nodes) {
  static const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
  double total = 0;
  for (const BenchNode& node : nodes) {
    if (node.pid <= 0) return std::nullopt;
    std::ifstream file("/proc/" + std::to_string(node.pid) + "/stat");
    std::string stat;
    if (!std::getline(file, stat)) return std::nullopt;
    // Fields 14 and 15 (utime, stime) count from the one after the command
    // name, which ends at the last ')'.
    const std::size_t name_end = stat.rfind(')');
    if (name_end == std::string::npos) return std::nullopt;
    std::istringstream fields(stat.substr(name_end + 2));
    std::string field;
    double utime = 0;
    double stime = 0;
    for (int index = 3; index <= 15 && fields >> field; ++index) {
      if (index == 14) utime = std::strtod(field.c_str(), nullptr);
      if (index == 15) stime = std::strtod(field.c_str(), nullptr);
    }
    total += (utime + stime) / ticks_per_second;
  }
  return total;
}

}  // namespace redlock::bench
