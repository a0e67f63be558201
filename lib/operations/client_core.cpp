#include "operations/client_core.hpp"

#include "protocol/hash_slot.hpp"
#include "protocol/quorum.hpp"
#include "scripts/script_calls.hpp"
#include "scripts/scripts.hpp"
#include "transport/cluster_link.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

namespace {

std::string validate(const QuorumConfig& config) {
  if (config.nodes.empty()) return "no nodes configured";
  // What a quorum file refuses, refused as well in a configuration built in
  // code: per-node tallies and marks are sized for kMaxNodes.
  if (config.nodes.size() > kMaxNodes) {
    return "more than " + std::to_string(kMaxNodes) + " nodes configured";
  }
  if (config.lock.ttl.count() <= 0) return "ttl must be positive";
  if (config.lock.connect_timeout.count() <= 0) return "connect timeout must be positive";
  for (const NodeConfig& node : config.nodes) {
    // A cluster member is reached through its seeds (host and port, which
    // a quorum file sets to its first seed's, are not read).
    if (!node.cluster.empty()) {
      for (const ClusterSeed& seed : node.cluster) {
        if (seed.host.empty() && seed.unix_path.empty()) {
          return "cluster member " + node.name + " has a seed without a host";
        }
      }
      continue;
    }
    if (node.host.empty() && node.unix_path.empty()) return "node " + node.name + " has no host";
  }
  // With a cluster member every key of a call must share one slot
  // (scripts/key_space.hpp).
  if (key_layout(config) == KeyLayout::per_slot) return per_slot_problem(config.lock);
  return {};
}

std::shared_ptr<const std::vector<std::string>> names_of(const QuorumConfig& config) {
  auto names = std::make_shared<std::vector<std::string>>();
  names->reserve(config.nodes.size());
  for (const NodeConfig& node : config.nodes) names->push_back(node.name);
  return names;
}

}  // namespace

LinkFactory ClientCore::real_links() {
  return [](LoopContext& loop, NodeMetrics& stats, std::size_t index, const NodeConfig& node,
            const LockConfig& lock, SessionSetup setup) -> std::unique_ptr<NodeLink> {
    if (!node.cluster.empty()) {
      return std::make_unique<ClusterLink>(loop, stats, index, node, lock, std::move(setup));
    }
    return std::make_unique<NodeConnection>(loop, stats, index, node, lock, std::move(setup));
  };
}

std::shared_ptr<ClientCore> ClientCore::create(uv_loop_t* loop, QuorumConfig config,
                                               ClientOptions options, LinkFactory make_link) {
  if (!make_link) make_link = real_links();
  std::shared_ptr<ClientCore> core(
      new ClientCore(loop, std::move(config), options, std::move(make_link)));
  core->self_ = core;
  if (core->config_problem_.empty()) {
    for (auto& node : core->nodes_) node->start();
  }
  return core;
}

ClientCore::ClientCore(uv_loop_t* loop, QuorumConfig config, ClientOptions options,
                       LinkFactory make_link)
    : config_(std::move(config)),
      node_names_(names_of(config_)),
      layout_(key_layout(config_)),
      metrics_(options.metrics ? options.metrics : std::make_shared<Metrics>()),
      config_problem_(validate(config_)),
      context_(std::make_unique<LoopContext>(
          loop, options.clock != nullptr ? *options.clock : steady_clock_source())) {
  wakeups_ = std::make_unique<WakeupHub>(*context_, config_, layout_, *metrics_, nodes_, make_link);
  recovery_ = std::make_unique<RecoveryCoordinator>(*this);
  if (!config_problem_.empty()) return;
  // The lock connections load the mutex's scripts at set-up; the other
  // kinds' go as EVAL the first time a session uses them (some 30 KiB a
  // connection need not hold or send for kinds it may never use).
  // Persistence is reported, and refused in strict mode, since a node that
  // loses acknowledged writes breaks fencing.
  SessionSetup setup;
  for (const ScriptId id : {ScriptId::acquire, ScriptId::extend, ScriptId::release, ScriptId::fence,
                            ScriptId::probe, ScriptId::recover, ScriptId::queue_leave}) {
    setup.scripts.push_back(&script(id));
  }
  setup.read_persistence = true;
  setup.persistence_recheck = options.persistence_recheck;
  // Per slot, releases publish on shard channels, which the hub subscribes
  // through each channel's shard (wakeup_hub.hpp).
  if (layout_ == KeyLayout::per_slot) setup.sent_as = &shard_publishing;
  // Each session's first word: a replica promoted in its master's place
  // holds a copy of the master's marker but maybe not its last grants; the
  // check takes that marker away, and the node rules then refuse the node
  // until the amnesia defence recovered it (docs/safety.md, "A server
  // replaced under its address").
  // Per slot there is a marker per slot (scripts/key_space.hpp), and a
  // cluster shard's master promoted by a failover is the same case.
  if (config_.lock.amnesia_defence) {
    setup.opening = layout_ == KeyLayout::shared
                        ? encode(CheckMarkerCall{.marker_key = marker_key(config_.lock.key_prefix)})
                        : encode(CheckSlotMarkersCall{.key_prefix = config_.lock.key_prefix,
                                                      .slot_tag = slot_tag(0)});
  }
  nodes_.reserve(config_.nodes.size());
  marked_session_.assign(config_.nodes.size(), 0);
  for (std::size_t i = 0; i < config_.nodes.size(); ++i) {
    nodes_.push_back(make_link(*context_, metrics_->node(config_.nodes[i].name), i,
                               config_.nodes[i], config_.lock, setup));
  }
  // (The links are the core's: the handler never outlives it.)
  for (auto& node : nodes_) node->set_servers_handler([this] { refuse_dependent_votes(); });
}

