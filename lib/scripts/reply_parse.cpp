#include "scripts/reply_parse.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>
#include <string>

#include "scripts/scripts.hpp"
#include "text/escape.hpp"

namespace redlock::detail {

namespace {

// Handles everything but a well-formed reply; returns true when done.
bool parse_failure(const NodeResponse& response, NodeOutcome& out) {
  out.latency = response.latency;
  switch (response.kind) {
    case NodeResponse::Kind::timeout:
      out.status = NodeStatus::timeout;
      out.detail = std::string(response.detail);
      return true;
    case NodeResponse::Kind::unreachable:
      out.status = NodeStatus::unreachable;
      out.detail = std::string(response.detail);
      return true;
    case NodeResponse::Kind::reply:
      break;
  }
  const redisReply* reply = response.replies[0];
  if (reply->type == REDIS_REPLY_ERROR) {
    out.status = NodeStatus::error;
    // The node's own words, escaped: a reply may carry newlines or
    // terminal escapes meant for whoever prints the detail.
    out.detail = reply->len == 0 ? std::string("empty error reply")
                                 : escape_text(std::string_view(reply->str, reply->len));
    return true;
  }
  return false;
}

void unexpected(const redisReply* reply, NodeOutcome& out) {
  out.status = NodeStatus::error;
  out.detail = "unexpected reply type " + std::to_string(reply->type);
}

bool read_integer(const redisReply* reply, long long& value) {
  if (reply->type == REDIS_REPLY_INTEGER) {
    value = reply->integer;
    return true;
  }
  if (reply->type == REDIS_REPLY_STRING) {
    const char* end = reply->str + reply->len;
    auto [ptr, ec] = std::from_chars(reply->str, end, value);
    return ec == std::errc() && ptr == end;
  }
  return false;
}

}  // namespace

void parse_acquire_response(const NodeResponse& response, int min_replicas, NodeOutcome& out,
                            std::int64_t* drawn) {
  if (drawn != nullptr) *drawn = 0;
  if (parse_failure(response, out)) return;
  const redisReply* reply = response.replies[0];
  long long flag = 0;
  long long number = 0;
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 || reply->elements > 3 ||
      !read_integer(reply->element[0], flag) || !read_integer(reply->element[1], number)) {
    unexpected(reply, out);
    return;
  }
  // A permit's grant names the permit: {1, counter, permit}; a fair
  // refusal may carry the ticket it drew: {0, PTTL, ticket}; nothing else
  // has a third element.
  long long permit = -1;
  long long third = -1;
  if (reply->elements == 3) {
    const bool fair_refusal = drawn != nullptr && flag == code(ReplyCode::refused);
    if ((flag != code(ReplyCode::done) && !fair_refusal) ||
        !read_integer(reply->element[2], third) || third < (fair_refusal ? 1 : 0)) {
      unexpected(reply, out);
      return;
    }
    if (fair_refusal) {
      *drawn = third;
    } else {
      permit = third;
    }
  }
  if (flag == code(ReplyCode::permits_differ)) {
    // A count no client can have recorded is no answer to trust.
    if (number < 1) {
      unexpected(reply, out);
      return;
    }
    out.status = NodeStatus::permits_differ;
    out.holder_ttl_ms = number;
    out.detail = "the node records " + std::to_string(number) + " permits for this semaphore";
    return;
  }
  if (flag == code(ReplyCode::unmarked)) {
    out.status = NodeStatus::recovering;
    out.detail = "no identity marker: the node lost its data or was never initialised";
    return;
  }
  if (flag == code(ReplyCode::unmerged)) {
    // As an unmarked node (holder_ttl_ms stays -1): a recovery round acts.
    out.status = NodeStatus::recovering;
    out.detail =
        "recovered after data loss, its fence counters not yet merged again: draws no ticket "
        "until they are";
    return;
  }
  if (flag == code(ReplyCode::recovering)) {
    out.status = NodeStatus::recovering;
    out.holder_ttl_ms = number;
    out.detail =
        "recovering after data loss: grants nothing for " + std::to_string(number) + " ms more";
    return;
  }
  if (flag == code(ReplyCode::refused)) {
    out.status = NodeStatus::busy;
    out.holder_ttl_ms = number;
    return;
  }
  if (flag != code(ReplyCode::done)) {
    unexpected(reply, out);
    return;
  }
  out.status = NodeStatus::granted;
  out.fence_counter = number;
  out.permit = permit;
  if (min_replicas <= 0 || response.reply_count < 2) return;
  const redisReply* wait = response.replies[1];
  long long acked = 0;
  if (wait->type == REDIS_REPLY_ERROR) {
    out.status = NodeStatus::error;
    out.detail = "WAIT: " + escape_text(std::string_view(wait->str, wait->len));
  } else if (!read_integer(wait, acked)) {
    unexpected(wait, out);
  } else if (acked < min_replicas) {
    out.status = NodeStatus::replicas_short;
    out.detail =
        std::to_string(acked) + " of " + std::to_string(min_replicas) + " replicas acknowledged";
  }
}

