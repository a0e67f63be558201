// The reply path (docs/engine.md): bytes from a node go through the reader
// the node connection uses (transport/reply_reader.hpp: hiredis's reader,
// each reply charged against its request's budget), and every reply that
// comes out is handed to every reply parser of scripts/reply_parse.hpp, as
// the answer of each script, and so is every element of an array reply (a
// batched call's answers). The first input byte picks how the bytes are cut
// into reads, as the socket would deliver them, and the budget (a lock
// script's or the probe's). Nothing may crash or leak, no reply may cost
// more than its budget, and each parser may only report what its script can
// mean.
#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "protocol/fence_round.hpp"
#include "protocol/recovery_plan.hpp"
#include "redlock/election.hpp"
#include "redlock/outcome.hpp"
#include "scripts/reply_parse.hpp"
#include "scripts/scripts.hpp"
#include "transport/node_connection.hpp"
#include "transport/reply_pool.hpp"
#include "transport/reply_reader.hpp"

namespace {

using redlock::NodeOutcome;
using redlock::NodeStatus;
using redlock::detail::NodeResponse;

// A node answers a request with one reply, or two when WAIT follows the
// acquire script; `count` of them, starting at `replies`.
NodeResponse response_of(const redisReply* const* replies, std::size_t count) {
  NodeResponse response;
  response.replies = replies;
  response.reply_count = count;
  return response;
}

void parse_as_acquire(const redisReply* const* replies, std::size_t count, int min_replicas) {
  NodeOutcome out;
  redlock::detail::parse_acquire_response(response_of(replies, count), min_replicas, out);
  REDLOCK_FUZZ_CHECK(out.status == NodeStatus::granted || out.status == NodeStatus::busy ||
                     out.status == NodeStatus::recovering || out.status == NodeStatus::error ||
                     out.status == NodeStatus::replicas_short ||
                     out.status == NodeStatus::permits_differ);
  REDLOCK_FUZZ_CHECK(!redlock::to_string(out.status).empty());
  // Only a grant names a permit, and never a negative one.
  REDLOCK_FUZZ_CHECK(out.permit == -1 || (out.permit >= 0 && out.status != NodeStatus::busy));
}

void parse_as_inspect(const redisReply* const* replies) {
  for (const bool permits : {false, true}) {
    redlock::NodeInspection out;
    const bool answered =
        redlock::detail::parse_inspect_response(response_of(replies, 1), permits, out);
    REDLOCK_FUZZ_CHECK(answered == out.answered);
    if (!answered) REDLOCK_FUZZ_CHECK(!out.detail.empty());
    if (!permits) REDLOCK_FUZZ_CHECK(out.permits.empty());
    // Readers hold a key that has no single value, each with time left.
    if (!out.key.readers.empty()) REDLOCK_FUZZ_CHECK(answered && !permits && !out.key.value);
    for (const auto& reader : out.key.readers) REDLOCK_FUZZ_CHECK(reader.pttl_ms >= 0);
    if (out.key.value) (void)redlock::payload_of(*out.key.value);
  }
}

void parse_as_flag(const redisReply* const* replies, NodeStatus yes) {
  NodeOutcome out;
  redlock::detail::parse_flag_response(response_of(replies, 1), yes, out);
  REDLOCK_FUZZ_CHECK(out.status == yes || out.status == NodeStatus::not_held ||
                     out.status == NodeStatus::error);
}

void parse_as_fence(const redisReply* const* replies) {
  redlock::detail::FenceAnswer answer;
  NodeOutcome out;
  if (!redlock::detail::parse_fence_response(response_of(replies, 1), answer, out)) {
    REDLOCK_FUZZ_CHECK(std::string_view(out.detail).starts_with("fencing: "));
  }
}

void parse_as_probe(const redisReply* const* replies) {
  redlock::detail::NodeProbe probe;
  if (redlock::detail::parse_probe_response(response_of(replies, 1), probe)) {
    REDLOCK_FUZZ_CHECK(probe.answered);
  } else {
    REDLOCK_FUZZ_CHECK(!probe.answered);
  }
}

// The answers to one request: `first`, and WAIT's after it when there is one.
void parse_as_every_script(const redisReply* first, const redisReply* wait) {
  const std::array<const redisReply*, 2> replies{first, wait};
  const std::size_t with_wait = wait != nullptr ? 2 : 1;
  parse_as_acquire(replies.data(), 1, 0);
  parse_as_acquire(replies.data(), with_wait, 1);
  parse_as_acquire(replies.data(), with_wait, 3);
  parse_as_flag(replies.data(), NodeStatus::extended);
  parse_as_flag(replies.data(), NodeStatus::released);
  parse_as_fence(replies.data());
  parse_as_probe(replies.data());
  parse_as_inspect(replies.data());
}

void parse_every_way(const std::vector<redisReply*>& replies) {
  for (std::size_t i = 0; i < replies.size(); ++i) {
    const redisReply* wait = i + 1 < replies.size() ? replies[i + 1] : nullptr;
    parse_as_every_script(replies[i], wait);
    // A batched call answers with one element per request, each handed to
    // the parser as that request's reply (NodeConnection::complete_batch).
    if (replies[i]->type == REDIS_REPLY_ARRAY) {
      for (std::size_t e = 0; e < replies[i]->elements; ++e) {
        parse_as_every_script(replies[i]->element[e], wait);
      }
    }
  }
}

// What a reply tree costs as ReplyReader charges it: each object, each
// string's bytes and terminator, each array's element pointers.
std::size_t cost_of(const redisReply* reply) {
  std::size_t cost = sizeof(redisReply);
  switch (reply->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      cost += reply->len + 1;
      break;
    case REDIS_REPLY_ARRAY:
      cost += reply->elements * sizeof(redisReply*);
      for (std::size_t i = 0; i < reply->elements; ++i) cost += cost_of(reply->element[i]);
      break;
    default:
      break;
  }
  return cost;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > redlock::fuzz::kMaxInputBytes) return -1;
  // The low 7 bits: 0 for one read of everything, n for reads of n bytes.
  // The high bit: the probe's reply budget instead of a lock script's.
  const std::size_t read_size = (data[0] & 0x7F) == 0 ? size : (data[0] & 0x7F);
  const std::size_t budget = (data[0] & 0x80) != 0 ? redlock::detail::kProbeReplyBytes
                                                   : redlock::detail::kScriptReplyBytes;
  const std::string_view bytes = redlock::fuzz::as_text(data + 1, size - 1);

