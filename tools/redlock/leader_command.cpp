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
  const std::size_t node_count = config->nodes.size();
  const std::size_t quorum = majority_of(node_count);
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

  if (result.ok()) return exit_code::success;
  std::size_t answered = 0;
  for (const NodeInspection& node : result.nodes) {
    if (node.answered) ++answered;
  }
  std::string line =
      "leader " + printable(name) + ": " + std::string(error_name(result.error)) + ": ";
  line += result.error == make_error_code(errc::no_quorum)
              ? "only " + std::to_string(answered) + " of " + std::to_string(node_count) +
                    " nodes answered; a majority needs " + std::to_string(quorum)
              : result.error.message();
  print_error(line);
  for (const NodeInspection& node : result.nodes) {
    if (node.answered) continue;
    std::string text = "leader: node " + detail::escape_text(node.name) + ": no answer";
    if (!node.detail.empty()) text += ": " + detail::escape_text(node.detail);
    print_error(text);
  }
  // No majority: the leader is unknown.
  return exit_code::not_acquired;
}

}  // namespace redlock::cli
