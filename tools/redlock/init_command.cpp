// `redlock init`: an operator's word that a quorum is brand-new (docs/cli.md,
// "redlock init"). Every node is asked in parallel what it holds; the
// decision is protocol/init_plan.hpp's; each node that answered is then
// marked by the declare_new script, which checks again, atomically on the
// node, that nothing was used meanwhile. A quorum that names its keys per
// slot (a member is a Redis Cluster) is asked and marked server by server
// with declare_new_slots: each server every slot it has (a cluster
// member's masters theirs, from its map), so that a slot first used
// while a member is down is granted at once, as on a quorum of servers.
#include <hiredis/hiredis.h>

#include <string>
#include <string_view>
#include <vector>

#include "cluster_probe.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "parallel.hpp"
#include "protocol/hash_slot.hpp"
#include "protocol/init_plan.hpp"
#include "protocol/random_value.hpp"
#include "quorum_setup.hpp"
#include "redlock/config.hpp"
#include "report.hpp"
#include "scripts/key_space.hpp"
#include "scripts/script_calls.hpp"
#include "scripts/scripts.hpp"
#include "text/escape.hpp"
#include "transport/blocking_session.hpp"
#include "transport/cluster_link.hpp"

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

// Opens `session` within the quorum's connect timeout.
bool opened(BlockingSession& session, const LockConfig& lock) {
  session.set_deadline(SteadyClock::now() + lock.connect_timeout, lock.connect_timeout);
  return session.open();
}

// A script's error reply, escaped, as init reports it.
std::string error_reply_text(const redisReply& reply) {
  return "error reply: " + detail::escape_text(std::string_view(reply.str, reply.len));
}