  std::vector<redisReply*> replies;
  bool failed = false;
  {
    redlock::detail::ReplyReader reader;
    for (std::size_t offset = 0; offset < bytes.size() && !failed; offset += read_size) {
      const std::string_view chunk = bytes.substr(offset, read_size);
      if (!reader.feed(chunk.data(), chunk.size())) {
        failed = true;
        break;
      }
      for (;;) {
        redisReply* reply = nullptr;
        const auto next = reader.next(reply, budget);
        if (next == redlock::detail::ReplyReader::Next::error) {
          REDLOCK_FUZZ_CHECK(!reader.error().empty());
          failed = true;  // the connection would reset
          break;
        }
        if (next == redlock::detail::ReplyReader::Next::incomplete) break;
        REDLOCK_FUZZ_CHECK(reply != nullptr);
        replies.push_back(reply);
        REDLOCK_FUZZ_CHECK(cost_of(reply) <= budget);
      }
    }
    if (redlock::fuzz::showing()) {
      std::fprintf(stderr, "%zu replies%s%s\n", replies.size(), failed ? ", then: " : "",
                   failed ? std::string(reader.error()).c_str() : "");
    }
  }
  parse_every_way(replies);
  for (redisReply* reply : replies) redlock::detail::free_reply(reply);
  return 0;
}
