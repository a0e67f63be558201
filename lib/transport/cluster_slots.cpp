#include "transport/cluster_slots.hpp"

#include "text/escape.hpp"

namespace redlock::detail {
namespace {

std::string_view text_of(const redisReply& reply) { return {reply.str, reply.len}; }

// [host, port, node id, ...] as a server; nullopt when it is not one.
std::optional<ShardEndpoint> endpoint_from(const redisReply& server,
                                           std::string_view answering_host) {
  if (server.type != REDIS_REPLY_ARRAY || server.elements < 2) return std::nullopt;
  const redisReply& host = *server.element[0];
  const redisReply& port = *server.element[1];
  // A host the server does not know is empty, "?" or nil.
  if ((host.type != REDIS_REPLY_STRING && host.type != REDIS_REPLY_STATUS &&
       host.type != REDIS_REPLY_NIL) ||
      port.type != REDIS_REPLY_INTEGER || port.integer <= 0 || port.integer > 65535) {
    return std::nullopt;
  }
  ShardEndpoint endpoint;
  if (host.type != REDIS_REPLY_NIL) endpoint.host = std::string(text_of(host));
  if (endpoint.host.empty() || endpoint.host == "?") endpoint.host = std::string(answering_host);
  if (endpoint.host.empty()) return std::nullopt;
  endpoint.port = static_cast<std::uint16_t>(port.integer);
  if (server.elements >= 3 && server.element[2]->type == REDIS_REPLY_STRING) {
    endpoint.id = std::string(text_of(*server.element[2]));
  }
  return endpoint;
}

}  // namespace

std::optional<std::vector<SlotRange>> slot_ranges_from(const redisReply& reply,
                                                       std::string_view answering_host,
                                                       std::string& error) {
  if (reply.type == REDIS_REPLY_ERROR) {
    error = escape_text(text_of(reply));
    return std::nullopt;
  }
  if (reply.type != REDIS_REPLY_ARRAY) {
    error = "CLUSTER SLOTS did not answer with a list";
    return std::nullopt;
  }
  std::vector<SlotRange> ranges;
  ranges.reserve(reply.elements);
  for (std::size_t i = 0; i < reply.elements; ++i) {
    const redisReply& entry = *reply.element[i];
    const std::string where = "CLUSTER SLOTS entry " + std::to_string(i + 1);
    if (entry.type != REDIS_REPLY_ARRAY || entry.elements < 3 ||
        entry.element[0]->type != REDIS_REPLY_INTEGER ||
        entry.element[1]->type != REDIS_REPLY_INTEGER) {
      error = where + " is not [first, last, master, ...]";
      return std::nullopt;
    }
    const long long first = entry.element[0]->integer;
    const long long last = entry.element[1]->integer;
    if (first < 0 || last < first || last >= kClusterSlots) {
      error = where + " has slots out of bounds";
      return std::nullopt;
    }
    SlotRange range;
    range.first = static_cast<std::uint16_t>(first);
    range.last = static_cast<std::uint16_t>(last);
    std::optional<ShardEndpoint> master = endpoint_from(*entry.element[2], answering_host);
    if (!master) {
      error = where + " names no master it could be reached at";
      return std::nullopt;
    }
    range.master = std::move(*master);
    for (std::size_t r = 3; r < entry.elements; ++r) {
      // A replica the map cannot place is left out: only masters vote.
      if (auto replica = endpoint_from(*entry.element[r], answering_host)) {
        range.replicas.push_back(std::move(*replica));
      }
    }
    ranges.push_back(std::move(range));
  }
  return ranges;
}

}  // namespace redlock::detail
