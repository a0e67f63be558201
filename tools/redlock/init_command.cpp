// `redlock init`: an operator's word that a quorum is brand-new (docs/cli.md,
// "redlock init"). Every node is asked in parallel what it holds; the
// decision is protocol/init_plan.hpp's; each node that answered is then
// marked by the declare_new script, which checks again, atomically on the
// node, that nothing was used meanwhile.
#include <hiredis/hiredis.h>

#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "protocol/init_plan.hpp"
#include "protocol/random_value.hpp"
#include "quorum_setup.hpp"
#include "redlock/config.hpp"
#include "report.hpp"
#include "scripts/script_calls.hpp"
#include "scripts/scripts.hpp"
#include "text/escape.hpp"
#include "transport/blocking_session.hpp"

namespace redlock::cli {
namespace {

using detail::BlockingReply;
using detail::BlockingSession;
using detail::InitProbe;

// The patterns of every key that holds a lock (as the recovery probe's).
std::vector<std::string> lock_patterns(const LockConfig& lock) {
  return {detail::lock_pattern(lock), detail::permit_pattern(lock.key_prefix)};
}

// One script's call run as EVAL (the session loads nothing).
template <class Call>
BlockingReply eval(BlockingSession& session, const Call& call) {
  const detail::ScriptCall encoded = detail::encode(call);
  std::vector<std::string> words{"EVAL", std::string(encoded.script->body),
                                 std::to_string(encoded.keys.size())};
  words.insert(words.end(), encoded.keys.begin(), encoded.keys.end());
  words.insert(words.end(), encoded.args.begin(), encoded.args.end());
  return session.command(words);
}

// What one node holds: its marker (and whether a first initialisation
// wrote it), its fence counters, its lock keys.
InitProbe probe(const NodeConfig& node, const LockConfig& lock) {
  InitProbe probe;
  probe.name = node.name;
  BlockingSession session(node);
  session.set_deadline(SteadyClock::now() + lock.connect_timeout, lock.connect_timeout);
  if (!session.open()) {
    probe.error = session.failure();
    return probe;
  }
  const std::string prefix = lock.key_prefix;
  const BlockingReply marker = session.command({"GET", detail::marker_key(prefix)});
  const BlockingReply fields = session.command({"HKEYS", detail::fence_key(prefix)});
  const std::string marker_key = detail::marker_key(prefix);
  const std::string recovering_key = detail::recovering_key(prefix);
  const std::string fence_key = detail::fence_key(prefix);
  const std::vector<std::string> patterns = lock_patterns(lock);
  const BlockingReply locks = eval(session, detail::ProbeCall{.marker_key = marker_key,
                                                              .recovering_key = recovering_key,
                                                              .fence_key = fence_key,
                                                              .lock_pattern = patterns[0],
                                                              .permit_pattern = patterns[1]});
  if (!marker || !fields || !locks) {
    probe.error = session.failure();
    return probe;
  }
  if (marker->type == REDIS_REPLY_ERROR || fields->type != REDIS_REPLY_ARRAY ||
      locks->type != REDIS_REPLY_ARRAY || locks->elements < 3 ||
      locks->element[2]->type != REDIS_REPLY_INTEGER) {
    probe.error = "unexpected reply (an ACL that refuses GET, HKEYS or EVAL?)";
    return probe;
  }
  probe.answered = true;
  probe.marked = marker->type == REDIS_REPLY_STRING;
  probe.first_init_marker =
      probe.marked && detail::is_first_init_marker(std::string_view(marker->str, marker->len));
  for (std::size_t i = 0; i < fields->elements; ++i) {
    // The empty field is a second merge's flag, not a counter.
    if (fields->element[i]->type == REDIS_REPLY_STRING && fields->element[i]->len > 0) {
      probe.has_counters = true;
    }
  }
  probe.has_locks = locks->element[2]->integer != 0;
  return probe;
}

// Marks one node; "" when done, else why not.
std::string declare(const NodeConfig& node, const LockConfig& lock) {
  BlockingSession session(node);
  session.set_deadline(SteadyClock::now() + lock.connect_timeout, lock.connect_timeout);
  if (!session.open()) return session.failure();
  std::uint8_t bytes[8];
  detail::fill_random(bytes, sizeof bytes);
  const std::string marker =
      detail::marker_value(detail::to_hex(bytes, sizeof bytes), effective_max_ttl(lock));
  const std::vector<std::string> patterns = lock_patterns(lock);
  const std::string prefix = lock.key_prefix;
  const std::string marker_key = detail::marker_key(prefix);
  const std::string recovering_key = detail::recovering_key(prefix);
  const std::string fence_key = detail::fence_key(prefix);
  const BlockingReply reply =
      eval(session, detail::DeclareNewCall{.marker_key = marker_key,
                                           .recovering_key = recovering_key,
                                           .fence_key = fence_key,
                                           .marker_value = marker,
                                           .first_init_prefix = detail::kFirstInitMarkerPrefix,
                                           .lock_patterns = patterns});
  if (!reply) return session.failure();
  if (reply->type == REDIS_REPLY_ERROR) {
    return "error reply: " + detail::escape_text(std::string_view(reply->str, reply->len));
  }
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
      reply->element[0]->type != REDIS_REPLY_INTEGER) {
    return "unexpected reply";
  }
  if (reply->element[0]->integer == 1) return {};
  const redisReply* what = reply->element[1];
  return "it holds " +
         (what->type == REDIS_REPLY_STRING
              ? detail::escape_text(std::string_view(what->str, what->len))
              : std::string("something")) +
         " now (used since it was asked)";
}

}  // namespace

