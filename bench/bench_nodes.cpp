#include "bench_nodes.hpp"

#include <charconv>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "redis_fixture.hpp"

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

}  // namespace

std::vector<BenchNode> started_nodes(std::size_t count) {
  // One cluster per count asked for, started on first use; stopped by the
  // fixture's destructor at exit.
  static std::map<std::size_t, std::unique_ptr<test::RedisCluster>> clusters;
  std::unique_ptr<test::RedisCluster>& cluster = clusters[count];
  if (!cluster) cluster = std::make_unique<test::RedisCluster>(count);
  std::vector<BenchNode> nodes;
  for (std::size_t i = 0; i < cluster->size(); ++i) {
    nodes.push_back(BenchNode{"127.0.0.1", cluster->node(i).port()});
  }
  return nodes;
}

std::string BenchNode::address() const { return host + ":" + std::to_string(port); }

const std::vector<BenchNode>& bench_nodes() {
  static const std::vector<BenchNode> nodes = [] {
    const char* list = std::getenv("REDLOCK_BENCH_NODES");
    return list != nullptr && *list != '\0' ? nodes_from_environment(list)
                                            : started_nodes(kStartedNodes);
  }();
  return nodes;
}

}  // namespace redlock::bench
