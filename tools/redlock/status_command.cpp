// `redlock status`: every node asked in parallel, one thread each, so one
// silent node costs one timeout, not N.
#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "json_writer.hpp"
#include "node_probe.hpp"
#include "protocol/same_server.hpp"
#include "quorum_setup.hpp"
#include "report.hpp"
#include "text/escape.hpp"

namespace redlock::cli {
namespace {

struct Summary {
  std::size_t quorum = 0;
  std::size_t reachable = 0;
  // With a resource: nodes that could grant it now (no key, not
  // recovering) / nodes where its key exists.
  std::size_t free_nodes = 0;
  std::size_t held_nodes = 0;
  [[nodiscard]] bool grantable() const { return free_nodes >= quorum; }
};

Summary summarize(const std::vector<NodeReport>& reports) {
  Summary summary;
  summary.quorum = majority_of(reports.size());
  for (const NodeReport& report : reports) {
    if (report.reachable) ++summary.reachable;
    if (report.pttl_ms && *report.pttl_ms == -2 && !report.recovering_ms) ++summary.free_nodes;
    if (report.pttl_ms && *report.pttl_ms != -2) ++summary.held_nodes;
  }
  return summary;
}

// For each node, the first earlier node that answered with the same run_id
// (INFO server), if any: one server named twice is one master, not two.
std::vector<std::optional<std::size_t>> same_servers(const std::vector<NodeReport>& reports) {
  std::vector<std::string_view> run_ids;
  run_ids.reserve(reports.size());
  for (const NodeReport& report : reports) {
    run_ids.emplace_back(report.run_id ? std::string_view(*report.run_id) : std::string_view());
  }
  return detail::earlier_same_server(run_ids);
}

std::vector<NodeReport> probe_all(const QuorumConfig& config,
                                  const std::optional<std::string>& resource) {
  std::vector<NodeReport> reports(config.nodes.size());
  std::vector<std::thread> threads;
  threads.reserve(config.nodes.size());
  for (std::size_t i = 0; i < config.nodes.size(); ++i) {
    threads.emplace_back([&, i] {
      reports[i] = probe_node(config.nodes[i], config.lock.connect_timeout, config.lock, resource);
    });
  }
  for (std::thread& thread : threads) thread.join();
  return reports;
}

std::string render_json(const std::vector<NodeReport>& reports, const Summary& summary,
                        const std::vector<std::optional<std::size_t>>& same,
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
  json.key("nodes").begin_array();
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const NodeReport& report = reports[i];
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
      json.string(reports[*same[i]].name);
    } else {
      json.null();
    }
    json.key("appendonly").string(report.appendonly);
    json.key("appendfsync").string(report.appendfsync);
    json.key("persistence").string(persistence_mode(report));
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

std::string state_text(const NodeReport& report) {
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

std::string render_table(const std::vector<NodeReport>& reports, const Summary& summary,
                         const std::optional<std::string>& resource) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header{"NODE", "STATE", "RTT", "ROLE", "PERSISTENCE"};
  if (resource) {
    header.insert(header.end(), {"PTTL", "FENCE", "HOLDER"});
  }
  rows.push_back(header);
  for (const NodeReport& report : reports) {
    // Names come from the file, the role from the node: escaped.
    std::vector<std::string> row{detail::escape_text(report.name), state_text(report),
                                 round_trip_text(report),
                                 report.reachable ? detail::escape_text(report.role) : "-",
                                 report.reachable ? persistence_mode(report) : "-"};
    if (resource) {
      row.push_back(pttl_text(report));
      row.push_back(report.fence_counter ? std::to_string(*report.fence_counter) : "-");
      row.push_back(report.holder ? printable(*report.holder) : "-");
    }
    rows.push_back(std::move(row));
  }
  std::string out = render_rows(rows);
  out += "\nquorum " + std::to_string(summary.quorum) + " of " + std::to_string(reports.size()) +
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
  const std::vector<NodeReport> reports = probe_all(*config, invocation.resource);
  const Summary summary = summarize(reports);
  const std::vector<std::optional<std::size_t>> same = same_servers(reports);

  print_output(invocation.json ? render_json(reports, summary, same, invocation.resource)
                               : render_table(reports, summary, invocation.resource));
  for (const NodeReport& report : reports) {
    if (!report.error.empty()) {
      print_error("status: node " + detail::escape_text(report.name) + ": " +
                  detail::escape_text(report.error));
    }
  }
  for (const NodeConfig& node : config->nodes) {
    for (const std::string& warning : transport_warnings(node)) {
      print_error("status: warning: node " + detail::escape_text(node.name) + ": " + warning);
    }
  }
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (!same[i]) continue;
    print_error("status: warning: node " + detail::escape_text(reports[i].name) +
                " is the same server as node " + detail::escape_text(reports[*same[i]].name) +
                " (one run_id): it counts as one master, not two" +
                next_step("how-many-nodes-and-where"));
  }
  // A node recovered by a client with a shorter max_ttl waited that
  // client's delay, which may be shorter than this configuration's locks
  // live (docs/operations.md, "Restarts and the amnesia defence").
  const Milliseconds max_ttl = effective_max_ttl(config->lock);
  for (const NodeReport& report : reports) {
    if (!report.marker_max_ttl || *report.marker_max_ttl == max_ttl) continue;
    print_error("status: warning: node " + detail::escape_text(report.name) +
                " was marked by a client with max_ttl " +
                std::to_string(report.marker_max_ttl->count()) + " ms, this configuration's is " +
                std::to_string(max_ttl.count()) +
                " ms: every client of a quorum needs the same max_ttl, or a recovery "
                "delay is shorter than some lock" +
                next_step("restarts-and-the-amnesia-defence"));
  }
  for (const NodeReport& report : reports) {
    if (!report.first_use_note || !report.recovering_ms) continue;
    print_error("status: warning: node " + detail::escape_text(report.name) +
                " grants nothing for " + std::to_string(*report.recovering_ms) +
                " ms more: " + detail::escape_text(*report.first_use_note) +
                "; if the quorum is brand-new, `redlock init` declares it so" +
                next_step("first-use"));
    break;  // the same story on every node that answered: told once
  }
  if (summary.reachable >= summary.quorum) return exit_code::success;
  print_error("status: only " + std::to_string(summary.reachable) + " of " +
              std::to_string(reports.size()) + " nodes reachable; a quorum needs " +
              std::to_string(summary.quorum) + next_step("checking-the-quorum-redlock-status"));
  return exit_code::not_acquired;
}

}  // namespace redlock::cli
