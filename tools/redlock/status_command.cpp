// `redlock status`: every node asked in parallel, one thread each, so one
// silent node costs one timeout, not N.
#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cluster_probe.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "json_writer.hpp"
#include "node_probe.hpp"
#include "parallel.hpp"
#include "protocol/same_server.hpp"
#include "quorum_setup.hpp"
#include "report.hpp"
#include "text/escape.hpp"

namespace redlock::cli {
namespace {

// One member as status sees it: a single node's report; for a cluster
// member, its row (made from its cluster's report) and that report.
struct MemberReport {
  NodeReport row;
  std::optional<ClusterReport> cluster;
};

struct Summary {
  std::size_t quorum = 0;
  std::size_t reachable = 0;
  // With a resource: nodes that could grant it now (no key, not
  // recovering) / nodes where its key exists.
  std::size_t free_nodes = 0;
  std::size_t held_nodes = 0;
  [[nodiscard]] bool grantable() const { return free_nodes >= quorum; }
};

Summary summarize(const std::vector<MemberReport>& members) {
  Summary summary;
  summary.quorum = majority_of(members.size());
  for (const MemberReport& member : members) {
    const NodeReport& report = member.row;
    if (report.reachable) ++summary.reachable;
    if (report.pttl_ms && *report.pttl_ms == -2 && !report.recovering_ms) ++summary.free_nodes;
    if (report.pttl_ms && *report.pttl_ms != -2) ++summary.held_nodes;
  }
  return summary;
}

// For each node, the first earlier node that answered with the same run_id
// (INFO server), if any: one server named twice is one master, not two.
std::vector<std::optional<std::size_t>> same_servers(const std::vector<MemberReport>& members) {
  std::vector<std::string_view> run_ids;
  run_ids.reserve(members.size());
  for (const MemberReport& member : members) {
    const NodeReport& report = member.row;
    run_ids.emplace_back(report.run_id ? std::string_view(*report.run_id) : std::string_view());
  }
  return detail::earlier_same_server(run_ids);
}

// A cluster member's row: up when its map was read, every slot has a
// master and every master answered; the resource's columns are its slot's
// master's.
NodeReport cluster_row(const NodeConfig& member, const ClusterReport& cluster) {
  NodeReport row;
  row.name = member.name;
  row.address = cluster.seed;
  row.role = "cluster";
  row.reachable = cluster.up();
  row.error = cluster.error;
  if (!cluster.seed.empty() && !cluster.up()) {
    std::size_t silent = 0;
    for (const ShardReport& shard : cluster.shards) silent += shard.node.reachable ? 0 : 1;
    row.error = std::to_string(cluster.covered) + " of " + std::to_string(detail::kClusterSlots) +
                " slots have a master, " + std::to_string(silent) + " of " +
                std::to_string(cluster.shards.size()) + " masters did not answer";
  }
  if (cluster.resource_shard) {
    const NodeReport& master = cluster.shards[*cluster.resource_shard].node;
    row.pttl_ms = master.pttl_ms;
    row.holder = master.holder;
    row.marked = master.marked;
    row.marker_max_ttl = master.marker_max_ttl;
    row.marker_run_id = master.marker_run_id;
    row.recovering_ms = master.recovering_ms;
    row.first_use_note = master.first_use_note;
    row.fence_counter = master.fence_counter;
  }
  return row;
}

std::vector<MemberReport> probe_all(const QuorumConfig& config,
                                    const std::optional<std::string>& resource) {
  std::vector<MemberReport> reports(config.nodes.size());
  for_each_in_parallel(config.nodes.size(), [&](std::size_t i) {
    const NodeConfig& node = config.nodes[i];
    if (node.cluster.empty()) {
      reports[i].row = probe_node(node, config.lock.connect_timeout, config.lock, resource,
                                  detail::key_layout(config));
      return;
    }
    reports[i].cluster = probe_cluster(node, config.lock.connect_timeout, config.lock, resource);
    reports[i].row = cluster_row(node, *reports[i].cluster);
  });
  return reports;
}

// A member's persistence: a node's mode; a cluster's when all its masters
// share one, else each mode once.
std::string member_persistence(const MemberReport& member) {
  if (!member.cluster) return persistence_mode(member.row);
  std::vector<std::string> modes;
  for (const ShardReport& shard : member.cluster->shards) {
    if (!shard.node.reachable) continue;
    const std::string mode = persistence_mode(shard.node);
    if (std::find(modes.begin(), modes.end(), mode) == modes.end()) modes.push_back(mode);
  }
  if (modes.empty()) return "unknown";
  std::string text = modes.front();
  for (std::size_t i = 1; i < modes.size(); ++i) text += " / " + modes[i];
  return text;
}

// The members that are not independent (one of them a cluster).
std::vector<detail::SharedMembers> shared_members(const std::vector<MemberReport>& reports) {
  std::vector<detail::MemberServers> servers(reports.size());
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (!reports[i].cluster) {
      if (reports[i].row.run_id) servers[i].run_ids.push_back(*reports[i].row.run_id);
      continue;
    }
    servers[i].cluster = true;
    for (const ShardReport& shard : reports[i].cluster->shards) {
      servers[i].node_ids.push_back(shard.master.id);
      if (shard.node.run_id) servers[i].run_ids.push_back(*shard.node.run_id);
    }
  }
  return detail::members_not_independent(servers);
}

std::string slots_text(const ShardReport& shard) {
  std::string text;
  for (const auto& [first, last] : shard.ranges) {
    if (!text.empty()) text += ",";
    text += std::to_string(first);
    if (last != first) text += "-" + std::to_string(last);
  }
  return text;
}

void write_cluster_json(JsonWriter& json, const ClusterReport& cluster) {
  json.begin_object();
  json.key("seed").string(cluster.seed);
  json.key("covered_slots").number(static_cast<std::uint64_t>(cluster.covered));
  json.key("shards").begin_array();
  for (const ShardReport& shard : cluster.shards) {
    json.begin_object();
    json.key("master").string(shard.node.address);
    json.key("node_id").string(shard.master.id);
    json.key("run_id").optional_string(shard.node.run_id);
    json.key("slots").begin_array();
    for (const auto& [first, last] : shard.ranges) {
      json.begin_array();
      json.number(static_cast<std::uint64_t>(first));
      json.number(static_cast<std::uint64_t>(last));
      json.end_array();
    }
    json.end_array();
    json.key("slot_count").number(static_cast<std::uint64_t>(shard.slots));
    json.key("reachable").boolean(shard.node.reachable);
    json.key("rtt_us");
    if (shard.node.round_trip) {
      json.number(static_cast<std::int64_t>(shard.node.round_trip->count()));
    } else {
      json.null();
    }
    json.key("role").string(shard.node.role);
    json.key("persistence").string(persistence_mode(shard.node));
    json.key("error");
    if (shard.node.error.empty()) {
      json.null();
    } else {
      json.string(shard.node.error);
    }
    json.end_object();
  }
  json.end_array();
  json.end_object();
}

std::string render_json(const std::vector<MemberReport>& members, const Summary& summary,
                        const std::vector<std::optional<std::size_t>>& same,
                        const std::vector<detail::SharedMembers>& shared,
                        const std::optional<std::string>& resource) {
  JsonWriter json;
  json.begin_object();
  json.key("quorum").number(static_cast<std::uint64_t>(summary.quorum));
  json.key("reachable").number(static_cast<std::uint64_t>(summary.reachable));
  if (resource) {
    json.key("resource").string(*resource);
    json.key("free_nodes").number(static_cast<std::uint64_t>(summary.free_nodes));
    json.key("held_nodes").number(static_cast<std::uint64_t>(summary.held_nodes));
    json.key("grantable").boolean(summary.grantable());
  }
  json.key("not_independent").begin_array();
  for (const detail::SharedMembers& pair : shared) {
    json.begin_object();
    json.key("nodes").begin_array();
    json.string(members[pair.first].row.name);
    json.string(members[pair.second].row.name);
    json.end_array();
    json.key("reason").string(pair.same_cluster ? "one cluster" : "one server");
    json.key("shared_id").string(pair.shared);
    json.end_object();
  }
  json.end_array();
  json.key("nodes").begin_array();
  for (std::size_t i = 0; i < members.size(); ++i) {
    const NodeReport& report = members[i].row;
    json.begin_object();
    json.key("node").string(report.name);
    json.key("address").string(report.address);
    json.key("reachable").boolean(report.reachable);
    json.key("rtt_us");
    if (report.round_trip) {
      json.number(static_cast<std::int64_t>(report.round_trip->count()));
    } else {
      json.null();
    }
    json.key("role").string(report.role);
    json.key("run_id").optional_string(report.run_id);
    json.key("same_server_as");
    if (same[i]) {
      json.string(members[*same[i]].row.name);
    } else {
      json.null();
    }
    json.key("appendonly").string(report.appendonly);
    json.key("appendfsync").string(report.appendfsync);
    json.key("persistence").string(member_persistence(members[i]));
    json.key("marked");
    if (report.marked) {
      json.boolean(*report.marked);
    } else {
      json.null();
    }
    json.key("marker_max_ttl_ms");
    if (report.marker_max_ttl) {
      json.number(static_cast<std::int64_t>(report.marker_max_ttl->count()));
    } else {
      json.null();
    }
    json.key("recovering_ms").optional_number(report.recovering_ms);
    json.key("promoted");
    if (report.promoted) {
      json.boolean(*report.promoted);
    } else {
      json.null();
    }
    json.key("marker_run_id").optional_string(report.marker_run_id);
    if (resource) {
      json.key("pttl_ms").optional_number(report.pttl_ms);
      json.key("holder").optional_string(report.holder);
      json.key("fence").optional_number(report.fence_counter);
    }
    json.key("error");
    if (report.error.empty()) {
      json.null();
    } else {
      json.string(report.error);
    }
    json.key("cluster");
    if (members[i].cluster) {
      write_cluster_json(json, *members[i].cluster);
    } else {
      json.null();
    }
    json.end_object();
  }
  json.end_array();
  json.end_object();
  return json.str();
}

std::string round_trip_text(const NodeReport& report) {
  if (!report.round_trip) return "-";
  std::array<char, 32> text{};
  std::snprintf(text.data(), text.size(), "%.2f ms",
                static_cast<double>(report.round_trip->count()) / 1000.0);
  return text.data();
}

std::string state_text(const MemberReport& member) {
  const NodeReport& report = member.row;
  if (member.cluster && !member.cluster->up()) {
    return member.cluster->answered() ? "degraded" : "down";
  }
  if (!report.reachable) return "down";
  if (report.recovering_ms) return "recovering";
  return "up";
}

std::string pttl_text(const NodeReport& report) {
  if (!report.pttl_ms) return "-";
  if (*report.pttl_ms == -2) return "free";
  if (*report.pttl_ms == -1) return "no expiry";
  return std::to_string(*report.pttl_ms) + " ms";
}

// Pads every column to its widest cell; the last column is not padded.
std::string render_rows(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(widths[c] - row[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string render_table(const std::vector<MemberReport>& members, const Summary& summary,
                         const std::optional<std::string>& resource) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header{"NODE", "STATE", "RTT", "ROLE", "PERSISTENCE"};
  if (resource) {
    header.insert(header.end(), {"PTTL", "FENCE", "HOLDER"});
  }
  rows.push_back(header);
  for (const MemberReport& member : members) {
    const NodeReport& report = member.row;
    const bool answered = member.cluster ? member.cluster->answered() : report.reachable;
    // Names come from the file, the role from the node: escaped.
    std::vector<std::string> row{detail::escape_text(report.name), state_text(member),
                                 round_trip_text(report),
                                 answered ? detail::escape_text(report.role) : "-",
                                 answered ? member_persistence(member) : "-"};
    if (resource) {
      row.push_back(pttl_text(report));
      row.push_back(report.fence_counter ? std::to_string(*report.fence_counter) : "-");
      row.push_back(report.holder ? printable(*report.holder) : "-");
    }
    rows.push_back(std::move(row));
  }
  std::string out = render_rows(rows);
  for (const MemberReport& member : members) {
    if (!member.cluster || member.cluster->seed.empty()) continue;
    const ClusterReport& cluster = *member.cluster;
    out += "\n" + detail::escape_text(member.row.name) + ": map from " +
           detail::escape_text(cluster.seed) + ", " + std::to_string(cluster.shards.size()) +
           " shards, " + std::to_string(cluster.covered) + " of " +
           std::to_string(detail::kClusterSlots) + " slots covered\n";
    std::vector<std::vector<std::string>> shards{
        {"  MASTER", "NODE ID", "RUN ID", "SLOTS", "STATE", "RTT", "PERSISTENCE"}};
    for (const ShardReport& shard : cluster.shards) {
      const NodeReport& node = shard.node;
      // A node id is 40 hex digits; its first 8 tell shards apart (the
      // JSON has them whole).
      shards.push_back({"  " + detail::escape_text(node.address),
                        detail::escape_text(shard.master.id.substr(0, 8)),
                        node.run_id ? detail::escape_text(node.run_id->substr(0, 8)) : "-",
                        slots_text(shard) + " (" + std::to_string(shard.slots) + ")",
                        node.reachable ? "up" : "down", round_trip_text(node),
                        node.reachable ? persistence_mode(node) : "-"});
    }
    out += render_rows(shards);
  }
  out += "\nquorum " + std::to_string(summary.quorum) + " of " + std::to_string(members.size()) +
         ": " + std::to_string(summary.reachable) + " reachable";
  out += summary.reachable >= summary.quorum ? "\n" : " (no quorum)\n";
  if (resource) {
    out += "resource " + printable(*resource) + ": held on " + std::to_string(summary.held_nodes) +
           ", free on " + std::to_string(summary.free_nodes) + "; " +
           (summary.grantable() ? "the quorum could grant it now" : "cannot be granted now");
  } else {
    out.pop_back();  // print_output adds the final newline
  }
  return out;
}

}  // namespace

int status_command(const Invocation& invocation) {
  std::optional<QuorumConfig> config = load_quorum(invocation);
  if (!config) return exit_code::config;
  const std::vector<MemberReport> members = probe_all(*config, invocation.resource);
  const Summary summary = summarize(members);
  const std::vector<std::optional<std::size_t>> same = same_servers(members);
  const std::vector<detail::SharedMembers> shared = shared_members(members);

  print_output(invocation.json ? render_json(members, summary, same, shared, invocation.resource)
                               : render_table(members, summary, invocation.resource));
  for (const MemberReport& member : members) {
    if (!member.row.error.empty()) {
      print_error("status: node " + detail::escape_text(member.row.name) + ": " +
                  detail::escape_text(member.row.error));
    }
    if (!member.cluster) continue;
    for (const ShardReport& shard : member.cluster->shards) {
      if (shard.node.error.empty()) continue;
      print_error("status: node " + detail::escape_text(member.row.name) + ": master " +
                  detail::escape_text(shard.node.address) + ": " +
                  detail::escape_text(shard.node.error));
    }
  }
  for (const NodeConfig& node : config->nodes) {
    for (const std::string& warning : transport_warnings(node)) {
      print_error("status: warning: node " + detail::escape_text(node.name) + ": " + warning);
    }
  }
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (!same[i]) continue;
    print_error("status: warning: node " + detail::escape_text(members[i].row.name) +
                " is the same server as node " + detail::escape_text(members[*same[i]].row.name) +
                " (one run_id): it counts as one master, not two" +
                next_step("how-many-nodes-and-where"));
  }
  // A node recovered by a client with a shorter max_ttl waited that
  // client's delay, which may be shorter than this configuration's locks
  // live (docs/operations.md, "Restarts and the amnesia defence").
  const Milliseconds max_ttl = effective_max_ttl(config->lock);
  for (const MemberReport& member : members) {
    const NodeReport& report = member.row;
    if (!report.marker_max_ttl || *report.marker_max_ttl == max_ttl) continue;
    print_error("status: warning: node " + detail::escape_text(report.name) +
                " was marked by a client with max_ttl " +
                std::to_string(report.marker_max_ttl->count()) + " ms, this configuration's is " +
                std::to_string(max_ttl.count()) +
                " ms: every client of a quorum needs the same max_ttl, or a recovery "
                "delay is shorter than some lock" +
                next_step("restarts-and-the-amnesia-defence"));
  }
  // A replica promoted under a member's address that still holds its old
  // master's marker: the next session a client opens there takes the
  // marker away (check_marker), and the node is recovered with the delay.
  for (const MemberReport& member : members) {
    const NodeReport& report = member.row;
    if (!report.promoted.value_or(false) || !report.marked.value_or(false) || !report.run_id ||
        report.marker_run_id == report.run_id) {
      continue;
    }
    print_error("status: warning: node " + detail::escape_text(report.name) +
                " was promoted from a replica and its identity marker does not name it: it "
                "may lack grants its old master acknowledged, and the next client session there "
                "takes the marker away; the node then grants nothing for max_ttl" +
                next_step("restarts-and-the-amnesia-defence"));
  }
  for (const MemberReport& member : members) {
    const NodeReport& report = member.row;
    if (!report.first_use_note || !report.recovering_ms) continue;
    print_error("status: warning: node " + detail::escape_text(report.name) +
                " grants nothing for " + std::to_string(*report.recovering_ms) +
                " ms more: " + detail::escape_text(*report.first_use_note) +
                "; if the quorum is brand-new, `redlock init` declares it so" +
                next_step("first-use"));
    break;  // the same story on every node that answered: told once
  }
  // Members that are not independent make no quorum: one cluster named
  // twice, or a server in two members, lets one failure cost two votes.
  for (const detail::SharedMembers& pair : shared) {
    print_not_independent("status", members[pair.first].row.name, members[pair.second].row.name,
                          pair);
  }
  if (!shared.empty()) return exit_code::config;
  if (summary.reachable >= summary.quorum) return exit_code::success;
  print_error("status: only " + std::to_string(summary.reachable) + " of " +
              std::to_string(members.size()) + " nodes reachable; a quorum needs " +
              std::to_string(summary.quorum) + next_step("checking-the-quorum-redlock-status"));
  return exit_code::not_acquired;
}

}  // namespace redlock::cli
