// The reply path (docs/engine.md): bytes from a node go through the hiredis
// reader the node connection uses (its reply constructors from
// transport/reply_pool.hpp), and every reply that comes out is handed to
// every reply parser of scripts/reply_parse.hpp, as the answer of each
// script, and so is every element of an array reply (a batched call's
// answers). The first input byte picks how the bytes are cut into reads, as
// the socket would deliver them. Nothing may crash or leak, and each parser
// may only report what its script can mean.
#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "protocol/fence_round.hpp"
#include "protocol/recovery_plan.hpp"
#include "redlock/outcome.hpp"
#include "scripts/reply_parse.hpp"
#include "transport/node_connection.hpp"
#include "transport/reply_pool.hpp"

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
                     out.status == NodeStatus::replicas_short);
  REDLOCK_FUZZ_CHECK(!redlock::to_string(out.status).empty());
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > redlock::fuzz::kMaxInputBytes) return -1;
  // 0: one read of everything; n: reads of n bytes.
  const std::size_t read_size = data[0] == 0 ? size : data[0];
  const std::string_view bytes = redlock::fuzz::as_text(data + 1, size - 1);

  redisReader* reader = redisReaderCreateWithFunctions(redlock::detail::pooled_reply_functions());
  REDLOCK_FUZZ_CHECK(reader != nullptr);
  std::vector<redisReply*> replies;
  bool failed = false;
  for (std::size_t offset = 0; offset < bytes.size() && !failed; offset += read_size) {
    const std::string_view chunk = bytes.substr(offset, read_size);
    if (redisReaderFeed(reader, chunk.data(), chunk.size()) != REDIS_OK) break;
    for (;;) {
      void* reply = nullptr;
      if (redisReaderGetReply(reader, &reply) != REDIS_OK) {
        failed = true;  // a protocol error: the connection would reset
        break;
      }
      if (reply == nullptr) break;
      replies.push_back(static_cast<redisReply*>(reply));
    }
  }
  if (redlock::fuzz::showing()) {
    std::fprintf(stderr, "%zu replies%s\n", replies.size(),
                 failed ? ", then a protocol error" : "");
  }
  redisReaderFree(reader);
  parse_every_way(replies);
  for (redisReply* reply : replies) redlock::detail::free_reply(reply);
  return 0;
}
