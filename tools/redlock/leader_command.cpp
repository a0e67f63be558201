// `redlock leader`: the current leader of an election by majority read
// (BlockingClient::leader, docs/algorithm.md "Leader election"), one JSON
// object out: {"name", "term", "payload", "validity_ms"} while someone
// leads, {"name", "leader": null} when no one does. The leader's lock value
// is never printed (it would let the reader depose the leader).
#include <cstddef>
#include <optional>
#include <string>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "json_writer.hpp"
#include "quorum_setup.hpp"
#include "redlock/blocking_client.hpp"
#include "redlock/election.hpp"
#include "report.hpp"
#include "text/escape.hpp"

namespace redlock::cli {

int leader_command(const Invocation& invocation) {
  std::optional<QuorumConfig> config = load_quorum(invocation);
  if (!config) return exit_code::config;
  BlockingClient client(std::move(*config));
  const std::string name = invocation.name.value_or("");
  const LeaderResult result = client.leader(Election(name));

  JsonWriter json;
  json.begin_object();
  json.key("name").string(name);
  if (result.ok() && result.leader) {
    json.key("term").number(result.leader->term);
    json.key("payload").string(result.leader->payload);
    json.key("validity_ms").number(static_cast<std::int64_t>(result.leader->validity.count()));
  } else {
    json.key("leader").null();
  }
  if (!result.ok()) json.key("error").string(error_name(result.error));
  json.end_object();
  print_output(json.str());

  print_read_failure("leader", printable(name), result.error, result.nodes);
  if (result.ok()) return exit_code::success;
  // No majority: the leader is unknown.
  return exit_code::not_acquired;
}

}  // namespace redlock::cli
