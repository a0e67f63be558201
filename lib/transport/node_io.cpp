// A NodeConnection's bytes: the output buffer written once per loop turn
// (encrypted first over TLS), and the input read, decrypted and parsed into
// replies that complete the oldest requests in order (a batch's reply
// handed out per request). The session itself is in node_connection.cpp.
#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "redlock/clock.hpp"
#include "text/escape.hpp"
#include "transport/loop_context.hpp"
#include "transport/node_connection.hpp"
#include "transport/node_connection_inside.hpp"
#include "transport/node_slot.hpp"
#include "transport/reply_pool.hpp"
#include "transport/reply_reader.hpp"
#include "transport/resp_writer.hpp"
#include "transport/tls_session.hpp"

namespace redlock::detail {

namespace {

// A drained output buffer that grew past this is let go rather than kept
// for the session's life (a burst); requests in flight in the benchmarks
// (64 of them) stay below it.
constexpr std::size_t kKeptOutputCapacity = 32 * 1024;

struct WriteRequest {
  uv_write_t req{};
  std::string data;
  std::uint64_t generation = 0;
};

}  // namespace

void NodeConnection::send_command(std::initializer_list<std::string_view> argv) {
  // Before the session is ready nothing is written behind the handshake
  // (queue_script); the ready handler sends what matters once it is.
  if (state_ != State::ready) return;
  emit_pending();
  append_command(outbuf_, argv);
  note_subscription(std::span<const std::string_view>(argv.begin(), argv.size()));
  Slot slot;
  slot.deadline = TimePoint::max();
  slots_.push_back(std::move(slot));
  want_flush();
}

void NodeConnection::want_flush() {
  // Once per loop turn, not once per request: the loop turn's list of
  // connections to flush is searched on every call.
  if (flush_wanted_ || (state_ != State::handshaking && state_ != State::ready)) return;
  flush_wanted_ = true;
  loop_.turn().want_flush(this);
}

void NodeConnection::flush() {
  flush_wanted_ = false;
  start_write();
}

void NodeConnection::start_write() {
  emit_pending();
  if (state_ != State::handshaking && state_ != State::ready) return;
  if (!encrypt_output()) {
    reset(tls_->error());
    return;
  }
  std::string& wire = wire_buffer();
  if (write_in_flight_ || wire.empty()) return;
  auto* stream = tcp_->stream();
  // Try the write at once: on an idle socket it completes without a
  // write request, a callback or an extra poll registration.
  uv_buf_t buf = uv_buf_init(wire.data(), static_cast<unsigned>(wire.size()));
  const int written = uv_try_write(stream, &buf, 1);
  if (written < 0 && written != UV_EAGAIN) {
    reset(uv_error_text("write", written));
    return;
  }
  if (written > 0) wire.erase(0, static_cast<std::size_t>(written));
  if (wire.empty()) {
    release_drained(wire);
    return;
  }

  auto* request = new WriteRequest{};
  request->data = std::move(wire);
  wire.clear();
  request->generation = generation_;
  request->req.data = this;
  buf = uv_buf_init(request->data.data(), static_cast<unsigned>(request->data.size()));
  write_in_flight_ = true;
  const int rc = uv_write(&request->req, stream, &buf, 1, [](uv_write_t* req, int status) {
    auto* write = reinterpret_cast<WriteRequest*>(req);
    auto* self = static_cast<NodeConnection*>(req->data);
    const bool current = write->generation == self->generation_;
    delete write;
    if (!current) return;
    self->write_in_flight_ = false;
    if (status < 0) {
      self->reset(uv_error_text("write", status));
    } else {
      self->start_write();
    }
  });
  if (rc < 0) {
    delete request;
    write_in_flight_ = false;
    reset(uv_error_text("write", rc));
  }
}

bool NodeConnection::encrypt_output() {
  // Over TLS the plaintext waits for the TLS handshake, then goes out
  // encrypted; the output buffer keeps coalescing requests either way.
  if (!tls_ || !tls_->established() || outbuf_.empty()) return true;
  if (!tls_->encrypt(outbuf_, tls_out_)) return false;
  outbuf_.clear();
  release_drained(outbuf_);
  return true;
}

void NodeConnection::release_drained(std::string& drained) const noexcept {
  // Nothing follows the handshake's text until the node has answered it:
  // its buffer always goes (a swap: clear() keeps the capacity).
  if (drained.empty() &&
      (state_ == State::handshaking || drained.capacity() > kKeptOutputCapacity)) {
    std::string().swap(drained);
  }
}

void NodeConnection::on_read(ssize_t nread, const char* data) {
  if (nread == 0) return;
  if (nread < 0) {
    std::string why = nread == UV_EOF ? std::string("connection closed by the node")
                                      : uv_error_text("read", static_cast<int>(nread));
    // A TLS server drops a plaintext session without a word.
    if (!tls_ && !plain_seen_ && state_ == State::handshaking) {
      why += " before answering (does it serve TLS here? use rediss:// or tls = true)";
    } else if (tls_ && !tls_->established()) {
      why += " in the TLS handshake";
    }
    reset(std::move(why));
    return;
  }
  if (!tls_) {
    // The first byte of a TLS record (handshake 0x16, alert 0x15) is never
    // the first byte of a RESP reply.
    if (!plain_seen_ && (data[0] == 0x15 || data[0] == 0x16)) {
      reset("the node answered in TLS: use rediss:// or tls = true");
      return;
    }
    plain_seen_ = true;
    on_plaintext(data, static_cast<std::size_t>(nread));
    return;
  }
  const bool was_established = tls_->established();
  if (!tls_->receive(data, static_cast<std::size_t>(nread), tls_out_)) {
    reset(tls_->error());
    return;
  }
  const std::uint64_t generation = generation_;
  // Handshake messages to send, and once it is done, what waited for it.
  if (!tls_out_.empty() || (!was_established && tls_->established())) start_write();
  if (generation != generation_) return;
  // The read buffer's bytes are in the session now: it takes the plaintext.
  const std::span<char> shared = loop_.read_buffer();
  char* buffer = shared.data();
  const std::size_t size = shared.size();
  for (;;) {
    const long got = tls_->read(buffer, size);
    if (got < 0) {
      reset(tls_->error());
      return;
    }
    if (got == 0) return;
    on_plaintext(buffer, static_cast<std::size_t>(got));
    if (generation != generation_) return;
  }
}

void NodeConnection::on_plaintext(const char* data, std::size_t size) {
  if (!reader_->feed(data, size)) {
    reset("protocol error: " + std::string(reader_->error()));
    return;
  }
  // Every reply in this read had arrived by now: one reading serves them all.
  const TimePoint received_at = loop_.clock().now();
  const std::uint64_t generation = generation_;
  while (generation == generation_) {
    // A reply is charged to the request at the front of the queue, the one
    // it answers (a reply to no script, to the lock scripts' budget).
    const Script* script = slots_.empty() ? nullptr : slots_.front().script;
    const std::size_t budget = script != nullptr ? script->max_reply_bytes : kDefaultReplyBytes;
    redisReply* reply = nullptr;
    switch (reader_->next(reply, budget)) {
      case ReplyReader::Next::error:
        reset("protocol error: " + std::string(reader_->error()));
        return;
      case ReplyReader::Next::incomplete:
        // A node that answered again takes the cleanups it was spared.
        if (!deferred_cleanups_.empty() && state_ == State::ready && !unresponsive()) {
          resend_deferred_cleanups();
          if (pending_count_ > 0) want_flush();
        }
        return;
      case ReplyReader::Next::reply:
        on_reply(reply, received_at);
        break;
    }
  }
}

void NodeConnection::note_subscription(std::span<const std::string_view> words) {
  if (words.empty()) return;
  if (words[0] == "SSUBSCRIBE") shard_subscribed_ = true;
  if (words[0] != "SUNSUBSCRIBE") return;
  for (std::size_t i = 1; i < words.size(); ++i) unsubscribing_.emplace_back(words[i]);
}

bool NodeConnection::took_push(const redisReply& reply) {
  // A lock session subscribes nothing: its replies all answer requests.
  if (!push_handler_ && !shard_subscribed_) return false;
  if (reply.type != REDIS_REPLY_ARRAY || reply.elements < 3 ||
      reply.element[0]->type != REDIS_REPLY_STRING ||
      reply.element[1]->type != REDIS_REPLY_STRING) {
    return false;
  }
  const std::string_view kind(reply.element[0]->str, reply.element[0]->len);
  const std::string_view channel(reply.element[1]->str, reply.element[1]->len);
  if (push_handler_ && (kind == "message" || kind == "smessage") &&
      reply.element[2]->type == REDIS_REPLY_STRING) {
    push_handler_(channel, std::string_view(reply.element[2]->str, reply.element[2]->len));
    return true;
  }
  if (kind != "sunsubscribe" || !shard_subscribed_) return false;
  const auto asked = std::find(unsubscribing_.begin(), unsubscribing_.end(), channel);
  if (asked != unsubscribing_.end()) {
    unsubscribing_.erase(asked);
    return false;  // the answer to this session's SUNSUBSCRIBE
  }
  if (unsubscribed_handler_) unsubscribed_handler_(channel);
  return true;
}

void NodeConnection::on_reply(redisReply* reply, TimePoint received_at) {
  ReplyPtr owned(reply);
  if (took_push(*reply)) return;
  if (slots_.empty()) {
    reset("reply without a request (protocol out of step)");
    return;
  }
  Slot& front = slots_.front();
  if (front.skip > 0) {
    // A transaction's +OK and +QUEUED replies say nothing; an error among
    // them (a command refused by an ACL, say) says why EXEC failed.
    --front.skip;
    if (reply->type == REDIS_REPLY_ERROR && !front.replies[1]) front.replies[1] = std::move(owned);
    return;
  }
  front.replies[front.received++] = std::move(owned);
  if (front.received == front.expected) complete_front(received_at);
}

void NodeConnection::complete_front(TimePoint received_at) {
  Slot& front = slots_.front();
  if (front.fact != ServerFact::none) {
    facts_.record(front.fact, *front.replies[0]);
    if (!front.handshake) {
      slots_.drop_front();
      return;
    }
  }
  if (front.handshake) {
    Slot slot = slots_.take_front();
    on_handshake_reply(slot);
    return;
  }
  const redisReply* first = front.replies[0].get();
  if (front.script != nullptr && !front.evaled && first->type == REDIS_REPLY_ERROR &&
      std::strncmp(first->str, "NOSCRIPT", 8) == 0) {
    resend_with_eval(std::max<std::size_t>(front.batch_size, 1));
    return;
  }
  if (front.batch_size > 0) {
    complete_batch(received_at);
    return;
  }
  const std::array<ReplyPtr, 2> replies = std::move(front.replies);
  std::array<const redisReply*, 2> views{replies[0].get(), replies[1].get()};
  deliver_front(views.data(), front.expected, received_at);
}

void NodeConnection::deliver_front(const redisReply* const* views, std::size_t reply_count,
                                   TimePoint received_at, AnswerTally* tally) {
  // Only what the sink is given leaves the queue; the rest of the slot is
  // dropped where it is.
  Slot& front = slots_.front();
  const std::shared_ptr<ResponseSink> sink = std::move(front.sink);
  const std::uint32_t tag = front.tag;
  const TimePoint sent_at = front.sent_at;
  const bool late = front.answered;
  slots_.drop_front();
  if (!sink) return;  // a command whose reply nobody waits for
  const redisReply* first = views[0];
  NodeResponse response;
  response.kind = NodeResponse::Kind::reply;
  response.replies = views;
  response.reply_count = reply_count;
  response.latency = received_at > sent_at ? std::chrono::ceil<Microseconds>(received_at - sent_at)
                                           : Microseconds(0);
  response.late = late;
  if (!late) {
    if (tally != nullptr) {
      count_answer(*tally, response.latency, first->type == REDIS_REPLY_ERROR);
    } else {
      stats_.replies.fetch_add(1, std::memory_order_relaxed);
      if (first->type == REDIS_REPLY_ERROR)
        stats_.error_replies.fetch_add(1, std::memory_order_relaxed);
      stats_.latency.observe(response.latency);
    }
  }
  sink->on_response(index_, tag, response);
}

void NodeConnection::count_answer(AnswerTally& tally, Microseconds latency, bool error) noexcept {
  ++tally.replies;
  if (error) ++tally.error_replies;
  if (tally.run_length > 0 && latency != tally.run_latency) {
    stats_.latency.observe(tally.run_latency, tally.run_length);
    tally.run_length = 0;
  }
  tally.run_latency = latency;
  ++tally.run_length;
}

void NodeConnection::flush_answers(AnswerTally& tally) noexcept {
  if (tally.replies > 0) stats_.replies.fetch_add(tally.replies, std::memory_order_relaxed);
  if (tally.error_replies > 0) {
    stats_.error_replies.fetch_add(tally.error_replies, std::memory_order_relaxed);
  }
  if (tally.run_length > 0) stats_.latency.observe(tally.run_latency, tally.run_length);
  tally = AnswerTally{};
}

}  // namespace redlock::detail