// Two members that are one cluster, or a cluster member and another member
// that share a server, fail and grant together: one of them, a cluster
// (the later one when both are), has its votes refused, so they count as
// one (docs/safety.md, "A cluster as a member"). Run whenever a link's
// servers may have changed: a cluster member read a map, or a session
// learnt its server's run_id (a single member's server may be found to be
// a cluster's only once it answers); node health warns about both.
std::vector<SharedMembers> ClientCore::members_sharing() const {
  std::vector<MemberServers> members;
  members.reserve(nodes_.size());
  for (const auto& node : nodes_) members.push_back(node->servers());
  return members_not_independent(members);
}

void ClientCore::refuse_dependent_votes() {
  std::vector<std::string> refused(nodes_.size());
  for (const SharedMembers& pair : members_sharing()) {
    const bool second_is_cluster = !config_.nodes[pair.second].cluster.empty();
    const std::size_t loser = second_is_cluster ? pair.second : pair.first;
    const std::size_t other = second_is_cluster ? pair.first : pair.second;
    if (!refused[loser].empty()) continue;
    refused[loser] =
        not_independent_text(pair, config_.nodes[other].name) + " (its votes do not count)";
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    metrics_->node(config_.nodes[i].name)
        .votes_refused.store(!refused[i].empty(), std::memory_order_relaxed);
    nodes_[i]->refuse_votes(std::move(refused[i]));
  }
}

ClientCore::~ClientCore() = default;

Milliseconds ClientCore::drift_for(Milliseconds ttl) const noexcept {
  return drift_allowance(ttl, config_.lock.drift_factor, config_.lock.drift_ms);
}

void ClientCore::started(const std::shared_ptr<Operation>& op) {
  if (op->live_index_ != Operation::kNotLive) return;
  op->live_index_ = live_.size();
  live_.push_back(op);
}

void ClientCore::finished(const Operation* op) noexcept {
  const std::size_t index = op->live_index_;
  if (index == Operation::kNotLive || index >= live_.size() || live_[index].get() != op) return;
  // The last entry takes its place. The entry's reference is dropped only
  // once the list is consistent again: it may be the operation's last.
  std::shared_ptr<Operation> gone = std::move(live_[index]);
  if (index + 1 != live_.size()) {
    live_[index] = std::move(live_.back());
    live_[index]->live_index_ = index;
  }
  live_.pop_back();
  gone->live_index_ = Operation::kNotLive;
}

void ClientCore::close(std::function<void()> on_closed) {
  if (closing_) return;
  closing_ = true;
  // Abort live operations first: their callbacks may still queue releases,
  // which the connections then try to write once before closing.
  while (!live_.empty()) {
    std::shared_ptr<Operation> op = std::move(live_.back());
    live_.pop_back();
    op->live_index_ = Operation::kNotLive;
    op->abort(make_error_code(errc::shutting_down));
  }
  context_->close(
      [this] {
        wakeups_->close();
        for (auto& node : nodes_) node->close();
      },
      [this, on_closed = std::move(on_closed)] {
        if (on_closed) on_closed();
        // The last reference may be this one; nothing touches `this` after it.
        std::shared_ptr<ClientCore> keep = std::move(self_);
      });
}

}  // namespace redlock::detail
