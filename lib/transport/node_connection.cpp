#include "transport/node_connection.hpp"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <deque>
#include <utility>

#include "redlock/clock.hpp"
#include "text/escape.hpp"
#include "transport/loop_context.hpp"
#include "transport/node_slot.hpp"
#include "transport/reply_pool.hpp"
#include "transport/resp_writer.hpp"

namespace redlock::detail {

namespace {

constexpr std::size_t kReadBufferSize = 16 * 1024;

std::string uv_error_text(std::string_view what, int status) {
  std::string text(what);
  text += ": ";
  text += uv_strerror(status);
  return text;
}

}  // namespace

struct NodeConnection::HandshakeStep {
  std::string what;  // the command, for error messages
  // An error is tolerated (CONFIG GET may be denied).
  bool optional = false;
  // CONFIG GET appendonly / appendfsync: which persistence field it reads.
  int persistence_field = 0;
};

struct NodeConnection::TcpHolder {
  uv_tcp_t tcp{};
  NodeConnection* owner = nullptr;  // null once the connection let go of it
  LoopContext* loop = nullptr;
  std::uint64_t generation = 0;
  std::array<char, kReadBufferSize> read_buffer{};
};

namespace {

struct ConnectRequest {
  uv_connect_t req{};
};

struct WriteRequest {
  uv_write_t req{};
  std::string data;
  std::uint64_t generation = 0;
};

struct ResolveRequest {
  uv_getaddrinfo_t req{};
  std::uint64_t generation = 0;
};

}  // namespace

NodeConnection::NodeConnection(LoopContext& loop, NodeMetrics& stats, std::size_t index,
                               const NodeConfig& node, const LockConfig& lock, SessionSetup setup)
    : loop_(loop),
      index_(index),
      node_(node),
      setup_(std::move(setup)),
      stats_(stats),
      request_timeout_(effective_node_timeout(lock, node)),
      connect_timeout_(lock.connect_timeout),
      wait_timeout_(node.replica_timeout.value_or(effective_node_timeout(lock, node))),
      reconnect_min_(lock.reconnect_min),
      reconnect_max_(lock.reconnect_max),
      backoff_(lock.reconnect_min) {}

NodeConnection::~NodeConnection() {
  if (reader_ != nullptr) redisReaderFree(reader_);
}

void NodeConnection::start() {
  if (state_ == State::closed) return;
  ++generation_;
  last_error_.clear();
  sockaddr_storage address{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (uv_ip4_addr(node_.host.c_str(), node_.port, v4) == 0 ||
      uv_ip6_addr(node_.host.c_str(), node_.port, v6) == 0) {
    connect_to(reinterpret_cast<const sockaddr*>(&address));
  } else {
    begin_resolve();
  }
}

void NodeConnection::begin_resolve() {
  state_ = State::resolving;
  auto* request = new ResolveRequest{};
  request->generation = generation_;
  request->req.data = this;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  const std::string port = number_text(node_.port);
  loop_.handle_opened();
  const int rc = uv_getaddrinfo(
      loop_.loop(), &request->req,
      [](uv_getaddrinfo_t* req, int status, addrinfo* result) {
        auto* resolve = reinterpret_cast<ResolveRequest*>(req);
        auto* self = static_cast<NodeConnection*>(req->data);
        if (self->generation_ == resolve->generation && self->state_ == State::resolving) {
          if (status < 0 || result == nullptr) {
            self->reset(uv_error_text("cannot resolve " + self->node_.host, status));
          } else {
            self->connect_to(result->ai_addr);
          }
        }
        uv_freeaddrinfo(result);
        LoopContext& loop = self->loop_;
        delete resolve;
        loop.handle_closed();
      },
      node_.host.c_str(), port.c_str(), &hints);
  if (rc < 0) {
    delete request;
    loop_.handle_closed();
    reset(uv_error_text("cannot resolve " + node_.host, rc));
  }
}

void NodeConnection::connect_to(const sockaddr* address) {
  state_ = State::connecting;
  reader_ = redisReaderCreateWithFunctions(pooled_reply_functions());
  tcp_ = new TcpHolder{};
  tcp_->owner = this;
  tcp_->loop = &loop_;
  tcp_->generation = generation_;
  uv_tcp_init(loop_.loop(), &tcp_->tcp);
  tcp_->tcp.data = tcp_;
  loop_.handle_opened();
  uv_tcp_nodelay(&tcp_->tcp, 1);

  connect_timer_ = loop_.timers().schedule_after(connect_timeout_, [this] {
    connect_timer_ = TimerQueue::kNone;
    reset("connect timeout after " + number_text(connect_timeout_.count()) + " ms");
  });

  auto* request = new ConnectRequest{};
  const int rc =
      uv_tcp_connect(&request->req, &tcp_->tcp, address, [](uv_connect_t* req, int status) {
        auto* holder = static_cast<TcpHolder*>(req->handle->data);
        delete reinterpret_cast<ConnectRequest*>(req);
        if (holder->owner != nullptr && holder->generation == holder->owner->generation_) {
          holder->owner->on_connected(status);
        }
      });
  if (rc < 0) {
    delete request;
    reset(uv_error_text("connect", rc));
  }
}

void NodeConnection::on_connected(int status) {
  if (status < 0) {
    reset(uv_error_text("connect", status));
    return;
  }
  state_ = State::handshaking;
  const int rc = uv_read_start(
      reinterpret_cast<uv_stream_t*>(&tcp_->tcp),
      [](uv_handle_t* handle, std::size_t, uv_buf_t* buf) {
        auto* holder = static_cast<TcpHolder*>(handle->data);
        buf->base = holder->read_buffer.data();
        buf->len = holder->read_buffer.size();
      },
      [](uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
        auto* holder = static_cast<TcpHolder*>(stream->data);
        if (holder->owner != nullptr && holder->generation == holder->owner->generation_) {
          holder->owner->on_read(nread, buf->base);
        }
      });
  if (rc < 0) {
    reset(uv_error_text("read", rc));
    return;
  }
  queue_handshake();
  start_write();
}

void NodeConnection::queue_handshake() {
  // The handshake goes in front of requests queued while connecting; Redis
  // runs it first, so those requests see an authenticated, selected session.
  std::string head;
  std::deque<Slot> handshake;
  handshake_steps_.clear();
  auto add = [&](std::string what, bool optional = false, int persistence_field = 0) {
    Slot slot;
    slot.handshake = true;
    slot.step = static_cast<std::uint8_t>(handshake_steps_.size());
    handshake_steps_.push_back(HandshakeStep{std::move(what), optional, persistence_field});
    handshake.push_back(std::move(slot));
  };
  if (!node_.password.empty()) {
    if (node_.username.empty()) {
      append_command(head, {"AUTH", node_.password});
    } else {
      append_command(head, {"AUTH", node_.username, node_.password});
    }
    add("AUTH");
  }
  if (node_.db != 0) {
    append_command(head, {"SELECT", number_text(node_.db)});
    add("SELECT " + number_text(node_.db));
  }
  // Persistence, where the node allows CONFIG GET.
  appendonly_.clear();
  appendfsync_.clear();
  if (setup_.read_persistence) {
    append_command(head, {"CONFIG", "GET", "appendonly"});
    add("CONFIG GET appendonly", true, 1);
    append_command(head, {"CONFIG", "GET", "appendfsync"});
    add("CONFIG GET appendfsync", true, 2);
  }
  for (const Script* script : setup_.scripts) {
    append_command(head, {"SCRIPT", "LOAD", script->body});
    add(std::string("SCRIPT LOAD (") + std::string(script->name) + ")");
  }
  // A session is ready once the node has answered it: with nothing else to
  // ask, a PING is the question.
  if (handshake.empty()) {
    append_command(head, {"PING"});
    add("PING");
  }
  handshake_pending_ = handshake.size();
  outbuf_.insert(0, head);
  for (auto it = handshake.rbegin(); it != handshake.rend(); ++it) {
    slots_.push_front(std::move(*it));
  }
}

void NodeConnection::send_command(std::initializer_list<std::string_view> argv) {
  // Before the session is ready nothing is written behind the handshake
  // (queue_script); the ready handler sends what matters once it is.
  if (state_ != State::ready) return;
  emit_pending();
  append_command(outbuf_, argv);
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
  if (write_in_flight_ || outbuf_.empty()) return;
  if (state_ != State::handshaking && state_ != State::ready) return;
  auto* stream = reinterpret_cast<uv_stream_t*>(&tcp_->tcp);
  // Try the write at once: on an idle socket it completes without a
  // write request, a callback or an extra poll registration.
  uv_buf_t buf = uv_buf_init(outbuf_.data(), static_cast<unsigned>(outbuf_.size()));
  const int written = uv_try_write(stream, &buf, 1);
  if (written < 0 && written != UV_EAGAIN) {
    reset(uv_error_text("write", written));
    return;
  }
  if (written > 0) outbuf_.erase(0, static_cast<std::size_t>(written));
  if (outbuf_.empty()) return;

  auto* request = new WriteRequest{};
  request->data = std::move(outbuf_);
  outbuf_.clear();
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

void NodeConnection::on_read(ssize_t nread, const char* data) {
  if (nread == 0) return;
  if (nread < 0) {
    reset(nread == UV_EOF ? std::string("connection closed by the node")
                          : uv_error_text("read", static_cast<int>(nread)));
    return;
  }
  if (redisReaderFeed(reader_, data, static_cast<std::size_t>(nread)) != REDIS_OK) {
    reset("protocol error");
    return;
  }
  // Every reply in this read had arrived by now: one reading serves them all.
  const TimePoint received_at = loop_.clock().now();
  const std::uint64_t generation = generation_;
  while (generation == generation_) {
    void* reply = nullptr;
    if (redisReaderGetReply(reader_, &reply) != REDIS_OK) {
      reset(std::string("protocol error: ") + reader_->errstr);
      return;
    }
    if (reply == nullptr) return;
    on_reply(static_cast<redisReply*>(reply), received_at);
  }
}

void NodeConnection::on_reply(redisReply* reply, TimePoint received_at) {
  ReplyPtr owned(reply);
  if (push_handler_ && reply->type == REDIS_REPLY_ARRAY && reply->elements >= 3 &&
      reply->element[0]->type == REDIS_REPLY_STRING &&
      std::string_view(reply->element[0]->str, reply->element[0]->len) == "message") {
    // A published message: not the answer to any request.
    push_handler_(std::string_view(reply->element[1]->str, reply->element[1]->len),
                  std::string_view(reply->element[2]->str, reply->element[2]->len));
    return;
  }
  if (slots_.empty()) {
    reset("reply without a request (protocol out of step)");
    return;
  }
  Slot& front = slots_.front();
  front.replies[front.received++] = std::move(owned);
  if (front.received == front.expected) complete_front(received_at);
}

void NodeConnection::complete_front(TimePoint received_at) {
  Slot& front = slots_.front();
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
                                   TimePoint received_at) {
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
    stats_.replies.fetch_add(1, std::memory_order_relaxed);
    if (first->type == REDIS_REPLY_ERROR)
      stats_.error_replies.fetch_add(1, std::memory_order_relaxed);
    stats_.latency.observe(response.latency);
  }
  sink->on_response(index_, tag, response);
}

void NodeConnection::on_handshake_reply(Slot& slot) {
  const redisReply* reply = slot.replies[0].get();
  const HandshakeStep& step = handshake_steps_[slot.step];
  if (step.persistence_field != 0 && reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
      reply->element[1]->type == REDIS_REPLY_STRING) {
    std::string value(reply->element[1]->str, reply->element[1]->len);
    (step.persistence_field == 1 ? appendonly_ : appendfsync_) = std::move(value);
  }
  if (reply->type == REDIS_REPLY_ERROR && !step.optional) {
    reset(step.what + " failed: " + std::string(reply->str, reply->len));
    return;
  }
  if (--handshake_pending_ == 0 && state_ == State::handshaking) {
    state_ = State::ready;
    loop_.timers().cancel(connect_timer_);
    connect_timer_ = TimerQueue::kNone;
    backoff_ = reconnect_min_;
    last_error_.clear();
    // Requests queued during set-up get their own timeout from now on.
    const TimePoint now = SteadyClock::now();
    for (Slot& queued : slots_) {
      if (!queued.before_ready || queued.answered) continue;
      queued.before_ready = false;
      queued.deadline = now + request_timeout_ +
                        (queued.with_wait ? Microseconds(wait_timeout_) : Microseconds(0));
    }
    deadline_armed_for_ = TimePoint::max();
    arm_deadline();
    // What waited for the handshake leaves now, cleanups of values that may
    // still live on the node first.
    resend_deferred_cleanups();
    if (pending_count_ > 0) want_flush();
    if (ready_handler_) ready_handler_();
  }
}

void NodeConnection::arm_deadline() {
  TimePoint earliest = TimePoint::max();
  for (const Slot& slot : slots_) {
    if (!slot.handshake && !slot.answered) earliest = std::min(earliest, slot.deadline);
  }
  if (earliest == deadline_armed_for_) return;
  loop_.timers().cancel(deadline_timer_);
  deadline_timer_ = TimerQueue::kNone;
  deadline_armed_for_ = earliest;
  if (earliest == TimePoint::max()) return;
  const auto wait = std::chrono::ceil<Microseconds>(earliest - SteadyClock::now());
  deadline_timer_ = loop_.timers().schedule_after(std::max(wait, Microseconds(0)), [this] {
    deadline_timer_ = TimerQueue::kNone;
    deadline_armed_for_ = TimePoint::max();
    on_deadline();
  });
}

void NodeConnection::on_deadline() {
  const TimePoint now = SteadyClock::now();
  const std::uint64_t generation = generation_;
  const std::string detail =
      "no answer within " +
      number_text(std::chrono::duration_cast<Milliseconds>(request_timeout_).count()) + " ms";
  // Index loop: a sink may send() more requests, which appends to slots_.
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (slot.handshake || slot.answered || slot.deadline > now) continue;
    slot.answered = true;
    if (!slot.sink) continue;
    stats_.timeouts.fetch_add(1, std::memory_order_relaxed);
    std::shared_ptr<ResponseSink> sink = slot.sink;
    NodeResponse response;
    response.kind = NodeResponse::Kind::timeout;
    response.detail = detail;
    response.may_have_run = slot.written;
    response.latency = std::chrono::ceil<Microseconds>(loop_.clock().now() - slot.sent_at);
    sink->on_response(index_, slot.tag, response);
    if (generation != generation_) return;
  }
  arm_deadline();
}

void NodeConnection::reset(std::string why) {
  ++generation_;
  // `why` may quote the node's error reply or the reader's error: escaped,
  // as it ends up in NodeHealth::last_error and in request details.
  last_error_ = escape_text(why);
  loop_.timers().cancel(connect_timer_);
  connect_timer_ = TimerQueue::kNone;
  loop_.timers().cancel(deadline_timer_);
  deadline_timer_ = TimerQueue::kNone;
  deadline_armed_for_ = TimePoint::max();
  if (tcp_ != nullptr) {
    TcpHolder* holder = std::exchange(tcp_, nullptr);
    holder->owner = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&holder->tcp), [](uv_handle_t* handle) {
      auto* closing = static_cast<TcpHolder*>(handle->data);
      LoopContext* loop = closing->loop;
      delete closing;
      loop->handle_closed();
    });
  }
  if (reader_ != nullptr) {
    redisReaderFree(reader_);
    reader_ = nullptr;
  }
  outbuf_.clear();
  pending_count_ = 0;
  write_in_flight_ = false;
  handshake_pending_ = 0;
  loop_.turn().forget(this);
  flush_wanted_ = false;
  Fifo<Slot> failed = std::exchange(slots_, {});
  if (state_ != State::closed) {
    state_ = State::backoff;
    schedule_reconnect();
  }
  const std::string detail = last_error_;
  fail_slots(failed, detail);
}