// What one node holds: its marker (and whether a first initialisation
// wrote it), its fence counters, its lock keys.
InitProbe probe(const NodeConfig& node, const LockConfig& lock) {
  InitProbe probe;
  probe.name = node.name;
  BlockingSession session(node);
  if (!opened(session, lock)) {
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

// A new marker: a random incarnation and this quorum's max_ttl.
std::string new_marker(const LockConfig& lock) {
  std::uint8_t bytes[8];
  detail::fill_random(bytes, sizeof bytes);
  return detail::marker_value(detail::to_hex(bytes, sizeof bytes), effective_max_ttl(lock));
}

// Marks one node; "" when done, else why not.
std::string declare(const NodeConfig& node, const LockConfig& lock) {
  BlockingSession session(node);
  if (!opened(session, lock)) return session.failure();
  const std::string marker = new_marker(lock);
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
    return error_reply_text(*reply);
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

// One server of a quorum whose keys are per slot, and the slots it has.
struct SlotServer {
  NodeConfig config;
  std::string what;                    // how messages name it ("" for a member's one server)
  std::vector<std::string_view> tags;  // slot_tag of each
};

// What the servers of one member showed, over all of them: a sign of use
// on any is the member's.
struct SlotSigns {
  bool marker = false;      // a marker other than a first initialisation's
  bool first_init = false;  // a first initialisation's marker
  bool counters = false;
  bool locks = false;
};

// A member of such a quorum: its servers (a single member's one server has
// every slot; a cluster member's masters, theirs in its map), and what
// they answered.
struct SlotMember {
  std::vector<SlotServer> servers;
  detail::MemberServers ids;  // for the independence check
  std::size_t unmapped = 0;   // slots the cluster's map gives no master
  SlotSigns signs;
  InitProbe probe;
};

// `failure` of `server`, as a message says it.
std::string named(const SlotServer& server, const std::string& failure) {
  return server.what.empty() ? failure : server.what + ": " + failure;
}

// A script's step over every slot a server has may take a while on a
// large keyspace (its SCAN) or a full slot range (16 384 markers).
constexpr Milliseconds kSlotScriptBudget{10000};

std::vector<std::string_view> every_slot_tag() {
  std::vector<std::string_view> tags;
  tags.reserve(detail::kClusterSlots);
  for (std::uint16_t slot = 0; slot < detail::kClusterSlots; ++slot) {
    tags.push_back(detail::slot_tag(slot));
  }
  return tags;
}

// declare_new_slots on `server`: with `mark` false, what it holds (its
// answer's flags into `signs`); with `mark` true, "" when marked, else why
// not.
std::string ask_slots(const SlotServer& server, const LockConfig& lock, bool mark, SlotSigns& signs,
                      std::string& run_id) {
  BlockingSession session(server.config);
  if (!opened(session, lock)) return session.failure();
  session.set_deadline(SteadyClock::now() + kSlotScriptBudget, kSlotScriptBudget);
  const std::string marker = mark ? new_marker(lock) : std::string();
  const std::string lock_glob = detail::slot_lock_pattern(lock);
  const std::string permit_glob = detail::slot_permit_pattern(lock.key_prefix);
  const BlockingReply reply =
      eval(session, detail::DeclareNewSlotsCall{.key_prefix = lock.key_prefix,
                                                .marker_value = marker,
                                                .first_init_prefix = detail::kFirstInitMarkerPrefix,
                                                .mark = mark,
                                                .lock_pattern = lock_glob,
                                                .permit_pattern = permit_glob,
                                                .slot_tags = server.tags});
  if (!reply) return session.failure();
  if (reply->type == REDIS_REPLY_ERROR) {
    return error_reply_text(*reply);
  }
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 6 ||
      reply->element[5]->type != REDIS_REPLY_STRING) {
    return "unexpected reply (an ACL that refuses EVAL or SCAN?)";
  }
  const auto flag = [&](std::size_t i) {
    return reply->element[i]->type == REDIS_REPLY_INTEGER && reply->element[i]->integer == 1;
  };
  run_id.assign(reply->element[5]->str, reply->element[5]->len);
  if (mark) {
    if (flag(0)) return {};
    return std::string("it holds ") +
           (flag(1)   ? "an identity marker"
            : flag(3) ? "fence counters"
                      : "lock keys") +
           " now (used since it was asked)";
  }
  signs.marker = signs.marker || flag(1);
  signs.first_init = signs.first_init || flag(2);
  signs.counters = signs.counters || flag(3);
  signs.locks = signs.locks || flag(4);
  return {};
}

// `node`'s servers and the slots each has; the member's probe's error set
// when it cannot say (no seed answered, a master did not).
SlotMember slot_member(const NodeConfig& node, const LockConfig& lock) {
  SlotMember member;
  member.probe.name = node.name;
  member.ids.cluster = !node.cluster.empty();
  if (node.cluster.empty()) {
    static const std::vector<std::string_view> every = every_slot_tag();
    member.servers.push_back({node, {}, every});
    return member;
  }
  // The map alone: each master is asked by declare_new_slots itself.
  const ClusterReport map = read_cluster_map(node, lock.connect_timeout, std::nullopt);
  if (map.seed.empty()) {
    member.probe.error = map.error;
    return member;
  }
  member.unmapped = detail::kClusterSlots - map.covered;
  for (const ShardReport& shard : map.shards) {
    member.ids.node_ids.push_back(shard.master.id);
    SlotServer server{detail::member_server(node, shard.master.host, shard.master.port, {}),
                      "master " + endpoint_address(shard.master.host, shard.master.port, {}),
                      {}};
    for (const auto& [first, last] : shard.ranges) {
      for (std::uint32_t slot = first; slot <= last; ++slot) {
        server.tags.push_back(detail::slot_tag(static_cast<std::uint16_t>(slot)));
      }
    }
    member.servers.push_back(std::move(server));
  }
  return member;
}

// Asks every server of `member` what it holds, all at once. The member
// answered when every one of its masters did; a sign of use on any server
// that answered is the member's answer even when another did not (or its
// map named a master that did not answer), since it refuses init whatever
// the rest would say.
void probe_slots(SlotMember& member, const LockConfig& lock) {
  const std::size_t count = member.servers.size();
  std::vector<SlotSigns> signs(count);
  std::vector<std::string> run_ids(count);
  std::vector<std::string> failures(count);
  for_each_in_parallel(count, [&](std::size_t i) {
    failures[i] = ask_slots(member.servers[i], lock, false, signs[i], run_ids[i]);
  });
  for (std::size_t i = 0; i < count; ++i) {
    if (!failures[i].empty()) {
      if (member.probe.error.empty()) {
        member.probe.error = named(member.servers[i], failures[i]);
      }
      continue;
    }
    member.signs.marker = member.signs.marker || signs[i].marker;
    member.signs.first_init = member.signs.first_init || signs[i].first_init;
    member.signs.counters = member.signs.counters || signs[i].counters;
    member.signs.locks = member.signs.locks || signs[i].locks;
    if (!run_ids[i].empty()) member.ids.run_ids.push_back(run_ids[i]);
  }
  const bool in_use = member.signs.marker || member.signs.counters || member.signs.locks;
  member.probe.answered = member.probe.error.empty() || in_use;
  member.probe.marked = member.signs.marker || member.signs.first_init;
  member.probe.first_init_marker = member.signs.first_init && !member.signs.marker;
  member.probe.has_counters = member.signs.counters;
  member.probe.has_locks = member.signs.locks;
}

// Marks every server of `member`, all at once: "" when each was, else why
// not (each server is marked whole or not at all; how many were is said).
std::string declare_slots(const SlotMember& member, const LockConfig& lock) {
  const std::size_t count = member.servers.size();
  std::vector<std::string> failures(count);
  for_each_in_parallel(count, [&](std::size_t i) {
    SlotSigns unused;
    std::string run_id;
    failures[i] = ask_slots(member.servers[i], lock, true, unused, run_id);
  });
  std::string why;
  std::size_t marked = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (failures[i].empty()) {
      ++marked;
    } else if (why.empty()) {
      why = named(member.servers[i], failures[i]);
    }
  }
  if (why.empty() || count == 1) return why;
  return why + " (" + std::to_string(marked) + " of " + std::to_string(count) + " masters marked)";
}

// What init says of the nodes it marked (or failed to) and of those that
// did not answer; the exit code.
int report_marks(const std::vector<NodeConfig>& nodes, const std::vector<InitProbe>& probes,
                 const detail::InitPlan& plan, const std::vector<std::string>& failures) {
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

int refuse(const detail::InitPlan& plan) {
  for (const std::string& line : plan.refusals) print_error("init: " + line);
  print_error("init: refused; nothing was written (next step: docs/operations.md#first-use)");
  return exit_code::not_acquired;
}

// The per-slot layout: every server of every member asked, then marked
// slot by slot.
int init_slots(const QuorumConfig& config) {
  const std::vector<NodeConfig>& nodes = config.nodes;
  std::vector<SlotMember> members(nodes.size());
  for_each_in_parallel(nodes.size(), [&](std::size_t i) {
    members[i] = slot_member(nodes[i], config.lock);
    probe_slots(members[i], config.lock);
  });
  std::vector<detail::MemberServers> ids;
  std::vector<InitProbe> probes;
  for (const SlotMember& member : members) {
    ids.push_back(member.ids);
    probes.push_back(member.probe);
  }
  const std::vector<detail::SharedMembers> shared = detail::members_not_independent(ids);
  for (const detail::SharedMembers& pair : shared) {
    print_not_independent("init", nodes[pair.first].name, nodes[pair.second].name, pair);
  }
  if (!shared.empty()) return exit_code::config;
  const detail::InitPlan plan = detail::plan_init(probes);
  if (!plan.declare) return refuse(plan);
  std::vector<std::string> failures(nodes.size());
  for_each_in_parallel(plan.targets.size(), [&](std::size_t t) {
    const std::size_t i = plan.targets[t];
    failures[i] = declare_slots(members[i], config.lock);
  });
  for (std::size_t i : plan.targets) {
    if (members[i].unmapped > 0 && failures[i].empty()) {
      print_error("init: node " + nodes[i].name + ": " + std::to_string(members[i].unmapped) +
                  " slots have no master in its map: each is marked by its first use");
    }
  }
  return report_marks(nodes, probes, plan, failures);
}

}  // namespace

int init_command(const Invocation& invocation) {
  std::optional<QuorumConfig> config = load_quorum(invocation);
  if (!config) return exit_code::config;
  if (detail::key_layout(*config) == detail::KeyLayout::per_slot) return init_slots(*config);
  const std::vector<NodeConfig>& nodes = config->nodes;
  std::vector<InitProbe> probes(nodes.size());
  for_each_in_parallel(nodes.size(),
                       [&](std::size_t i) { probes[i] = probe(nodes[i], config->lock); });
  const detail::InitPlan plan = detail::plan_init(probes);
  if (!plan.declare) return refuse(plan);
  std::vector<std::string> failures(nodes.size());
  for_each_in_parallel(plan.targets.size(), [&](std::size_t t) {
    const std::size_t i = plan.targets[t];
    failures[i] = declare(nodes[i], config->lock);
  });
  return report_marks(nodes, probes, plan, failures);
}

}  // namespace redlock::cli
