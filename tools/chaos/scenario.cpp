#include "scenario.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <sstream>
#include <utility>

#include "config/config_prescan.hpp"
#include "config/config_reader.hpp"

namespace redlock::chaos {
namespace {

using detail::ConfigReader;
using detail::IntegerRule;
using detail::NumberRule;

constexpr IntegerRule kDuration{0, 3'600'000, "a non-negative integer (milliseconds)"};
constexpr IntegerRule kPositiveDuration{1, 3'600'000, "a positive integer (milliseconds)"};
constexpr IntegerRule kSignedDuration{-3'600'000, 3'600'000, "an integer (milliseconds)"};
constexpr IntegerRule kNodeCount{1, 15, "an integer from 1 to 15"};
constexpr IntegerRule kClientCount{1, 64, "an integer from 1 to 64"};
constexpr IntegerRule kRenewals{0, 1'000'000, "a non-negative integer"};
constexpr IntegerRule kIndex{0, 63, "an index from 0 to 63"};
constexpr IntegerRule kNodeIndex{0, 14, "a node index from 0 to 14"};
constexpr IntegerRule kShards{1, 8, "an integer from 1 to 8"};
constexpr IntegerRule kReplicas{0, 2, "an integer from 0 to 2"};
constexpr IntegerRule kPermits{1, Semaphore::kMaxPermits, "an integer from 1 to 1024"};
// The most resources one lock may hold (the library's bound).
constexpr std::size_t kMaxResources = 64;
constexpr NumberRule kRate{0.01, 100.0, "a rate in [0.01, 100)"};
constexpr NumberRule kDrift{0.0, 0.5, "a number in [0, 0.5)"};

template <typename Enum, std::size_t N>
std::optional<Enum> lookup(std::string_view text,
                           const std::array<std::pair<std::string_view, Enum>, N>& names) {
  for (const auto& [name, value] : names) {
    if (name == text) return value;
  }
  return std::nullopt;
}

template <typename Enum, std::size_t N>
std::string_view name_of(Enum value,
                         const std::array<std::pair<std::string_view, Enum>, N>& names) {
  for (const auto& [name, candidate] : names) {
    if (candidate == value) return name;
  }
  return "?";
}

template <typename Enum, std::size_t N>
std::string choices(const std::array<std::pair<std::string_view, Enum>, N>& names) {
  std::string out;
  for (const auto& [name, value] : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

constexpr std::array<std::pair<std::string_view, NodePersistence>, 3> kPersistenceNames{{
    {"none", NodePersistence::none},
    {"everysec", NodePersistence::everysec},
    {"always", NodePersistence::always},
}};

constexpr std::array<std::pair<std::string_view, LockKind>, 4> kKindNames{{
    {"mutex", LockKind::mutex},
    {"semaphore", LockKind::semaphore},
    {"multi", LockKind::multi},
    {"election", LockKind::election},
}};

constexpr std::array<std::pair<std::string_view, NemesisAction>, 11> kActionNames{{
    {"kill", NemesisAction::kill},
    {"power-loss", NemesisAction::power_loss},
    {"restart", NemesisAction::restart},
    {"pause", NemesisAction::pause},
    {"resume", NemesisAction::resume},
    {"link", NemesisAction::link},
    {"clock-jump", NemesisAction::clock_jump},
    {"clock-rate", NemesisAction::clock_rate},
    {"heal", NemesisAction::heal},
    {"failover", NemesisAction::failover},
    {"migrate", NemesisAction::migrate},
}};

constexpr std::array<std::pair<std::string_view, PausePoint>, 7> kPointNames{{
    {"now", PausePoint::now},
    {"in-flight", PausePoint::in_flight},
    {"after-acquire", PausePoint::after_acquire},
    {"before-write", PausePoint::before_write},
    {"before-release", PausePoint::before_release},
    {"after-release", PausePoint::after_release},
    {"after-nest", PausePoint::after_nest},
}};

constexpr std::array<std::pair<std::string_view, LinkMode>, 6> kModeNames{{
    {"pass", LinkMode::pass},
    {"delay", LinkMode::delay},
    {"blackhole", LinkMode::blackhole},
    {"hold", LinkMode::hold},
    {"reset", LinkMode::reset},
    {"timeout", LinkMode::timeout},
}};

constexpr std::array<std::pair<std::string_view, Direction>, 3> kDirectionNames{{
    {"up", Direction::up},
    {"down", Direction::down},
    {"both", Direction::both},
}};

constexpr std::array<std::pair<std::string_view, Variant>, 2> kVariantNames{{
    {"unfenced", Variant::unfenced},
    {"fenced", Variant::fenced},
}};

// Reads one scenario file; the first error wins (every read returns false
// once it has recorded one).
class ScenarioReader {
 public:
  explicit ScenarioReader(std::string_view source) : reader_(source) {}

  ScenarioParseResult read(const toml::table& root) {
    Scenario scenario;
    if (!read_root(root, scenario)) return failure();
    std::stable_sort(scenario.nemesis.begin(), scenario.nemesis.end(),
                     [](const NemesisStep& a, const NemesisStep& b) { return a.at < b.at; });
    return ScenarioParseResult{std::move(scenario), {}};
  }

 private:
  ScenarioParseResult failure() {
    return ScenarioParseResult{std::nullopt, reader_.take_error().to_string()};
  }

  bool unknown(const toml::key& key, const toml::node& value, std::string_view table,
               std::string_view allowed) {
    (void)value;
    std::string message = "unknown key";
    if (!table.empty()) message += " in [" + std::string(table) + "]";
    message += "; expected one of: " + std::string(allowed);
    return reader_.fail(key.source(), std::string(key.str()), message);
  }

  template <typename Enum, std::size_t N>
  bool read_enum(const toml::node& value, std::string_view path,
                 const std::array<std::pair<std::string_view, Enum>, N>& names, Enum& out) {
    std::string text;
    if (!reader_.read_string(value, path, false, text)) return false;
    auto found = lookup(text, names);
    if (!found) {
      return reader_.fail(value.source(), path,
                          "\"" + text + "\" is not one of: " + choices(names));
    }
    out = *found;
    return true;
  }

  bool read_root(const toml::table& root, Scenario& scenario) {
    bool has_name = false;
    for (const auto& [key, value] : detail::entries_in_file_order(root)) {
      const std::string_view name = key->str();
      bool ok = true;
      if (name == "name") {
        ok = reader_.read_string(*value, name, false, scenario.name);
        has_name = true;
      } else if (name == "description") {
        ok = reader_.read_string(*value, name, true, scenario.description);
      } else if (name == "duration_ms") {
        ok = reader_.read_milliseconds(*value, name, kPositiveDuration, scenario.duration);
      } else if (name == "variants") {
        ok = read_variants(*value, scenario);
      } else if (name == "nodes") {
        ok = read_nodes(*value, scenario.nodes);
      } else if (name == "lock") {
        ok = read_lock(*value, scenario.lock);
      } else if (name == "clients") {
        ok = read_clients(*value, scenario.clients);
      } else if (name == "nemesis") {
        ok = read_nemesis(*value, scenario);
      } else if (name == "expect") {
        ok = read_expectations(*value, scenario);
      } else {
        ok = unknown(*key, *value, "",
                     "name, description, duration_ms, variants, nodes, lock, clients, nemesis, "
                     "expect");
      }
      if (!ok) return false;
    }
    if (!has_name) return reader_.fail_without_position("missing key: name");
    if (scenario.variants.empty()) scenario.variants = {Variant::unfenced, Variant::fenced};
    for (Variant variant : scenario.variants) {
      scenario.expectations.try_emplace(variant);  // all "holds"
    }
    return check_kind(scenario) && check_clusters(scenario) && check_targets(scenario);
  }

  bool read_variants(const toml::node& value, Scenario& scenario) {
    const toml::array* list = value.as_array();
    if (list == nullptr) return reader_.fail(value.source(), "variants", "expected an array");
    for (const toml::node& item : *list) {
      Variant variant{};
      if (!read_enum(item, "variants", kVariantNames, variant)) return false;
      if (std::find(scenario.variants.begin(), scenario.variants.end(), variant) ==
          scenario.variants.end()) {
        scenario.variants.push_back(variant);
      }
    }
    return true;
  }

  bool read_nodes(const toml::node& value, NodesSpec& nodes) {
    const toml::table* table = nullptr;
    if (!reader_.read_table(value, "nodes", "a table ([nodes])", table)) return false;
    for (const auto& [key, item] : detail::entries_in_file_order(*table)) {
      const std::string_view name = key->str();
      bool ok = true;
      if (name == "count") {
        ok = reader_.read_int(*item, "nodes.count", kNodeCount, nodes.count);
      } else if (name == "persistence") {
        ok = read_enum(*item, "nodes.persistence", kPersistenceNames, nodes.persistence);
      } else if (name == "tls") {
        ok = reader_.read_bool(*item, "nodes.tls", nodes.tls);
        tls_at_ = item->source();
      } else if (name == "clusters") {
        ok = read_clusters(*item, nodes);
      } else if (name == "shards") {
        ok = reader_.read_int(*item, "nodes.shards", kShards, nodes.shards);
      } else if (name == "replicas") {
        ok = reader_.read_int(*item, "nodes.replicas", kReplicas, nodes.replicas);
      } else if (name == "cluster_node_timeout_ms") {
        ok = reader_.read_milliseconds(*item, "nodes.cluster_node_timeout_ms", kPositiveDuration,
                                       nodes.cluster_node_timeout);
      } else {
        ok = unknown(*key, *item, "nodes",
                     "count, persistence, tls, clusters, shards, replicas, "
                     "cluster_node_timeout_ms");
      }
      if (!ok) return false;
    }
    return true;
  }

  // nodes.clusters: node indices, each once; checked against nodes.count
  // once both are read (check_clusters).
  bool read_clusters(const toml::node& value, NodesSpec& nodes) {
    const toml::array* list = value.as_array();
    clusters_at_ = value.source();
    if (list == nullptr) {
      return reader_.fail(value.source(), "nodes.clusters", "expected an array of node indices");
    }
    nodes.clusters.clear();
    for (const toml::node& item : *list) {
      int index = 0;
      if (!reader_.read_int(item, "nodes.clusters", kNodeIndex, index)) return false;
      if (nodes.is_cluster(index)) {
        return reader_.fail(item.source(), "nodes.clusters",
                            "node " + std::to_string(index) + " is named twice");
      }
      nodes.clusters.push_back(index);
    }
    return true;
  }

  bool read_lock(const toml::node& value, LockSpec& lock) {
    const toml::table* table = nullptr;
    if (!reader_.read_table(value, "lock", "a table ([lock])", table)) return false;
    for (const auto& [key, item] : detail::entries_in_file_order(*table)) {
      const std::string_view name = key->str();
      const std::string path = "lock." + std::string(name);
      bool ok = true;
      if (name == "kind") {
        ok = read_enum(*item, path, kKindNames, lock.kind);
        kind_at_ = item->source();
      } else if (name == "permits") {
        std::int64_t permits = 0;
        ok = reader_.read_integer(*item, path, kPermits, permits);
        lock.permits = static_cast<std::uint32_t>(permits);
        permits_at_ = item->source();
      } else if (name == "resources") {
        ok = read_resources(*item, path, lock.resources);
        resources_at_ = item->source();
      } else if (name == "ttl_ms") {
        ok = reader_.read_milliseconds(*item, path, kPositiveDuration, lock.ttl);
      } else if (name == "retry_delay_ms") {
        ok = reader_.read_milliseconds(*item, path, kDuration, lock.retry_delay);
      } else if (name == "wait_ms") {
        ok = reader_.read_milliseconds(*item, path, kDuration, lock.wait);
      } else if (name == "node_timeout_ms") {
        ok = reader_.read_milliseconds(*item, path, kDuration, lock.node_timeout);
      } else if (name == "drift_factor") {
        ok = reader_.read_number(*item, path, kDrift, lock.drift_factor);
      } else if (name == "amnesia_defence") {
        ok = reader_.read_bool(*item, path, lock.amnesia_defence);
      } else if (name == "release_at_majority") {
        ok = reader_.read_bool(*item, path, lock.release_at_majority);
      } else if (name == "max_ttl_ms") {
        ok = reader_.read_milliseconds(*item, path, kDuration, lock.max_ttl);
      } else if (name == "renew") {
        ok = reader_.read_bool(*item, path, lock.renew);
      } else if (name == "max_renewals") {
        ok = reader_.read_int(*item, path, kRenewals, lock.max_renewals);
      } else if (name == "reentrant") {
        ok = reader_.read_bool(*item, path, lock.reentrant);
        reentrant_at_ = item->source();
      } else if (name == "fair") {
        ok = reader_.read_bool(*item, path, lock.fair);
        fair_at_ = item->source();
      } else {
        ok = unknown(*key, *item, "lock",
                     "kind, permits, resources, ttl_ms, retry_delay_ms, wait_ms, "
                     "node_timeout_ms, drift_factor, amnesia_defence, release_at_majority, "
                     "max_ttl_ms, renew, max_renewals, reentrant, fair");
      }
      if (!ok) return false;
    }
    return true;
  }

  // A key of ClientSpec; false with no error recorded when `name` is none.
  bool is_client_key(std::string_view name) const {
    return name == "critical_section_ms" || name == "think_ms" || name == "clock_rate" ||
           name == "start_delay_ms" || name == "shared";
  }

  bool read_client_key(std::string_view name, const toml::node& item, const std::string& path,
                       ClientSpec& spec) {
    if (name == "critical_section_ms") {
      return reader_.read_milliseconds(item, path, kDuration, spec.critical_section);
    }
    if (name == "think_ms") return reader_.read_milliseconds(item, path, kDuration, spec.think);
    if (name == "clock_rate") return reader_.read_number(item, path, kRate, spec.clock_rate);
    if (name == "shared") {
      if (!shared_at_) shared_at_ = item.source();
      return reader_.read_bool(item, path, spec.shared);
    }
    return reader_.read_milliseconds(item, path, kDuration, spec.start_delay);
  }

  bool read_clients(const toml::node& value, ClientsSpec& clients) {
    const toml::table* table = nullptr;
    if (!reader_.read_table(value, "clients", "a table ([clients])", table)) return false;
    const toml::node* overrides = nullptr;
    for (const auto& [key, item] : detail::entries_in_file_order(*table)) {
      const std::string_view name = key->str();
      const std::string path = "clients." + std::string(name);
      bool ok = true;
      if (name == "count") {
        ok = reader_.read_int(*item, path, kClientCount, clients.count);
      } else if (is_client_key(name)) {
        ok = read_client_key(name, *item, path, clients.defaults);
      } else if (name == "override") {
        overrides = item;  // after the defaults, whatever the order
      } else {
        ok = unknown(*key, *item, "clients",
                     "count, critical_section_ms, think_ms, clock_rate, start_delay_ms, "
                     "shared, override");
      }
      if (!ok) return false;
    }
    return overrides == nullptr || read_overrides(*overrides, clients);
  }

  bool read_overrides(const toml::node& value, ClientsSpec& clients) {
    const toml::array* list = value.as_array();
    if (list == nullptr) {
      return reader_.fail(value.source(), "clients.override",
                          "expected an array of tables ([[clients.override]])");
    }
    for (const toml::node& entry : *list) {
      const toml::table* table = nullptr;
      if (!reader_.read_table(entry, "clients.override", "a table", table)) return false;
      const toml::node* index_node = table->get("index");
      if (index_node == nullptr) {
        return reader_.fail(entry.source(), "clients.override", "missing key: index");
      }
      int index = 0;
      if (!reader_.read_int(*index_node, "clients.override.index", kIndex, index)) return false;
      if (index >= clients.count) {
        return reader_.fail(
            index_node->source(), "clients.override.index",
            "no such client (clients.count is " + std::to_string(clients.count) + ")");
      }
      ClientSpec spec = clients.defaults;
      for (const auto& [key, item] : detail::entries_in_file_order(*table)) {
        const std::string_view name = key->str();
        if (name == "index") continue;
        const std::string path = "clients.override." + std::string(name);
        if (name == "resources") {
          if (!read_resources(*item, path, spec.resources)) return false;
          if (!override_resources_at_) override_resources_at_ = item->source();
          continue;
        }
        if (!is_client_key(name)) {
          return unknown(*key, *item, "clients.override",
                         "index, critical_section_ms, think_ms, clock_rate, start_delay_ms, "
                         "shared, resources");
        }
        if (!read_client_key(name, *item, path, spec)) return false;
      }
      clients.overrides[index] = spec;
    }
    return true;
  }

  bool read_nemesis(const toml::node& value, Scenario& scenario) {
    const toml::array* list = value.as_array();
    if (list == nullptr) {
      return reader_.fail(value.source(), "nemesis", "expected an array of tables ([[nemesis]])");
    }
    for (const toml::node& entry : *list) {
      const toml::table* table = nullptr;
      if (!reader_.read_table(entry, "nemesis", "a table ([[nemesis]])", table)) return false;
      NemesisStep step;
      step.line = entry.source().begin.line;
      if (!read_step(*table, step)) return false;
      scenario.nemesis.push_back(std::move(step));
    }
    return true;
  }

  bool read_step(const toml::table& table, NemesisStep& step) {
    bool has_action = false;
    for (const auto& [key, item] : detail::entries_in_file_order(table)) {
      const std::string_view name = key->str();
      const std::string path = "nemesis." + std::string(name);
      bool ok = true;
      if (name == "at_ms") {
        ok = reader_.read_milliseconds(*item, path, kDuration, step.at);
      } else if (name == "action") {
        ok = read_enum(*item, path, kActionNames, step.action);
        has_action = true;
      } else if (name == "target") {
        ok = reader_.read_string(*item, path, false, step.target);
      } else if (name == "duration_ms") {
        ok = reader_.read_milliseconds(*item, path, kPositiveDuration, step.duration);
      } else if (name == "mode") {
        ok = read_enum(*item, path, kModeNames, step.mode);
      } else if (name == "direction") {
        ok = read_enum(*item, path, kDirectionNames, step.direction);
      } else if (name == "delay_ms") {
        ok = reader_.read_milliseconds(*item, path, kDuration, step.delay);
      } else if (name == "delta_ms") {
        ok = reader_.read_milliseconds(*item, path, kSignedDuration, step.delta);
      } else if (name == "rate") {
        ok = reader_.read_number(*item, path, kRate, step.rate);
      } else if (name == "point") {
        ok = read_enum(*item, path, kPointNames, step.point);
      } else if (name == "when_holding") {
        ok = reader_.read_int(*item, path, kIndex, step.when_holding);
      } else if (name == "when_timeout_ms") {
        ok = reader_.read_milliseconds(*item, path, kPositiveDuration, step.when_timeout);
      } else if (name == "after_holding_ms") {
        ok = reader_.read_milliseconds(*item, path, kDuration, step.after_holding);
      } else if (name == "progress_within_ms") {
        ok = reader_.read_milliseconds(*item, path, kPositiveDuration, step.progress_within);
      } else if (name == "lag") {
        ok = reader_.read_bool(*item, path, step.lag);
      } else {
        ok = unknown(*key, *item, "nemesis",
                     "at_ms, action, target, duration_ms, mode, direction, delay_ms, delta_ms, "
                     "rate, point, when_holding, when_timeout_ms, after_holding_ms, "
                     "progress_within_ms, lag");
      }
      if (!ok) return false;
    }
    if (!has_action) return reader_.fail(table.source(), "nemesis", "missing key: action");
    return true;
  }

  bool read_expectations(const toml::node& value, Scenario& scenario) {
    const toml::table* table = nullptr;
    if (!reader_.read_table(value, "expect", "a table ([expect.fenced] ...)", table)) return false;
    for (const auto& [key, item] : detail::entries_in_file_order(*table)) {
      auto variant = lookup(key->str(), kVariantNames);
      if (!variant) return unknown(*key, *item, "expect", choices(kVariantNames));
      const toml::table* lists = nullptr;
      const std::string path = "expect." + std::string(key->str());
      if (!reader_.read_table(*item, path, "a table", lists)) return false;
      Expectations expectations{};
      for (const auto& [list_key, list] : detail::entries_in_file_order(*lists)) {
        Expectation kind{};
        if (list_key->str() == "violated") {
          kind = Expectation::violated;
        } else if (list_key->str() == "may") {
          kind = Expectation::may;
        } else {
          return unknown(*list_key, *list, path, "violated, may");
        }
        if (!read_invariant_list(*list, path + "." + std::string(list_key->str()), kind,
                                 expectations)) {
          return false;
        }
      }
      scenario.expectations[*variant] = expectations;
    }
    return true;
  }

  bool read_invariant_list(const toml::node& value, const std::string& path, Expectation kind,
                           Expectations& expectations) {
    const toml::array* list = value.as_array();
    if (list == nullptr)
      return reader_.fail(value.source(), path, "expected an array of \"C1\"..\"C14\"");
    for (const toml::node& item : *list) {
      std::string id;
      if (!reader_.read_string(item, path, false, id)) return false;
      const int index = invariant_index(id);
      if (index < 0) {
        return reader_.fail(item.source(), path, "\"" + id + "\" is not an invariant (C1..C14)");
      }
      expectations.at(static_cast<std::size_t>(index)) = kind;
    }
    return true;
  }

  // A resource set: 1..64 distinct non-empty names.
  bool read_resources(const toml::node& value, const std::string& path,
                      std::vector<std::string>& out) {
    const toml::array* list = value.as_array();
    if (list == nullptr || list->empty() || list->size() > kMaxResources) {
      return reader_.fail(value.source(), path, "expected an array of 1 to 64 resource names");
    }
    std::vector<std::string> names;
    for (const toml::node& item : *list) {
      std::string name;
      if (!reader_.read_string(item, path, false, name)) return false;
      if (std::find(names.begin(), names.end(), name) != names.end()) {
        return reader_.fail(item.source(), path, "\"" + name + "\" is named twice");
      }
      names.push_back(std::move(name));
    }
    out = std::move(names);
    return true;
  }

  // The keys of one kind need it, whatever order the tables come in.
  bool check_kind(const Scenario& scenario) {
    const LockSpec& lock = scenario.lock;
    if (lock.kind == LockKind::semaphore && lock.permits == 0) {
      return reader_.fail(kind_at_, "lock.kind", "a semaphore needs lock.permits");
    }
    if (lock.kind != LockKind::semaphore && permits_at_) {
      return reader_.fail(*permits_at_, "lock.permits",
                          "only a semaphore has permits (lock.kind = \"semaphore\")");
    }
    if (lock.kind == LockKind::multi && lock.resources.empty()) {
      return reader_.fail(kind_at_, "lock.kind",
                          "a lock over several resources needs lock.resources");
    }
    if (lock.kind != LockKind::multi && resources_at_) {
      return reader_.fail(*resources_at_, "lock.resources",
                          "only kind = \"multi\" names resources");
    }
    if (lock.kind != LockKind::multi && override_resources_at_) {
      return reader_.fail(*override_resources_at_, "clients.override.resources",
                          "only kind = \"multi\" names resources");
    }
    if (lock.reentrant && lock.kind != LockKind::mutex) {
      return reader_.fail(*reentrant_at_, "lock.reentrant",
                          "reentrant holds run on kind = \"mutex\" only");
    }
    if (lock.fair && (lock.kind != LockKind::mutex || lock.reentrant || shared_at_)) {
      return reader_.fail(*fair_at_, "lock.fair",
                          "fair waiters take kind = \"mutex\", without readers or reentrant holds");
    }
    if (shared_at_ && (lock.kind != LockKind::mutex || lock.reentrant)) {
      return reader_.fail(*shared_at_, "clients.shared",
                          "readers (shared = true) take the read side of kind = \"mutex\", "
                          "without lock.reentrant");
    }
    return true;
  }

  // Cluster members need the node count and the lock's kind, which may be
  // written after [nodes].
  bool check_clusters(const Scenario& scenario) {
    const NodesSpec& nodes = scenario.nodes;
    if (nodes.clusters.empty()) return true;
    for (const int index : nodes.clusters) {
      if (index >= nodes.count) {
        return reader_.fail(*clusters_at_, "nodes.clusters",
                            "no node " + std::to_string(index) + " (nodes.count is " +
                                std::to_string(nodes.count) + ")");
      }
    }
    if (nodes.tls) {
      return reader_.fail(*tls_at_, "nodes.tls",
                          "cluster members run without TLS in the harness (nodes.clusters)");
    }
    return true;
  }

  // Targets need the counts, which may be written after the steps.
  bool check_targets(const Scenario& scenario) {
    const int nodes = scenario.nodes.count;
    const int clients = scenario.clients.count;
    for (const NemesisStep& step : scenario.nemesis) {
      std::string problem;
      switch (step.action) {
        case NemesisAction::kill:
        case NemesisAction::power_loss:
        case NemesisAction::restart:
        case NemesisAction::clock_jump:
        case NemesisAction::clock_rate:
          if (!parse_node_target(step.target, nodes)) {
            problem = "target must be a node \"n0\"..\"n" + std::to_string(nodes - 1) + "\"";
          }
          break;
        case NemesisAction::pause:
        case NemesisAction::resume:
          if (!parse_node_target(step.target, nodes) &&
              !parse_client_target(step.target, clients)) {
            problem = "target must be a node (\"n2\") or a client (\"c0\")";
          } else if (step.point != PausePoint::now && !parse_client_target(step.target, clients)) {
            problem = "a pause point other than \"now\" needs a client target";
          } else if (step.point == PausePoint::after_nest && !scenario.lock.reentrant) {
            problem = "point \"after-nest\" needs lock.reentrant = true";
          } else if (step.point == PausePoint::after_release && scenario.lock.reentrant) {
            problem = "point \"after-release\" is not available with lock.reentrant";
          } else if (step.point == PausePoint::in_flight && scenario.lock.reentrant) {
            problem =
                "point \"in-flight\" is not available with lock.reentrant (the guard's acquire "
                "runs on the client's own thread)";
          }
          break;
        case NemesisAction::link:
          if (!parse_link_target(step.target, clients, nodes)) {
            problem = "target must be a link \"c0->n3\" (either side may be *) or \"c0->r\"";
          }
          break;
        case NemesisAction::heal:
          break;
        case NemesisAction::failover:
        case NemesisAction::migrate: {
          const auto node = parse_node_target(step.target, nodes);
          if (!node || !scenario.nodes.is_cluster(*node)) {
            problem = "target must be a cluster member (a node named in nodes.clusters)";
          } else if (step.action == NemesisAction::failover && scenario.nodes.replicas == 0) {
            problem = "a failover needs nodes.replicas of at least 1";
          }
          break;
        }
      }
      if (problem.empty()) problem = cluster_target_problem(scenario, step);
      if (problem.empty() && step.lag && step.action != NemesisAction::failover) {
        problem = "lag applies to action = \"failover\" only";
      }
      // The requirement is checked from the end of the fault, so the fault
      // must end by itself, and it names the fault's clients.
      if (problem.empty() && step.progress_within &&
          (step.action != NemesisAction::link || !step.duration)) {
        problem = "progress_within_ms needs a link step with duration_ms";
      }
      if (problem.empty() && step.when_holding >= clients) {
        problem = "when_holding names no client (clients.count is " + std::to_string(clients) + ")";
      }
      if (!problem.empty()) {
        return reader_.fail(toml::source_region{{step.line, 1}, {step.line, 1}, nullptr}, "nemesis",
                            problem);
      }
    }
    return true;
  }

  // What a step may not do to a cluster member: the harness reaches its
  // servers directly (no link), and its clock and persistence faults act
  // on one server.
  static std::string cluster_target_problem(const Scenario& scenario, const NemesisStep& step) {
    const int nodes = scenario.nodes.count;
    const auto node = parse_node_target(step.target, nodes);
    switch (step.action) {
      case NemesisAction::power_loss:
      case NemesisAction::clock_jump:
      case NemesisAction::clock_rate:
        if (node && scenario.nodes.is_cluster(*node)) {
          return "n" + std::to_string(*node) +
                 " is a cluster member: " + std::string(to_string(step.action)) +
                 " acts on single-server nodes only";
        }
        return {};
      case NemesisAction::link: {
        const auto selection = parse_link_target(step.target, scenario.clients.count, nodes);
        if (!selection) return {};
        for (const int n : selection->nodes) {
          if (scenario.nodes.is_cluster(n)) {
            return "n" + std::to_string(n) +
                   " is a cluster member, whose servers the clients reach directly: a link "
                   "fault names single-server nodes only";
          }
        }
        return {};
      }
      default:
        return {};
    }
  }

  ConfigReader reader_;
  std::optional<toml::source_region> clusters_at_;
  std::optional<toml::source_region> tls_at_;
  // Where the keys that depend on the kind were written, for check_kind.
  toml::source_region kind_at_{};
  std::optional<toml::source_region> permits_at_;
  std::optional<toml::source_region> reentrant_at_;
  std::optional<toml::source_region> shared_at_;
  std::optional<toml::source_region> fair_at_;
  std::optional<toml::source_region> resources_at_;
  std::optional<toml::source_region> override_resources_at_;
};

std::optional<int> parse_indexed(std::string_view text, char prefix, int count) {
  if (text.size() < 2 || text.front() != prefix) return std::nullopt;
  int value = -1;
  const char* first = text.data() + 1;
  const char* last = text.data() + text.size();
  auto [end, error] = std::from_chars(first, last, value);
  if (error != std::errc() || end != last || value < 0 || value >= count) return std::nullopt;
  return value;
}

std::vector<int> all_indices(int count) {
  std::vector<int> out(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = i;
  return out;
}

}  // namespace

std::string_view to_string(LockKind kind) noexcept { return name_of(kind, kKindNames); }

std::vector<std::string> Scenario::resources_of(int index) const {
  if (lock.kind != LockKind::multi) return {std::string(kLockName)};
  const ClientSpec& spec = clients.spec(index);
  return spec.resources.empty() ? lock.resources : spec.resources;
}

std::vector<std::string> Scenario::all_resources() const {
  std::vector<std::string> all;
  for (int c = 0; c < clients.count; ++c) {
    for (std::string& resource : resources_of(c)) {
      if (std::find(all.begin(), all.end(), resource) == all.end())
        all.push_back(std::move(resource));
    }
  }
  return all;
}

ResourceKeys mutex_resource_keys() { return {"chaos:counter", "chaos:log"}; }

ResourceKeys permit_resource_keys(std::uint32_t permit) {
  const std::string suffix = ":permit" + std::to_string(permit);
  return {"chaos:counter" + suffix, "chaos:log" + suffix};
}

ResourceKeys named_resource_keys(std::string_view resource) {
  return {"chaos:counter:" + std::string(resource), "chaos:log:" + std::string(resource)};
}

std::vector<ResourceKeys> resource_keys(const Scenario& scenario) {
  std::vector<ResourceKeys> keys;
  switch (scenario.lock.kind) {
    case LockKind::mutex:
    case LockKind::election:
      keys.push_back(mutex_resource_keys());
      break;
    case LockKind::semaphore:
      for (std::uint32_t j = 0; j < scenario.lock.permits; ++j) {
        keys.push_back(permit_resource_keys(j));
      }
      break;
    case LockKind::multi:
      for (const std::string& name : scenario.all_resources()) {
        keys.push_back(named_resource_keys(name));
      }
      break;
  }
  return keys;
}

std::string_view to_string(NodePersistence persistence) noexcept {
  return name_of(persistence, kPersistenceNames);
}
std::string_view to_string(NemesisAction action) noexcept { return name_of(action, kActionNames); }
std::string_view to_string(PausePoint point) noexcept { return name_of(point, kPointNames); }
std::string_view to_string(Variant variant) noexcept { return name_of(variant, kVariantNames); }
std::string_view to_string(Direction direction) noexcept {
  return name_of(direction, kDirectionNames);
}

ScenarioParseResult parse_scenario(std::string_view toml_text, std::string_view source_name) {
  try {
    // The quorum file's pre-scan first: toml++ 3.3.0 overflows its stack on
    // deep nesting and reaches undefined behaviour on non-ASCII bare keys.
    if (auto problem = detail::prescan_toml(toml_text)) {
      return {std::nullopt, std::string(source_name) + ":" + std::to_string(problem->line) + ":" +
                                std::to_string(problem->column) +
                                ": invalid TOML: " + problem->message};
    }
    const toml::table root = toml::parse(toml_text, source_name);
    ScenarioParseResult result = ScenarioReader(source_name).read(root);
    if (result.scenario) result.scenario->file = std::filesystem::path(source_name);
    return result;
  } catch (const toml::parse_error& error) {
    const toml::source_position& at = error.source().begin;
    return {std::nullopt, std::string(source_name) + ":" + std::to_string(at.line) + ":" +
                              std::to_string(at.column) +
                              ": invalid TOML: " + std::string(error.description())};
  } catch (const std::exception& error) {
    return {std::nullopt, std::string(source_name) + ": " + error.what()};
  }
}

ScenarioParseResult load_scenario(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {std::nullopt, file.string() + ": cannot open"};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_scenario(text.str(), file.string());
}

std::vector<std::filesystem::path> catalog_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".toml") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::optional<int> parse_node_target(std::string_view target, int node_count) {
  return parse_indexed(target, 'n', node_count);
}

std::optional<int> parse_client_target(std::string_view target, int client_count) {
  return parse_indexed(target, 'c', client_count);
}

std::optional<LinkSelection> parse_link_target(std::string_view target, int client_count,
                                               int node_count) {
  const std::size_t arrow = target.find("->");
  if (arrow == std::string_view::npos) return std::nullopt;
  const std::string_view client = target.substr(0, arrow);
  const std::string_view node = target.substr(arrow + 2);
  LinkSelection selection;
  if (client == "c*") {
    selection.clients = all_indices(client_count);
  } else if (auto index = parse_client_target(client, client_count)) {
    selection.clients = {*index};
  } else {
    return std::nullopt;
  }
  if (node == "r") {
    selection.resource = true;
  } else if (node == "n*") {
    selection.nodes = all_indices(node_count);
  } else if (auto index = parse_node_target(node, node_count)) {
    selection.nodes = {*index};
  } else {
    return std::nullopt;
  }
  return selection;
}

Verdicts judge(const CheckResult& result, const Expectations& expectations) {
  Verdicts verdicts;
  for (int i = 0; i < kInvariantCount; ++i) {
    const Expectation expected = expectations.at(static_cast<std::size_t>(i));
    const bool violated = result.violated(i);
    if (violated && expected == Expectation::holds) {
      verdicts.regression_ok = false;
      verdicts.unexpected.emplace_back(invariant_id(i));
    }
    if (!violated && expected == Expectation::violated) {
      verdicts.demonstration_ok = false;
      verdicts.missing.emplace_back(invariant_id(i));
    }
  }
  return verdicts;
}

}  // namespace redlock::chaos
