// How results reach the user: error lines on stderr, results on stdout.
//
// Every error is one line on stderr, "redlock: ...", naming the node at
// fault where there is one. User-supplied text in it is quoted with
// printable(); text from nodes and files is escaped (text/escape.hpp), and
// print_error escapes the whole line once more, so nothing can break the
// line or inject terminal escapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "json_writer.hpp"
#include "protocol/same_server.hpp"
#include "redlock/inspection.hpp"
#include "redlock/outcome.hpp"

namespace redlock::cli {

// Writes "redlock: <line>\n" to stderr.
void print_error(std::string_view line);

// Writes `text` and a newline to stdout and flushes it.
void print_output(std::string_view text);

// One stderr line per node whose answer was a fault (timeout, unreachable,
// an error reply, too few replicas,
// recovering from data loss): "redlock: node NAME: STATUS: DETAIL".
// Nodes that answered as the protocol expects (granted, busy, not_held, ...)
// are not faults. Returns how many lines were printed.
std::size_t print_node_faults(std::string_view operation, const std::vector<NodeOutcome>& nodes);

// One stderr line per node, whatever it answered, in the same form:
// "redlock: OPERATION: node NAME: STATUS[: DETAIL]" (a lost lock's renewal,
// where not_held is the answer that matters). Returns how many lines.
std::size_t print_node_answers(std::string_view operation, const std::vector<NodeOutcome>& nodes);

// For a read-only round (inspect, leader) that failed: one line for the
// failure — for no_quorum "COMMAND TARGET: no_quorum: only A of N nodes
// answered; a majority needs Q" — then "COMMAND: node NAME: no answer:
// DETAIL" per node that did not answer (escaped).
void print_read_failure(std::string_view command, std::string_view target, std::error_code error,
                        const std::vector<NodeInspection>& nodes);

// "nodes": [{"node", "status", "latency_us", "holder_ttl_ms", "detail"}, ...]
// holder_ttl_ms is set for busy answers with a known PTTL, detail for
// errors; both are null otherwise.
void write_node_outcomes(JsonWriter& json, const std::vector<NodeOutcome>& nodes);

// "; next step: docs/operations.md#ANCHOR": the end of every warning and
// note the tools print, naming the section that says what to do
// (tests/cli/next_step_test.cpp checks each anchor exists).
[[nodiscard]] std::string next_step(std::string_view anchor);

// "COMMAND: node A and node B are one Redis Cluster (both list the master
// node id ID) | share a server (both have run_id ID): quorum members must
// fail independently; next step: ...": status's and init's refusal of a
// quorum whose members are not independent (exit 78).
void print_not_independent(std::string_view command, std::string_view first,
                           std::string_view second, const detail::SharedMembers& pair);

// Majority of n nodes: n/2 + 1.
// A server's address as host:port ([v6]:port), or unix:///path for a
// socket, unquoted (the JSON and the tables escape it where they print).
[[nodiscard]] std::string endpoint_address(const std::string& host, std::uint16_t port,
                                           const std::string& unix_path);

[[nodiscard]] constexpr std::size_t majority_of(std::size_t node_count) noexcept {
  return node_count / 2 + 1;
}

}  // namespace redlock::cli