int init_command(const Invocation& invocation) {
  std::optional<QuorumConfig> config = load_quorum(invocation, ClusterMembers::refused);
  if (!config) return exit_code::config;
  const std::vector<NodeConfig>& nodes = config->nodes;
  std::vector<InitProbe> probes(nodes.size());
  {
    std::vector<std::thread> threads;
    threads.reserve(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      threads.emplace_back([&, i] { probes[i] = probe(nodes[i], config->lock); });
    }
    for (std::thread& thread : threads) thread.join();
  }
  const detail::InitPlan plan = detail::plan_init(probes);
  if (!plan.declare) {
    for (const std::string& line : plan.refusals) print_error("init: " + line);
    print_error("init: refused; nothing was written (next step: docs/operations.md#first-use)");
    return exit_code::not_acquired;
  }
  std::vector<std::string> failures(nodes.size());
  {
    std::vector<std::thread> threads;
    threads.reserve(plan.targets.size());
    for (std::size_t i : plan.targets) {
      threads.emplace_back([&, i] { failures[i] = declare(nodes[i], config->lock); });
    }
    for (std::thread& thread : threads) thread.join();
  }
  std::size_t marked = 0;
  for (std::size_t i : plan.targets) {
    if (failures[i].empty()) {
      ++marked;
      print_output("node " + nodes[i].name + ": marked as part of a brand-new quorum" +
                   (probes[i].first_init_marker ? " (its first-use delay cleared)" : ""));
    } else {
      print_error("init: node " + nodes[i].name + ": not marked: " + failures[i]);
    }
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!probes[i].answered) {
      print_error("init: node " + nodes[i].name + " did not answer (" + probes[i].error +
                  "): the recovery round marks it, with the delay, when it comes up");
    }
  }
  if (marked < majority_of(nodes.size())) {
    print_error("init: " + std::to_string(marked) + " of " + std::to_string(nodes.size()) +
                " nodes marked; a majority must be");
    return exit_code::not_acquired;
  }
  print_output("the quorum is declared brand-new: " + std::to_string(marked) + " of " +
               std::to_string(nodes.size()) + " nodes marked");
  return exit_code::success;
}

}  // namespace redlock::cli
