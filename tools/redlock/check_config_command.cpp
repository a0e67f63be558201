// `redlock check-config FILE`: load the file exactly as the other
// subcommands would and summarise what it means.
#include <string>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "redlock/config.hpp"
#include "report.hpp"

namespace redlock::cli {
namespace {

std::string ms(Milliseconds duration) { return std::to_string(duration.count()) + " ms"; }

std::string tls_text(const TlsConfig& tls) {
  std::string text = ", TLS";
  if (!tls.verify) return text + " without certificate verification";
  text += " verified against ";
  if (!tls.ca_file.empty()) {
    text += printable(tls.ca_file);
    if (!tls.ca_dir.empty()) text += " and " + printable(tls.ca_dir);
  } else if (!tls.ca_dir.empty()) {
    text += printable(tls.ca_dir);
  } else {
    text += "the system's CA store";
  }
  if (!tls.server_name.empty()) text += " as " + printable(tls.server_name);
  if (!tls.cert_file.empty()) text += ", client certificate " + printable(tls.cert_file);
  return text;
}

std::string endpoint_text(const std::string& host, std::uint16_t port,
                          const std::string& unix_path) {
  // A path is anyone's bytes: quoted.
  if (!unix_path.empty()) return printable("unix://" + unix_path);
  return endpoint_address(host, port, unix_path);
}

std::string node_line(const QuorumConfig& config, const NodeConfig& node) {
  std::string line;
  if (node.cluster.empty()) {
    const std::string address = endpoint_text(node.host, node.port, node.unix_path);
    line = "  " + address;
    if (node.name != address && printable(node.name) != address) {
      line += " (" + printable(node.name) + ")";
    }
  } else {
    line = "  " + printable(node.name) + ": a Redis Cluster, seeds";
    for (const ClusterSeed& seed : node.cluster) {
      line += " " + endpoint_text(seed.host, seed.port, seed.unix_path);
    }
    line += " (keys per slot)";
  }
  if (node.tls.enabled) line += tls_text(node.tls);
  if (!node.username.empty()) line += ", user " + printable(node.username);
  if (!node.password_env.empty()) {
    line += ", password from $" + node.password_env;
  } else if (!node.password.empty()) {
    line += ", password in the address";
  }
  if (node.db != 0) line += ", db " + std::to_string(node.db);
  line += ", request timeout " + ms(effective_node_timeout(config.lock, node));
  if (node.min_replicas > 0) {
    line += ", WAIT for " + std::to_string(node.min_replicas) + " replica(s)";
  }
  return line + "\n";
}

std::string summary_of(const std::string& file, const QuorumConfig& config) {
  const LockConfig& lock = config.lock;
  const std::size_t count = config.nodes.size();
  const std::size_t quorum = majority_of(count);
  const Milliseconds drift = lock_drift(lock, lock.ttl);
  std::string out = printable(file) + ": valid\n";
  out += std::to_string(count) + (count == 1 ? " node" : " nodes") + ", quorum " +
         std::to_string(quorum) + " (tolerates " + std::to_string(count - quorum) +
         " unavailable)\n";
  for (const NodeConfig& node : config.nodes) out += node_line(config, node);
  std::string warnings;
  for (const NodeConfig& node : config.nodes) {
    for (const std::string& warning : transport_warnings(node)) {
      warnings += "\nwarning: node " + printable(node.name) + ": " + warning;
    }
  }
  out += "lock: ttl " + ms(lock.ttl) + ", drift " + ms(drift) + ", node timeout " +
         (lock.node_timeout.count() == 0 ? "automatic" : ms(lock.node_timeout)) +
         ", connect timeout " + ms(lock.connect_timeout) + ", min validity " +
         ms(lock.min_validity) + "\n";
  out += "retries: " +
         (lock.retry_count < 0 ? std::string("until the caller's wait ends")
                               : std::to_string(lock.retry_count)) +
         ", mean delay " + ms(lock.retry_delay) + " (full jitter); fenced " +
         (lock.fenced ? "yes" : "no") + "; key prefix " + printable(lock.key_prefix) +
         ", lock key " + printable(lock.lock_key) + "\n";
  out += std::string("nodes: amnesia defence ") + (lock.amnesia_defence ? "on" : "off") +
         ", strict persistence " + (lock.strict_persistence ? "on" : "off") +
         (lock.strict_transport ? ", strict transport on" : "") + "; release ends " +
         (lock.release_at_majority ? "at a majority" : "when every node answered");
  if (count == 1) {
    out +=
        "\nnote: a single node tolerates no failure, and the amnesia defence cannot work with "
        "it: a restart that lost its data looks like a brand-new quorum (no other node to "
        "recover from), so every lock and fencing counter is forgotten; only appendfsync "
        "always keeps them (docs/safety.md)" +
        next_step("how-many-nodes-and-where");
  } else if (count % 2 == 0) {
    out += "\nnote: " + std::to_string(count) + " nodes tolerate no more failures than " +
           std::to_string(count - 1) + "; an odd count gives more per node" +
           next_step("how-many-nodes-and-where");
  }
  return out + warnings;
}

}  // namespace

int check_config_command(const Invocation& invocation) {
  const ConfigResult loaded = load_config(invocation.config_file);
  if (!loaded.ok()) {
    print_error(loaded.error.to_string());
    return exit_code::config;
  }
  print_output(summary_of(invocation.config_file, *loaded.config));
  return exit_code::success;
}

}  // namespace redlock::cli