void NodeConnection::fail_slots(Fifo<Slot>& slots, std::string_view why) {
  for (Slot& slot : slots) {
    if (slot.cleanup && slot.received == 0) {
      // Reset before the node answered: it may not have run it.
      defer_cleanup(DeferredCleanup{slot.script, std::move(slot.tail), slot.layout, slot.key_count,
                                    slot.argc, slot.expires_at});
      continue;
    }
    if (slot.handshake || slot.answered || !slot.sink) continue;
    stats_.unreachable.fetch_add(1, std::memory_order_relaxed);
    NodeResponse response;
    response.kind = NodeResponse::Kind::unreachable;
    response.detail = why;
    response.may_have_run = slot.written;
    slot.sink->on_response(index_, slot.tag, response);
  }
}

void NodeConnection::fail_later(std::shared_ptr<ResponseSink> sink, std::uint32_t tag,
                                std::string why) {
  stats_.unreachable.fetch_add(1, std::memory_order_relaxed);
  loop_.turn().post([sink = std::move(sink), tag, why = std::move(why), index = index_] {
    NodeResponse response;
    response.kind = NodeResponse::Kind::unreachable;
    response.detail = why;
    response.may_have_run = false;
    sink->on_response(index, tag, response);
  });
}

void NodeConnection::schedule_reconnect() {
  loop_.timers().cancel(reconnect_timer_);
  reconnect_timer_ = loop_.timers().schedule_after(backoff_, [this] {
    reconnect_timer_ = TimerQueue::kNone;
    start();
  });
  backoff_ = std::min(backoff_ * 2, reconnect_max_);
}