void parse_ticket_response(const NodeResponse& response, NodeOutcome& out, QueueState& state) {
  // The acquire's shape: {1, number} or {1, number, a state >= 0}, where an
  // acquire's third element would be a permit.
  parse_acquire_response(response, 0, out);
  state = QueueState::behind;
  if (out.status == NodeStatus::granted && out.permit > 4) {
    out.status = NodeStatus::error;
    out.detail = "a ticket record's state that is not 0 to 4";
  } else if (out.status == NodeStatus::granted && out.permit > 0) {
    state = static_cast<QueueState>(out.permit);
  }
  out.permit = -1;
}

void parse_flag_response(const NodeResponse& response, NodeStatus yes, NodeOutcome& out,
                         Comeback* comeback) {
  if (parse_failure(response, out)) return;
  const redisReply* reply = response.replies[0];
  if (comeback != nullptr && reply->type == REDIS_REPLY_ARRAY &&
      (reply->elements == 2 || reply->elements == 3)) {
    long long first = 0;
    long long counter = 0;
    long long state = 0;
    if (read_integer(reply->element[0], first) &&
        (first == code(ReplyCode::done) || first == code(ReplyCode::refused)) &&
        read_integer(reply->element[1], counter) && counter > 0 &&
        (reply->elements == 2 ||
         (read_integer(reply->element[2], state) && (state == 0 || state == 1)))) {
      out.status = first == code(ReplyCode::done) ? yes : NodeStatus::not_held;
      comeback->drawn = static_cast<std::uint64_t>(counter);
      comeback->first_and_free = state == 1;
      return;
    }
  }
  long long flag = 0;
  if (!read_integer(response.replies[0], flag)) {
    unexpected(response.replies[0], out);
    return;
  }
  if (flag == code(ReplyCode::done)) {
    out.status = yes;
  } else if (comeback != nullptr && flag == code(ReplyCode::rejoined)) {
    out.status = yes;
    comeback->rejoined = true;
  } else if (flag == code(ReplyCode::refused)) {
    out.status = NodeStatus::not_held;
  } else {
    unexpected(response.replies[0], out);
  }
}

bool answers_unmerged(const NodeResponse& response) noexcept {
  if (response.kind != NodeResponse::Kind::reply || response.reply_count == 0) return false;
  const redisReply* reply = response.replies[0];
  long long flag = 0;
  return reply != nullptr && reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
         read_integer(reply->element[0], flag) && flag == code(ReplyCode::unmerged);
}

bool parse_fence_response(const NodeResponse& response, FenceAnswer& answer, NodeOutcome& out,
                          bool* unmerged) {
  NodeOutcome scratch;
  if (parse_failure(response, scratch)) {
    out.detail = "fencing: " + scratch.detail;
    return false;
  }
  const redisReply* reply = response.replies[0];
  long long stored = 0;
  long long counter = 0;
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
      !read_integer(reply->element[0], stored) || !read_integer(reply->element[1], counter) ||
      counter < 0) {
    out.detail = "fencing: unexpected reply";
    return false;
  }
  if (stored == code(ReplyCode::recovering)) {
    out.detail = "fencing: node is recovering after data loss";
    return false;
  }
  if (stored == code(ReplyCode::unmarked)) {
    out.detail = "fencing: node has no identity marker";
    return false;
  }
  if (stored == code(ReplyCode::unmerged)) {
    out.detail = "fencing: node recovered after data loss, its counters not yet merged again";
    if (unmerged != nullptr) *unmerged = true;
    return false;
  }
  if (stored != code(ReplyCode::done) && stored != code(ReplyCode::refused)) {
    out.detail = "fencing: unexpected reply";
    return false;
  }
  answer.stored = stored == code(ReplyCode::done);
  answer.current = static_cast<std::uint64_t>(counter);
  return true;
}

