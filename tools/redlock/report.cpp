#include "report.hpp"

#include <cstdio>
#include <string>

#include "cli_args.hpp"
#include "exit_codes.hpp"
#include "text/escape.hpp"

namespace redlock::cli {
namespace {

bool is_fault(NodeStatus status) {
  switch (status) {
    case NodeStatus::timeout:
    case NodeStatus::unreachable:
    case NodeStatus::error:
    case NodeStatus::replicas_short:
    case NodeStatus::recovering:  // lost its data: its vote is missing
    case NodeStatus::permits_differ:
      return true;
    case NodeStatus::granted:
    case NodeStatus::busy:
    case NodeStatus::extended:
    case NodeStatus::released:
    case NodeStatus::not_held:
    case NodeStatus::pending:
    case NodeStatus::not_asked:
      return false;
  }
  return false;
}

void write_all(std::FILE* stream, std::string_view text) {
  (void)std::fwrite(text.data(), 1, text.size(), stream);
}

// "OPERATION: node NAME: STATUS[: DETAIL]".
void print_node_answer(std::string_view operation, const NodeOutcome& node) {
  std::string line = std::string(operation) + ": node " + detail::escape_text(node.name) + ": " +
                     std::string(to_string(node.status));
  if (!node.detail.empty()) line += ": " + detail::escape_text(node.detail);
  print_error(line);
}

}  // namespace

void print_error(std::string_view line) {
  // Escaped here as well as where each piece was composed: whatever a
  // caller forgot, nothing can end the line early or reach the terminal
  // as an escape. Escaping escaped text changes nothing.
  std::string text = "redlock: ";
  text.append(detail::escape_text(line));
  text += '\n';
  write_all(stderr, text);
}

void print_output(std::string_view text) {
  write_all(stdout, text);
  write_all(stdout, "\n");
  (void)std::fflush(stdout);
}

std::size_t print_node_faults(std::string_view operation, const std::vector<NodeOutcome>& nodes) {
  std::size_t printed = 0;
  for (const NodeOutcome& node : nodes) {
    if (!is_fault(node.status)) continue;
    print_node_answer(operation, node);
    ++printed;
  }
  return printed;
}

std::size_t print_node_answers(std::string_view operation, const std::vector<NodeOutcome>& nodes) {
  for (const NodeOutcome& node : nodes) print_node_answer(operation, node);
  return nodes.size();
}

void write_node_outcomes(JsonWriter& json, const std::vector<NodeOutcome>& nodes) {
  json.key("nodes").begin_array();
  for (const NodeOutcome& node : nodes) {
    json.begin_object();
    json.key("node").string(node.name);
    json.key("status").string(to_string(node.status));
    json.key("latency_us").number(static_cast<std::int64_t>(node.latency.count()));
    json.key("holder_ttl_ms");
    if (node.status == NodeStatus::busy && node.holder_ttl_ms >= 0) {
      json.number(static_cast<std::int64_t>(node.holder_ttl_ms));
    } else {
      json.null();
    }
    json.key("detail");
    if (node.detail.empty()) {
      json.null();
    } else {
      json.string(node.detail);
    }
    json.end_object();
  }
  json.end_array();
}

void print_read_failure(std::string_view command, std::string_view target, std::error_code error,
                        const std::vector<NodeInspection>& nodes) {
  if (error) {
    std::size_t answered = 0;
    for (const NodeInspection& node : nodes) {
      if (node.answered) ++answered;
    }
    std::string line = std::string(command) + " " + std::string(target) + ": " +
                       std::string(error_name(error)) + ": ";
    line += error == make_error_code(errc::no_quorum)
                ? "only " + std::to_string(answered) + " of " + std::to_string(nodes.size()) +
                      " nodes answered; a majority needs " +
                      std::to_string(majority_of(nodes.size()))
                : error.message();
    print_error(line);
  }
  for (const NodeInspection& node : nodes) {
    if (node.answered) continue;
    std::string line =
        std::string(command) + ": node " + detail::escape_text(node.name) + ": no answer";
    if (!node.detail.empty()) line += ": " + detail::escape_text(node.detail);
    print_error(line);
  }
}

std::string next_step(std::string_view anchor) {
  return "; next step: docs/operations.md#" + std::string(anchor);
}

void print_not_independent(std::string_view command, std::string_view first,
                           std::string_view second, const detail::SharedMembers& pair) {
  print_error(std::string(command) + ": node " + detail::escape_text(first) + " and node " +
              detail::escape_text(second) +
              (pair.same_cluster ? " are one Redis Cluster (both list the master node id "
                                 : " share a server (both have run_id ") +
              detail::escape_text(pair.shared) + "): quorum members must fail independently" +
              next_step("how-many-nodes-and-where"));
}

std::string endpoint_address(const std::string& host, std::uint16_t port,
                             const std::string& unix_path) {
  if (!unix_path.empty()) return "unix://" + unix_path;
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace redlock::cli
