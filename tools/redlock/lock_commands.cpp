// acquire, extend and release: one library call each, one JSON object out.
//
// `acquire` leaves the lock held without renewal: this process ends, and
// whoever has the printed value may extend or release it later from another
// process (see quorum_setup.hpp, lock_from_value, for how that works).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "first_use.hpp"
#include "json_writer.hpp"
#include "quorum_setup.hpp"
#include "redlock/blocking_client.hpp"
#include "report.hpp"

namespace redlock::cli {
namespace {

void write_error(JsonWriter& json, std::error_code error) {
  json.key("error");
  if (error) {
    json.string(error_name(error));
  } else {
    json.null();
  }
}

std::int64_t milliseconds_of(Milliseconds duration) {
  return static_cast<std::int64_t>(duration.count());
}

// "acquire \"r\": not_acquired: <sentence>" (the target as lock_target).
std::string failure_line(std::string_view operation, const Invocation& invocation,
                         std::error_code error) {
  return std::string(operation) + " " + lock_target(invocation) + ": " +
         std::string(error_name(error)) + ": " + error.message();
}

// "resource", then for a lock over several resources "resources" (every
// name, in the order given). For a semaphore "resource" is its name.
void write_names(JsonWriter& json, const Invocation& invocation) {
  json.key("resource")
      .string(invocation.semaphore ? *invocation.semaphore : invocation.resource.value_or(""));
  if (invocation.resources.size() <= 1) return;
  json.key("resources").begin_array();
  for (const std::string& name : invocation.resources) json.string(name);
  json.end_array();
}

// For several resources, "fences": each one's token in the order of
// "resources" when the lock was taken fenced, else null.
void write_fences(JsonWriter& json, const Invocation& invocation, const std::optional<Lock>& lock) {
  if (invocation.resources.size() <= 1) return;
  json.key("fences");
  if (!lock || lock->fences.empty()) {
    json.null();
    return;
  }
  json.begin_array();
  for (const std::uint64_t token : lock->fences) json.number(token);
  json.end_array();
}

// For a reader: "shared": true.
void write_shared(JsonWriter& json, const Invocation& invocation) {
  if (invocation.shared) json.key("shared").boolean(true);
}

// For a semaphore: "permit" (the permit held, or null) and "permits" (the
// count given, or null when not given).
void write_permit(JsonWriter& json, const Invocation& invocation,
                  std::optional<std::uint32_t> permit) {
  if (!invocation.semaphore) return;
  json.key("permit").optional_number(permit ? std::optional<std::uint64_t>(*permit) : std::nullopt);
  json.key("permits").optional_number(
      invocation.permits ? std::optional<std::uint64_t>(*invocation.permits) : std::nullopt);
}

}  // namespace

int acquire_command(const Invocation& invocation) {
  std::optional<QuorumConfig> config = load_quorum(invocation);
  if (!config) return exit_code::config;
  if (const std::string problem = ttl_problem(invocation, *config); !problem.empty()) {
    print_error("acquire: " + problem);
    return exit_code::usage;
  }
  const QuorumConfig quorum = *config;
  BlockingClient client(std::move(*config));
  const AcquireResult result = acquire_named(client, invocation, acquire_options(invocation));
  const std::optional<Lock> lock = result.ok() ? result.lock : std::nullopt;

  JsonWriter json;
  json.begin_object();
  write_names(json, invocation);
  json.key("value");
  if (result.ok()) {
    json.string(result.lock->value.str());
  } else {
    json.null();
  }
  json.key("validity_ms").number(result.ok() ? milliseconds_of(result.validity) : 0);
  json.key("fence").optional_number(lock ? lock->fence : std::nullopt);
  write_fences(json, invocation, lock);
  write_permit(json, invocation, lock ? lock->permit : std::nullopt);
  write_shared(json, invocation);
  json.key("attempts").number(static_cast<std::int64_t>(result.attempts));
  write_error(json, result.ok() ? std::error_code() : result.error);
  write_node_outcomes(json, result.nodes);
  json.end_object();
  print_output(json.str());

  if (result.ok()) return exit_code::success;
  const std::error_code error = result.error ? result.error : make_error_code(errc::no_quorum);
  if (const std::string mismatch = permits_mismatch(invocation, result.nodes); !mismatch.empty()) {
    print_error("acquire " + lock_target(invocation) + ": " + mismatch);
  } else {
    print_error(failure_line("acquire", invocation, error));
  }
  (void)print_node_faults("acquire", result.nodes);
  print_first_use_note(quorum, result.nodes, keys_named(invocation));
  return exit_code_for(error);
}

int extend_command(const Invocation& invocation) {
  std::optional<QuorumConfig> config = load_quorum(invocation);
  if (!config) return exit_code::config;
  if (const std::string problem = ttl_problem(invocation, *config); !problem.empty()) {
    print_error("extend: " + problem);
    return exit_code::usage;
  }
  const Milliseconds ttl = effective_ttl(invocation, *config);
  BlockingClient client(std::move(*config));
  ExtendOptions options;
  options.ttl = ttl;
  const ExtendResult result = client.extend(lock_from_value(invocation, ttl), options);

  JsonWriter json;
  json.begin_object();
  write_names(json, invocation);
  json.key("value").string(*invocation.value);
  json.key("validity_ms").number(result.ok() ? milliseconds_of(result.validity) : 0);
  // The tokens belong to the acquisition; extend cannot know them.
  json.key("fence").null();
  if (invocation.resources.size() > 1) {
    json.key("fences").begin_array();
    for (std::size_t i = 0; i < invocation.resources.size(); ++i) json.null();
    json.end_array();
  }
  write_permit(json, invocation, invocation.permit);
  write_shared(json, invocation);
  write_error(json, result.error);
  write_node_outcomes(json, result.nodes);
  json.end_object();
  print_output(json.str());

  if (result.ok()) return exit_code::success;
  print_error(failure_line("extend", invocation, result.error));
  (void)print_node_faults("extend", result.nodes);
  return exit_code_for(result.error);
}

int release_command(const Invocation& invocation) {
  std::optional<QuorumConfig> config = load_quorum(invocation);
  if (!config) return exit_code::config;
  // The process ends with the release: requests still on their way when a
  // majority answered (one to a cluster member still reading its slot map)
  // would be dropped with it, and the lock left there for its TTL.
  config->lock.release_at_majority = false;
  const std::size_t node_count = config->nodes.size();
  const Milliseconds ttl = config->lock.ttl;
  BlockingClient client(std::move(*config));
  const ReleaseResult result = client.release(lock_from_value(invocation, ttl));

  JsonWriter json;
  json.begin_object();
  write_names(json, invocation);
  json.key("value").string(*invocation.value);
  write_permit(json, invocation, invocation.permit);
  write_shared(json, invocation);
  json.key("released").number(static_cast<std::uint64_t>(result.released));
  write_error(json, result.error);
  write_node_outcomes(json, result.nodes);
  json.end_object();
  print_output(json.str());

  (void)print_node_faults("release", result.nodes);
  // A node that answered no longer holds our value (it deleted it, or it
  // was not there). Once a majority answered, no majority can hold it.
  std::size_t answered = 0;
  for (const NodeOutcome& node : result.nodes) {
    if (node.status == NodeStatus::released || node.status == NodeStatus::not_held) ++answered;
  }
  if (answered >= majority_of(node_count)) return exit_code::success;
  print_error("release " + lock_target(invocation) + ": only " + std::to_string(answered) + " of " +
              std::to_string(node_count) +
              " nodes answered; the lock may stay held elsewhere until its TTL runs out");
  return exit_code::not_acquired;
}

}  // namespace redlock::cli
