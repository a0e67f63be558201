#include "node_probe.hpp"

#include <hiredis/hiredis.h>

#include <optional>
#include <string_view>
#include <vector>

#include "report.hpp"
#include "scripts/scripts.hpp"
#include "transport/blocking_session.hpp"

namespace redlock::cli {
namespace {

using Session = detail::BlockingSession;
using ReplyPtr = detail::BlockingReply;

std::string text_of(const redisReply& reply) {
  return {reply.str, static_cast<std::size_t>(reply.len)};
}

// CONFIG GET name → its value, or "unknown" when the node refuses.
std::string config_value(Session& session, const std::string& name) {
  ReplyPtr reply = session.command({"CONFIG", "GET", name});
  if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
      reply->element[1]->type != REDIS_REPLY_STRING) {
    return "unknown";
  }
  return text_of(*reply->element[1]);
}

// The value of "name:value" on a line of an INFO reply.
std::optional<std::string> info_field(const std::string& info, std::string_view name) {
  std::size_t line = 0;
  while (line < info.size()) {
    std::size_t end = info.find_first_of("\r\n", line);
    if (end == std::string::npos) end = info.size();
    const std::string_view text(info.data() + line, end - line);
    if (text.size() > name.size() && text.starts_with(name) && text[name.size()] == ':') {
      return std::string(text.substr(name.size() + 1));
    }
    line = end + 1;
  }
  return std::nullopt;
}

// INFO SECTION as text, or nullopt when the node refuses or sends no text.
std::optional<std::string> info_section(Session& session, const std::string& section) {
  ReplyPtr info = session.command({"INFO", section});
  if (!info || info->type != REDIS_REPLY_STRING) return std::nullopt;
  return text_of(*info);
}

void probe_amnesia_state(Session& session, const std::string& key_prefix, NodeReport& report) {
  if (ReplyPtr reply = session.command({"GET", detail::marker_key(key_prefix)}); reply) {
    if (reply->type == REDIS_REPLY_NIL) {
      report.marked = false;
    } else if (reply->type == REDIS_REPLY_STRING) {
      report.marked = true;
      const std::string_view value(reply->str, reply->len);
      report.marker_max_ttl = detail::marker_max_ttl(value);
      report.marker_run_id = detail::marker_run_id(value);
    }
  }
  const std::string recovering = detail::recovering_key(key_prefix);
  if (ReplyPtr reply = session.command({"PTTL", recovering});
      reply && reply->type == REDIS_REPLY_INTEGER && reply->integer != -2) {
    report.recovering_ms = reply->integer;
    if (ReplyPtr note = session.command({"GET", recovering});
        note && note->type == REDIS_REPLY_STRING) {
      const std::string_view story = detail::first_use_story({note->str, note->len});
      if (!story.empty()) report.first_use_note = std::string(story);
    }
  }
}

void probe_resource(Session& session, const detail::KeySpace& keys, const std::string& resource,
                    NodeReport& report) {
  const std::string& key_prefix = keys.key_prefix();
  const std::string key = detail::lock_key(keys, resource);
  if (ReplyPtr reply = session.command({"PTTL", key});
      reply && reply->type == REDIS_REPLY_INTEGER) {
    report.pttl_ms = reply->integer;
  }
  if (ReplyPtr reply = session.command({"GET", key}); reply && reply->type == REDIS_REPLY_STRING) {
    report.holder = text_of(*reply);
  }
  if (ReplyPtr reply = session.command({"HGET", detail::fence_key(key_prefix), resource});
      reply && reply->type == REDIS_REPLY_STRING) {
    try {
      report.fence_counter = std::stoll(text_of(*reply));
    } catch (const std::exception&) {
      // Not a number: not a counter this library wrote; leave it unset.
    }
  }
}

}  // namespace

std::string persistence_mode(const NodeReport& report) {
  if (report.appendonly == "no") return "off";
  if (report.appendonly != "yes") return "unknown";
  if (report.appendfsync == "always") {
    // With no-appendfsync-on-rewrite yes the node skips its fsyncs while an
    // AOF rewrite runs: not durable, whatever appendfsync says.
    return report.no_fsync_on_rewrite == "no" ? "aof always" : "aof always, no fsync on rewrite";
  }
  if (report.appendfsync == "everysec") return "aof everysec";
  if (report.appendfsync == "no") return "aof no-fsync";
  return "aof";
}

NodeReport probe_node(const NodeConfig& node, Milliseconds timeout, const LockConfig& lock,
                      const std::optional<std::string>& resource, detail::KeyLayout layout) {
  NodeReport report;
  report.name = node.name;
  report.address = endpoint_address(node.host, node.port, node.unix_path);
  try {
    Session session(node);
    session.set_deadline(SteadyClock::now() + timeout, timeout);
    if (!session.open()) {
      report.error = session.failure();
      return report;
    }
    const auto sent = SteadyClock::now();
    ReplyPtr pong = session.command({"PING"});
    const auto answered = SteadyClock::now();
    if (!pong) {
      report.error = session.failure();
      return report;
    }
    if (pong->type == REDIS_REPLY_ERROR) {
      report.error = "PING: " + text_of(*pong);
      return report;
    }
    report.reachable = true;
    report.round_trip = std::chrono::duration_cast<Microseconds>(answered - sent);
    if (const auto info = info_section(session, "replication")) {
      report.role = info_field(*info, "role").value_or("unknown");
      if (const auto offset = info_field(*info, "second_repl_offset")) {
        report.promoted = *offset != "-1";
      }
    }
    if (const auto info = info_section(session, "server")) {
      report.run_id = info_field(*info, "run_id");
    }
    report.appendonly = config_value(session, "appendonly");
    report.appendfsync = config_value(session, "appendfsync");
    report.no_fsync_on_rewrite = config_value(session, "no-appendfsync-on-rewrite");
    // Per slot, the node rules' keys are each resource slot's: without a
    // resource there is no one marker to read.
    const detail::KeySpace keys(lock, layout, resource.value_or(std::string()));
    if (layout == detail::KeyLayout::shared || resource) {
      probe_amnesia_state(session, keys.key_prefix(), report);
    }
    if (resource) probe_resource(session, keys, *resource, report);
    report.error = session.failure();
  } catch (const std::exception& error) {
    report.error = error.what();
  }
  return report;
}

}  // namespace redlock::cli
