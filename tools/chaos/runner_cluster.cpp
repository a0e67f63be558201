// The lock nodes as the run's clients reach them: the warm-up that has
// every node grant and release one lock, the fault proxy's link per client
// and node (and to the resource), the quorum file each client reads, and
// the direct configuration of the harness's own clients (warm-up, probe).
#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "runner_internal.hpp"

namespace redlock::chaos::runner_internal {

// A quorum in service has been used before: one lock taken and released
// on every node marks them all (docs/algorithm.md, "The amnesia defence"),
// so a partition set up at the barrier does not leave nodes that one side
// can never recover. With a cluster member the marks are per slot (docs/
// algorithm.md, "Key layout"): a warm-up lock in each resource's slot (its
// name as the hash tag) marks the slots the run uses.
void Run::warm_up() {
  phase("warming up the quorum");
  std::vector<std::string> names{"chaos-warm-up"};
  if (!scenario_.nodes.clusters.empty()) {
    names.clear();
    for (const std::string& resource : scenario_.all_resources()) {
      names.push_back("{" + resource + "}chaos-warm-up");
    }
  }
  BlockingClient client(direct_config());
  for (const std::string& name : names) warm_up(client, name);
}

void Run::warm_up(BlockingClient& client, const std::string& name) {
  const auto deadline = Clock::now() + milliseconds(10000);
  std::string last;
  while (Clock::now() < deadline) {
    AcquireOptions acquire;
    acquire.wait = milliseconds(2000);
    const AcquireResult result = client.acquire(redlock::Resource(name), acquire);
    if (result.ok()) {
      // The acquire decides at a majority; the release, which waits for
      // every node, proves that each one had granted it.
      const ReleaseResult released = client.release(*result.lock);
      if (released.released == static_cast<std::size_t>(node_count())) return;
      last = std::to_string(released.released) + " of " + std::to_string(node_count()) +
             " nodes held the warm-up lock";
    } else {
      last = result.error.message();
    }
  }
  throw std::runtime_error("warm-up: not every node granted and released a lock (" + last + ")");
}

void Run::start_proxy() {
  proxy_ = std::make_unique<FaultProxy>();
  links_.assign(static_cast<std::size_t>(client_count()), {});
  link_ports_.assign(static_cast<std::size_t>(client_count()), {});
  for (int c = 0; c < client_count(); ++c) {
    for (int n = 0; n < node_count(); ++n) {
      FaultProxy::LinkId id = 0;
      std::uint16_t port = 0;
      // A cluster member's servers are reached directly: its slot map
      // announces their own ports. (Its entry is never used.)
      if (nodes_->is_cluster(n)) {
        links_[static_cast<std::size_t>(c)].push_back(id);
        link_ports_[static_cast<std::size_t>(c)].push_back(port);
        continue;
      }
      const std::error_code error = proxy_->add_link(client_name(c) + "->" + node_name(n),
                                                     "127.0.0.1", nodes_->client_port(n), id, port);
      if (error) throw std::runtime_error("proxy link: " + error.message());
      links_[static_cast<std::size_t>(c)].push_back(id);
      link_ports_[static_cast<std::size_t>(c)].push_back(port);
    }
    // The last link of each client goes to the protected resource.
    FaultProxy::LinkId id = 0;
    std::uint16_t port = 0;
    const std::error_code error =
        proxy_->add_link(client_name(c) + "->r", "127.0.0.1", nodes_->resource_port(), id, port);
    if (error) throw std::runtime_error("proxy link: " + error.message());
    resource_links_.push_back(id);
    resource_ports_.push_back(port);
  }
}

std::string Run::quorum_file(const std::vector<std::uint16_t>& ports) const {
  const LockSpec& lock = scenario_.lock;
  std::ostringstream out;
  for (std::size_t n = 0; n < ports.size(); ++n) {
    const int node = static_cast<int>(n);
    out << "[[node]]\nname = \"" << node_name(node) << "\"\n";
    if (!nodes_->is_cluster(node)) {
      out << "address = \"127.0.0.1:" << ports[n] << "\"\n";
      continue;
    }
    out << "cluster = [";
    const std::vector<std::string> seeds = nodes_->seeds(node);
    for (std::size_t i = 0; i < seeds.size(); ++i)
      out << (i > 0 ? ", " : "") << '"' << seeds[i] << '"';
    out << "]\n";
  }
  // The proxy forwards bytes: TLS runs end to end, client to node.
  if (nodes_->tls())
    out << "[tls]\ntls = true\ntls_ca_file = \"" << nodes_->tls_ca_file() << "\"\n";
  out << "[lock]\nttl_ms = " << lock.ttl.count()
      << "\nretry_delay_ms = " << lock.retry_delay.count()
      << "\ndrift_factor = " << lock.drift_factor
      << "\namnesia_defence = " << (lock.amnesia_defence ? "true" : "false")
      << "\nrelease_at_majority = " << (lock.release_at_majority ? "true" : "false")
      << "\nreconnect_min_ms = 10\nreconnect_max_ms = 200\nconnect_timeout_ms = 500\n";
  if (lock.node_timeout.count() > 0)
    out << "node_timeout_ms = " << lock.node_timeout.count() << "\n";
  if (lock.max_ttl.count() > 0) out << "max_ttl_ms = " << lock.max_ttl.count() << "\n";
  return out.str();
}

void Run::write_file(const std::filesystem::path& file, const std::string& text) const {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

QuorumConfig Run::direct_config() const {
  QuorumConfig config;
  for (int n = 0; n < node_count(); ++n) {
    NodeConfig node;
    node.name = node_name(n);
    if (nodes_->is_cluster(n)) {
      for (const std::string& seed : nodes_->seeds(n)) {
        const AddressResult parsed = parse_address(seed);
        if (!parsed.address) throw std::runtime_error("seed " + seed + ": " + parsed.error);
        node.cluster.push_back(ClusterSeed{parsed.address->host, parsed.address->port, {}});
      }
      // (As a quorum file sets them: the first seed's, for messages.)
      node.host = node.cluster.front().host;
      node.port = node.cluster.front().port;
      config.nodes.push_back(node);
      continue;
    }
    node.host = "127.0.0.1";
    node.port = nodes_->client_port(n);
    node.tls.enabled = nodes_->tls();
    node.tls.ca_file = nodes_->tls_ca_file();
    config.nodes.push_back(node);
  }
  config.lock.ttl = scenario_.lock.ttl;
  config.lock.drift_factor = scenario_.lock.drift_factor;
  config.lock.retry_delay = milliseconds(20);
  config.lock.amnesia_defence = scenario_.lock.amnesia_defence;
  config.lock.max_ttl = scenario_.lock.max_ttl;
  config.lock.node_timeout = scenario_.lock.node_timeout;
  // The harness's own clients read every node's outcome (the warm-up's
  // release proves each node granted), so their releases wait for all.
  config.lock.release_at_majority = false;
  config.source = "chaos probe";
  return config;
}

}  // namespace redlock::chaos::runner_internal