Persistence NodeConnection::persistence() const noexcept {
  if (appendonly_.empty()) return Persistence::unknown;
  if (appendonly_ != "yes") return Persistence::none;
  if (appendfsync_ == "always") return Persistence::aof_always;
  if (appendfsync_ == "everysec") return Persistence::aof_everysec;
  if (appendfsync_ == "no") return Persistence::aof_no;
  return Persistence::unknown;
}

NodeHealth NodeConnection::health() const {
  NodeHealth health;
  health.name = node_.name;
  health.connected = state_ == State::ready;
  health.persistence = persistence();
  health.last_error = last_error_;
  return health;
}

void NodeConnection::close() {
  if (state_ == State::closed) return;
  if (state_ == State::ready || state_ == State::handshaking) {
    emit_pending();
    if (!write_in_flight_ && !outbuf_.empty()) {
      // Releases issued just before closing deserve one chance to leave.
      uv_buf_t buf = uv_buf_init(outbuf_.data(), static_cast<unsigned>(outbuf_.size()));
      (void)uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_->tcp), &buf, 1);
    }
  }
  state_ = State::closed;
  loop_.timers().cancel(reconnect_timer_);
  reconnect_timer_ = TimerQueue::kNone;
  reset("client closed");
}

}  // namespace redlock::detail