namespace {

// Four elements from `at` of an inspect reply: exists, value, PTTL, counter.
bool read_key_view(const redisReply* reply, std::size_t at, KeyView& key) {
  long long exists = 0;
  long long left = 0;
  long long counter = 0;
  const redisReply* value = reply->element[at + 1];
  if (!read_integer(reply->element[at], exists) || value->type != REDIS_REPLY_STRING ||
      !read_integer(reply->element[at + 2], left) ||
      !read_integer(reply->element[at + 3], counter) || counter < 0) {
    return false;
  }
  key.value.reset();
  if (exists == 1) key.value = std::string(value->str, value->len);
  key.pttl_ms = left;
  key.fence = static_cast<std::uint64_t>(counter);
  return true;
}

}  // namespace

bool parse_inspect_response(const NodeResponse& response, bool permits, NodeInspection& out) {
  NodeOutcome failure;
  if (parse_failure(response, failure)) {
    out.answered = false;
    out.latency = failure.latency;
    out.detail = failure.detail;
    return false;
  }
  out.latency = response.latency;
  const redisReply* reply = response.replies[0];
  const auto malformed = [&out] {
    out.answered = false;
    out.detail = "unexpected reply to inspect";
    return false;
  };
  if (reply->type != REDIS_REPLY_ARRAY) return malformed();
  if (!permits) {
    long long held = 0;
    const bool by_readers = reply->elements >= 4 && read_integer(reply->element[0], held) &&
                            held == 2 && reply->elements % 2 == 0;
    if (by_readers) {
      // Readers hold the key: its PTTL and counter, then each reader.
      long long left = 0;
      long long counter = 0;
      if (!read_integer(reply->element[2], left) || !read_integer(reply->element[3], counter) ||
          counter < 0) {
        return malformed();
      }
      // Read whole before it is kept: a malformed reader leaves nothing.
      KeyView key;
      key.pttl_ms = left;
      key.fence = static_cast<std::uint64_t>(counter);
      for (std::size_t i = 4; i + 1 < reply->elements; i += 2) {
        const redisReply* value = reply->element[i];
        long long reader_left = 0;
        if (value->type != REDIS_REPLY_STRING ||
            !read_integer(reply->element[i + 1], reader_left) || reader_left < 0) {
          return malformed();
        }
        key.readers.push_back(KeyView::Reader{std::string(value->str, value->len),
                                              static_cast<std::int64_t>(reader_left)});
      }
      out.key = std::move(key);
      out.answered = true;
      return true;
    }
    if (reply->elements != 4 || !read_key_view(reply, 0, out.key)) return malformed();
    out.answered = true;
    return true;
  }
  if (reply->elements < 1 || (reply->elements - 1) % 4 != 0) return malformed();
  const redisReply* recorded = reply->element[0];
  long long count = 0;
  if (recorded->type != REDIS_REPLY_STRING) return malformed();
  if (recorded->len > 0 && (!read_integer(recorded, count) || count < 0)) return malformed();
  out.permits_recorded = static_cast<std::uint32_t>(std::min<long long>(count, 1u << 30));
  out.permits.assign((reply->elements - 1) / 4, KeyView{});
  for (std::size_t j = 0; j < out.permits.size(); ++j) {
    if (!read_key_view(reply, 1 + 4 * j, out.permits[j])) return malformed();
  }
  out.answered = true;
  return true;
}

bool parse_probe_response(const NodeResponse& response, NodeProbe& probe) {
  if (response.kind != NodeResponse::Kind::reply) return false;
  const redisReply* reply = response.replies[0];
  long long marked = 0;
  long long recovering = 0;
  long long has_locks = 0;
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 4 ||
      !read_integer(reply->element[0], marked) || !read_integer(reply->element[1], recovering) ||
      !read_integer(reply->element[2], has_locks) || reply->element[3]->type != REDIS_REPLY_ARRAY) {
    return false;
  }
  const redisReply* fence = reply->element[3];
  probe.fence.clear();
  probe.unmerged = false;
  for (std::size_t i = 0; i + 1 < fence->elements; i += 2) {
    long long value = 0;
    if (fence->element[i]->type != REDIS_REPLY_STRING ||
        !read_integer(fence->element[i + 1], value) || value < 0) {
      return false;
    }
    if (fence->element[i]->len == 0) {
      // The empty field: the node awaits its second merge (not a counter).
      probe.unmerged = true;
      continue;
    }
    probe.fence.emplace_back(std::string(fence->element[i]->str, fence->element[i]->len),
                             static_cast<std::uint64_t>(value));
  }
  probe.answered = true;
  probe.marked = marked == 1;
  probe.has_locks = has_locks == 1;
  probe.recovering = recovering != -2;
  return true;
}

}  // namespace redlock::detail
