#include "node_probe.hpp"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <chrono>
#include <memory>
#include <string_view>
#include <vector>

namespace redlock::cli {
namespace {

struct ContextFree {
  void operator()(redisContext* context) const noexcept { redisFree(context); }
};
struct ReplyFree {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using ContextPtr = std::unique_ptr<redisContext, ContextFree>;
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

timeval to_timeval(Milliseconds duration) {
  timeval value{};
  value.tv_sec = static_cast<time_t>(duration.count() / 1000);
  value.tv_usec = static_cast<suseconds_t>((duration.count() % 1000) * 1000);
  return value;
}

std::string address_of(const NodeConfig& node) {
  const bool ipv6 = node.host.find(':') != std::string::npos;
  return (ipv6 ? "[" + node.host + "]" : node.host) + ":" + std::to_string(node.port);
}

// One command; the reply, or nullptr with the context's error set.
ReplyPtr command(redisContext* context, const std::vector<std::string>& words) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  for (const std::string& word : words) {
    argv.push_back(word.data());
    lengths.push_back(word.size());
  }
  ReplyPtr reply(static_cast<redisReply*>(
      redisCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data())));
  return reply;
}

std::string text_of(const redisReply& reply) {
  return {reply.str, static_cast<std::size_t>(reply.len)};
}

std::string io_error(const redisContext& context) {
  return context.errstr[0] != '\0' ? std::string(context.errstr) : std::string("I/O error");
}

// CONFIG GET name → its value, or "unknown" when the node refuses.
std::string config_value(redisContext* context, const std::string& name) {
  ReplyPtr reply = command(context, {"CONFIG", "GET", name});
  if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
      reply->element[1]->type != REDIS_REPLY_STRING) {
    return "unknown";
  }
  return text_of(*reply->element[1]);
}

std::string role_from_info(const std::string& info) {
  constexpr std::string_view kField = "role:";
  const std::size_t at = info.find(kField);
  if (at == std::string::npos) return "unknown";
  const std::size_t begin = at + kField.size();
  const std::size_t end = info.find_first_of("\r\n", begin);
  return info.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// Runs AUTH and SELECT as configured; an error text, or "" on success.
std::string handshake(redisContext* context, const NodeConfig& node) {
  if (!node.password.empty()) {
    std::vector<std::string> auth{"AUTH"};
    if (!node.username.empty()) auth.push_back(node.username);
    auth.push_back(node.password);
    ReplyPtr reply = command(context, auth);
    if (!reply) return "AUTH: " + io_error(*context);
    // Redis's AUTH errors never repeat the password.
    if (reply->type == REDIS_REPLY_ERROR) return "AUTH failed: " + text_of(*reply);
  }
  if (node.db != 0) {
    ReplyPtr reply = command(context, {"SELECT", std::to_string(node.db)});
    if (!reply) return "SELECT: " + io_error(*context);
    if (reply->type == REDIS_REPLY_ERROR) return "SELECT failed: " + text_of(*reply);
  }
  return "";
}

void probe_amnesia_state(redisContext* context, const std::string& key_prefix, NodeReport& report) {
  if (ReplyPtr reply = command(context, {"EXISTS", key_prefix + "node"});
      reply && reply->type == REDIS_REPLY_INTEGER) {
    report.marked = reply->integer == 1;
  }
  if (ReplyPtr reply = command(context, {"PTTL", key_prefix + "recovering"});
      reply && reply->type == REDIS_REPLY_INTEGER && reply->integer != -2) {
    report.recovering_ms = reply->integer;
  }
}

void probe_resource(redisContext* context, const std::string& key_prefix,
                    const std::string& resource, NodeReport& report) {
  const std::string key = key_prefix + "lock:" + resource;
  if (ReplyPtr reply = command(context, {"PTTL", key});
      reply && reply->type == REDIS_REPLY_INTEGER) {
    report.pttl_ms = reply->integer;
  }
  if (ReplyPtr reply = command(context, {"GET", key}); reply && reply->type == REDIS_REPLY_STRING) {
    report.holder = text_of(*reply);
  }
  if (ReplyPtr reply = command(context, {"HGET", key_prefix + "fence", resource});
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
  if (report.appendfsync == "always") return "aof always";
  if (report.appendfsync == "everysec") return "aof everysec";
  if (report.appendfsync == "no") return "aof no-fsync";
  return "aof";
}

NodeReport probe_node(const NodeConfig& node, Milliseconds timeout, const std::string& key_prefix,
                      const std::optional<std::string>& resource) {
  NodeReport report;
  report.name = node.name;
  report.address = address_of(node);
  try {
    ContextPtr context(redisConnectWithTimeout(node.host.c_str(), node.port, to_timeval(timeout)));
    if (!context) {
      report.error = "cannot allocate a connection";
      return report;
    }
    if (context->err != 0) {
      report.error = "connect: " + io_error(*context);
      return report;
    }
    (void)redisSetTimeout(context.get(), to_timeval(timeout));
    if (std::string failed = handshake(context.get(), node); !failed.empty()) {
      report.error = std::move(failed);
      return report;
    }
    const auto sent = std::chrono::steady_clock::now();
    ReplyPtr pong = command(context.get(), {"PING"});
    const auto answered = std::chrono::steady_clock::now();
    if (!pong) {
      report.error = "PING: " + io_error(*context);
      return report;
    }
    if (pong->type == REDIS_REPLY_ERROR) {
      report.error = "PING: " + text_of(*pong);
      return report;
    }
    report.reachable = true;
    report.round_trip = std::chrono::duration_cast<Microseconds>(answered - sent);
    if (ReplyPtr info = command(context.get(), {"INFO", "replication"});
        info && info->type == REDIS_REPLY_STRING) {
      report.role = role_from_info(text_of(*info));
    }
    report.appendonly = config_value(context.get(), "appendonly");
    report.appendfsync = config_value(context.get(), "appendfsync");
    probe_amnesia_state(context.get(), key_prefix, report);
    if (resource) probe_resource(context.get(), key_prefix, *resource, report);
    if (context->err != 0) report.error = io_error(*context);
  } catch (const std::exception& error) {
    report.error = error.what();
  }
  return report;
}

}  // namespace redlock::cli
