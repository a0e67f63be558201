#include "peer_settings.hpp"

#include <unistd.h>

#include <charconv>
#include <map>
#include <string_view>

namespace redlock::bench::peers {

namespace {

std::optional<std::uint64_t> parse_count(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_seconds(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value <= 0) return std::nullopt;
  return value;
}

std::optional<BenchNode> parse_node(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  const std::optional<std::uint64_t> port = parse_count(text.substr(colon + 1));
  if (!port || *port == 0 || *port > 65535) return std::nullopt;
  return BenchNode{std::string(text.substr(0, colon)), static_cast<std::uint16_t>(*port)};
}

std::optional<std::vector<BenchNode>> parse_nodes(std::string_view list) {
  std::vector<BenchNode> nodes;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    if (!item.empty()) {
      std::optional<BenchNode> node = parse_node(item);
      if (!node) return std::nullopt;
      nodes.push_back(std::move(*node));
    }
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  if (nodes.empty()) return std::nullopt;
  return nodes;
}

// Applies one --name value pair; false when the value does not fit the name.
bool apply(PeerSettings& settings, std::string_view name, std::string_view value) {
  if (name == "impl") {
    static const std::map<std::string_view, Impl> impls = {
        {"ours", Impl::ours},
        {"ours-at-majority", Impl::ours_at_majority},
        {"ours-fair", Impl::ours_fair},
        {"floor", Impl::floor}};
    const auto found = impls.find(value);
    if (found == impls.end()) return false;
    settings.impl = found->second;
    return true;
  }
  if (name == "case") {
    static const std::map<std::string_view, Case> cases = {
        {"latency", Case::latency}, {"inflight", Case::inflight}, {"contended", Case::contended}};
    const auto found = cases.find(value);
    if (found == cases.end()) return false;
    settings.run_case = found->second;
    return true;
  }
  if (name == "nodes") {
    std::optional<std::vector<BenchNode>> nodes = parse_nodes(value);
    if (nodes) settings.nodes = std::move(*nodes);
    return nodes.has_value();
  }
  if (name == "prefix") {
    settings.prefix = std::string(value);
    return !value.empty();
  }
  if (name == "seconds") {
    const std::optional<double> seconds = parse_seconds(value);
    if (seconds) settings.seconds = *seconds;
    return seconds.has_value();
  }
  const std::optional<std::uint64_t> count = parse_count(value);
  if (!count) return false;
  if (name == "cycles") settings.cycles = *count;
  if (name == "warmup") settings.warmup = *count;
  if (name == "width") settings.width = static_cast<std::size_t>(*count);
  if (name == "workers") settings.workers = static_cast<std::size_t>(*count);
  if (name == "clients") settings.clients = static_cast<std::size_t>(*count);
  if (name == "node-timeout-ms") {
    settings.node_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(*count));
  }
  return name == "cycles" || name == "warmup" || name == "node-timeout-ms" || name == "clients" ||
         ((name == "width" || name == "workers") && *count > 0);
}

}  // namespace

SettingsResult parse_settings(int argc, char** argv) {
  PeerSettings settings;
  settings.prefix = "peers:cpp:" + std::to_string(::getpid());
  for (int i = 1; i < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (!flag.starts_with("--") || i + 1 >= argc) {
      return {std::nullopt, "bad argument '" + std::string(flag) + "'"};
    }
    if (!apply(settings, flag.substr(2), argv[i + 1])) {
      return {std::nullopt, "bad value for " + std::string(flag) + ": '" + argv[i + 1] + "'"};
    }
  }
  if (settings.nodes.empty()) return {std::nullopt, "--nodes host:port,... is required"};
  if (settings.impl == Impl::floor && settings.run_case == Case::contended) {
    return {std::nullopt, "the floor has no contended case"};
  }
  return {std::move(settings), {}};
}

const char* impl_name(Impl impl) noexcept {
  switch (impl) {
    case Impl::ours:
      return "redlock";
    case Impl::ours_at_majority:
      return "redlock-at-majority";
    case Impl::ours_fair:
      return "redlock-fair";
    case Impl::floor:
      return "floor";
  }
  return "?";
}

const char* case_name(Case run_case) noexcept {
  switch (run_case) {
    case Case::latency:
      return "latency";
    case Case::inflight:
      return "inflight";
    case Case::contended:
      return "contended";
  }
  return "?";
}

ConfigResult client_config(const PeerSettings& settings) {
  std::vector<std::string> addresses;
  for (const BenchNode& node : settings.nodes) addresses.push_back(node.address());
  ConfigResult config = config_from_addresses(addresses);
  if (!config.ok()) return config;
  config.config->lock.ttl = kTtl;
  config.config->lock.node_timeout = settings.node_timeout;
  config.config->lock.release_at_majority = settings.impl == Impl::ours_at_majority;
  // ours-fair: every waiter waits in line (docs/algorithm.md, "Fair locks").
  config.config->lock.fair = settings.impl == Impl::ours_fair;
  return config;
}

AcquireOptions uncontended_acquire() {
  AcquireOptions options;
  options.ttl = kTtl;
  options.retry_count = 0;
  return options;
}

AcquireOptions contended_acquire() {
  AcquireOptions options;
  options.ttl = kTtl;
  options.retry_count = -1;
  options.retry_delay = kContendedRetryDelay;
  options.wait = kContendedWaitBound;
  return options;
}

}  // namespace redlock::bench::peers
