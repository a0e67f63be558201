// `redlock inspect`: who holds a lock, or a semaphore's permits, as every
// node and as a majority sees it (BlockingClient::inspect, docs/engine.md
// "Inspection"). One read-only round on every node, one JSON object out.
//
// What it prints are live lock values: whoever reads them can extend or
// release those locks (docs/safety.md, "Warnings").
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "json_writer.hpp"
#include "quorum_setup.hpp"
#include "redlock/blocking_client.hpp"
#include "redlock/inspection.hpp"
#include "report.hpp"
#include "text/escape.hpp"

namespace redlock::cli {
namespace {

std::int64_t milliseconds_of(Milliseconds duration) {
  return static_cast<std::int64_t>(duration.count());
}

// A key as one node sees it: "value" (null: no key), "pttl_ms" (-2: no
// key, -1: no expiry) and "fence" (the node's counter).
void write_key(JsonWriter& json, const KeyView& key) {
  json.key("value").optional_string(key.value);
  json.key("pttl_ms").number(key.pttl_ms);
  json.key("fence").number(key.fence);
}

// A holder as a majority sees it (a semaphore's: with its permit).
void write_holder(JsonWriter& json, const HolderView& holder) {
  json.begin_object();
  if (holder.permit) json.key("permit").number(static_cast<std::uint64_t>(*holder.permit));
  json.key("value").string(holder.value);
  json.key("validity_ms").number(milliseconds_of(holder.validity));
  json.key("fence").number(holder.fence);
  json.end_object();
}

// "nodes": one object per node, in the order of the quorum: "node",
// "answered", "latency_us"; for a resource its key's view, for a semaphore
// "permits_recorded" and "permits" (each permit's view); "detail" (why not
// answered, already escaped by the library; else null). What a node that
// did not answer could not tell is null.
void write_nodes(JsonWriter& json, const Inspection& inspection, bool semaphore) {
  json.key("nodes").begin_array();
  for (const NodeInspection& node : inspection.nodes) {
    json.begin_object();
    json.key("node").string(node.name);
    json.key("answered").boolean(node.answered);
    json.key("latency_us").number(static_cast<std::int64_t>(node.latency.count()));
    if (!semaphore) {
      if (node.answered) {
        write_key(json, node.key);
      } else {
        json.key("value").null();
        json.key("pttl_ms").null();
        json.key("fence").null();
      }
    } else if (node.answered) {
      json.key("permits_recorded").number(static_cast<std::uint64_t>(node.permits_recorded));
      json.key("permits").begin_array();
      for (std::size_t permit = 0; permit < node.permits.size(); ++permit) {
        json.begin_object();
        json.key("permit").number(static_cast<std::uint64_t>(permit));
        write_key(json, node.permits[permit]);
        json.end_object();
      }
      json.end_array();
    } else {
      json.key("permits_recorded").null();
      json.key("permits").null();
    }
    json.key("detail");
    if (node.answered || node.detail.empty()) {
      json.null();
    } else {
      json.string(node.detail);
    }
    json.end_object();
  }
  json.end_array();
}

// The count a majority of all nodes records for the semaphore (none when
// no count has a majority: never recorded, expired, or the nodes disagree).
std::optional<std::uint32_t> majority_count(const Inspection& inspection, std::size_t quorum) {
  std::map<std::uint32_t, std::size_t> votes;
  for (const NodeInspection& node : inspection.nodes) {
    if (node.answered && node.permits_recorded > 0) ++votes[node.permits_recorded];
  }
  for (const auto& [count, nodes] : votes) {
    if (nodes >= quorum) return count;
  }
  return std::nullopt;
}

std::string render(const Invocation& invocation, const Inspection& inspection, std::size_t quorum) {
  const bool semaphore = invocation.semaphore.has_value();
  const bool known = inspection.ok();  // else no majority view
  JsonWriter json;
  json.begin_object();
  if (!semaphore) {
    json.key("resource").string(invocation.resource.value_or(""));
    json.key("holder");
    if (known && inspection.holder) {
      json.string(inspection.holder->value);
    } else {
      json.null();
    }
    json.key("validity_ms");
    if (known && inspection.holder) {
      json.number(milliseconds_of(inspection.holder->validity));
    } else {
      json.null();
    }
  } else {
    json.key("semaphore").string(*invocation.semaphore);
    std::optional<std::uint32_t> count = known ? majority_count(inspection, quorum) : std::nullopt;
    if (!count) count = invocation.permits;
    json.key("permits").optional_number(count ? std::optional<std::uint64_t>(*count)
                                              : std::nullopt);
    json.key("holders");
    if (known) {
      json.begin_array();
      for (const HolderView& holder : inspection.holders) write_holder(json, holder);
      json.end_array();
    } else {
      json.null();
    }
  }
  json.key("fence");
  if (known) {
    json.number(inspection.fence);
  } else {
    json.null();
  }
  json.key("error");
  if (known) {
    json.null();
  } else {
    json.string(error_name(inspection.error));
  }
  write_nodes(json, inspection, semaphore);
  json.end_object();
  return json.str();
}

}  // namespace

int inspect_command(const Invocation& invocation) {
  std::optional<QuorumConfig> config = load_quorum(invocation);
  if (!config) return exit_code::config;
  const std::size_t node_count = config->nodes.size();
  const std::size_t quorum = majority_of(node_count);
  BlockingClient client(std::move(*config));
  // Without --permits, ask about one permit: the nodes answer with every
  // permit up to the count they record, so the recorded ones are all read.
  const Inspection inspection =
      invocation.semaphore
          ? client.inspect(Semaphore(*invocation.semaphore, invocation.permits.value_or(1)))
          : client.inspect(Resource(invocation.resource.value_or("")));

  print_output(render(invocation, inspection, quorum));

  print_read_failure("inspect", lock_target(invocation), inspection.error, inspection.nodes);
  return exit_code_for(inspection.error);
}

}  // namespace redlock::cli
