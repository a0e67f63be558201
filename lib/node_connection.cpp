#include "node_connection.hpp"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstring>
#include <deque>
#include <utility>

#include "client_core.hpp"
#include "redlock/clock.hpp"
#include "reply_pool.hpp"
#include "resp_writer.hpp"

namespace redlock::detail {

namespace {

struct ReplyDeleter {
  void operator()(redisReply* reply) const noexcept { free_reply(reply); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

constexpr std::size_t kReadBufferSize = 16 * 1024;

std::string number_text(long long value) {
  std::array<char, 24> digits{};
  auto [end, ec] = std::to_chars(digits.data(), digits.data() + digits.size(), value);
  (void)ec;
  return std::string(digits.data(), end);
}

// "numkeys key... arg..." as RESP bulk strings: what follows the script's
// name in EVALSHA and EVAL alike.
template <typename Args>
std::string encode_tail(std::initializer_list<std::string_view> keys, const Args& args,
                        TailLayout& layout) {
  // Sized once: growing it argument by argument was most of a request's
  // allocations.
  std::size_t size = 16;
  for (std::string_view key : keys) size += key.size() + 16;
  for (std::string_view arg : args) size += arg.size() + 16;
  std::string tail;
  tail.reserve(size);
  append_bulk(tail, number_text(static_cast<long long>(keys.size())));
  layout.keys_offset = static_cast<std::uint32_t>(tail.size());
  layout.second_key_offset = layout.keys_offset;
  for (std::string_view key : keys) {
    append_bulk(tail, key);
    if (layout.second_key_offset == layout.keys_offset) {
      layout.second_key_offset = static_cast<std::uint32_t>(tail.size());
    }
  }
  layout.args_offset = static_cast<std::uint32_t>(tail.size());
  for (std::string_view arg : args) append_bulk(tail, arg);
  return tail;
}

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

// One request in flight. Kept small (every request of every renewal passes
// through the queue): what only the handshake needs is in HandshakeStep.
struct NodeConnection::Slot {
  std::shared_ptr<ResponseSink> sink;
  const Script* script = nullptr;
  // RESP of "numkeys key... arg..." — identical after EVALSHA sha and after
  // EVAL body, so a NOSCRIPT fallback re-encodes only the head. Either owned
  // here or, for a prepared request, owned by the sink.
  const PreparedRequest* prepared = nullptr;
  std::string tail;
  std::size_t argc = 0;
  TimePoint sent_at{};
  TimePoint deadline{};
  std::array<ReplyPtr, 2> replies{};
  std::uint32_t tag = 0;
  // For a request that may go out batched (send_encoded, send_prepared):
  // the tail's layout and key count.
  TailLayout layout;
  std::uint16_t key_count = 0;
  // Set on the first request of a batch: how many requests its one reply
  // answers (this and the batch_size - 1 after it).
  std::uint16_t batch_size = 0;
  std::uint8_t expected = 1;
  std::uint8_t received = 0;
  std::uint8_t step = 0;  // handshake: index into handshake_steps_
  bool handshake = false;
  bool with_wait = false;
  bool evaled = false;
  bool answered = false;      // the sink has been told `timeout`
  bool before_ready = false;  // queued while the session was being set up
};

std::string_view NodeConnection::tail_of(const Slot& slot) noexcept {
  return slot.prepared != nullptr ? slot.prepared->tail() : std::string_view(slot.tail);
}

struct NodeConnection::TcpHolder {
  uv_tcp_t tcp{};
  NodeConnection* owner = nullptr;  // null once the connection let go of it
  ClientCore* core = nullptr;
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

NodeConnection::NodeConnection(ClientCore& core, std::size_t index, const NodeConfig& node,
                               const LockConfig& lock)
    : core_(core),
      index_(index),
      node_(node),
      stats_(core.metrics().node(node.name)),
      clock_is_steady_(&core.clock() == &steady_clock_source()),
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
  core_.handle_opened();
  const int rc = uv_getaddrinfo(
      core_.loop(), &request->req,
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
        ClientCore& core = self->core_;
        delete resolve;
        core.handle_closed();
      },
      node_.host.c_str(), port.c_str(), &hints);
  if (rc < 0) {
    delete request;
    core_.handle_closed();
    reset(uv_error_text("cannot resolve " + node_.host, rc));
  }
}

void NodeConnection::connect_to(const sockaddr* address) {
  state_ = State::connecting;
  reader_ = redisReaderCreateWithFunctions(pooled_reply_functions());
  tcp_ = new TcpHolder{};
  tcp_->owner = this;
  tcp_->core = &core_;
  tcp_->generation = generation_;
  uv_tcp_init(core_.loop(), &tcp_->tcp);
  tcp_->tcp.data = tcp_;
  core_.handle_opened();
  uv_tcp_nodelay(&tcp_->tcp, 1);

  connect_timer_ = core_.timers().schedule_after(connect_timeout_, [this] {
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
  // Persistence, where the node allows CONFIG GET: reported, and refused in
  // strict mode, since a node that loses acknowledged writes breaks fencing.
  append_command(head, {"CONFIG", "GET", "appendonly"});
  add("CONFIG GET appendonly", true, 1);
  append_command(head, {"CONFIG", "GET", "appendfsync"});
  add("CONFIG GET appendfsync", true, 2);
  appendonly_.clear();
  appendfsync_.clear();
  for (const Script* script : node_scripts()) {
    append_command(head, {"SCRIPT", "LOAD", script->body});
    add(std::string("SCRIPT LOAD (") + std::string(script->name) + ")");
  }
  handshake_pending_ = handshake.size();
  outbuf_.insert(0, head);
  for (auto it = handshake.rbegin(); it != handshake.rend(); ++it) {
    slots_.push_front(std::move(*it));
  }
}

namespace {
// "*argc EVALSHA sha" or "*argc EVAL body": the head of a script request.
void append_script_head(std::string& out, const Script& script, std::size_t argc, bool use_eval) {
  append_array_header(out, argc);
  if (use_eval) {
    append_bulk(out, "EVAL");
    append_bulk(out, script.body);
  } else {
    append_bulk(out, "EVALSHA");
    append_bulk(out, script.sha1);
  }
}
}  // namespace

PreparedRequest::PreparedRequest(const Script& script, std::initializer_list<std::string_view> keys,
                                 std::initializer_list<std::string_view> args)
    : script_(&script), argc_(3 + keys.size() + args.size()), key_count_(keys.size()) {
  const std::string tail = encode_tail(keys, args, layout_);
  append_script_head(command_, script, argc_, false);
  tail_offset_ = command_.size();
  command_ += tail;
}

void NodeConnection::send(const Script& script, std::initializer_list<std::string_view> keys,
                          std::initializer_list<std::string_view> args, bool require_replicas,
                          std::shared_ptr<ResponseSink> sink, std::uint32_t tag) {
  TailLayout layout;
  std::string tail = encode_tail(keys, args, layout);
  send_encoded(script, std::move(tail), layout, keys.size(), 3 + keys.size() + args.size(),
               require_replicas, std::move(sink), tag);
}

void NodeConnection::send_argv(const Script& script, std::initializer_list<std::string_view> keys,
                               const std::vector<std::string>& args,
                               std::shared_ptr<ResponseSink> sink, std::uint32_t tag) {
  TailLayout layout;
  std::string tail = encode_tail(keys, args, layout);
  send_encoded(script, std::move(tail), layout, keys.size(), 3 + keys.size() + args.size(), false,
               std::move(sink), tag);
}

void NodeConnection::send_prepared(const PreparedRequest& request, TimePoint sent_at,
                                   std::shared_ptr<ResponseSink> sink, std::uint32_t tag) {
  if (state_ == State::backoff || state_ == State::closed || state_ == State::idle) {
    fail_later(std::move(sink), tag,
               last_error_.empty() ? std::string("not connected") : last_error_);
    return;
  }
  // Built in its place in the queue: a slot is large, and moving it per
  // request was a measurable part of a renewal. An extend waits for the
  // turn's flush like the other batchable requests: the renewals of many
  // guards due in one turn then leave as one batched call per node.
  const bool batchable = batch_script(request.script()) != nullptr;
  if (!batchable) emit_pending();
  Slot& slot = slots_.emplace_back();
  slot.sink = std::move(sink);
  slot.tag = tag;
  slot.script = &request.script();
  slot.argc = request.argc();
  slot.prepared = &request;
  slot.layout = request.layout();
  slot.key_count = static_cast<std::uint16_t>(request.key_count());
  queue_script(slot, sent_at, batchable);
}

void NodeConnection::send_encoded(const Script& script, std::string tail, TailLayout layout,
                                  std::size_t key_count, std::size_t argc, bool require_replicas,
                                  std::shared_ptr<ResponseSink> sink, std::uint32_t tag) {
  if (state_ == State::backoff || state_ == State::closed || state_ == State::idle) {
    fail_later(std::move(sink), tag,
               last_error_.empty() ? std::string("not connected") : last_error_);
    return;
  }
  const bool with_wait = require_replicas && node_.min_replicas > 0;
  const bool batchable = !with_wait && batch_script(script) != nullptr;
  // Encoded in queue order: what is pending goes out before this one.
  if (!batchable) emit_pending();
  Slot& slot = slots_.emplace_back();
  slot.sink = std::move(sink);
  slot.tag = tag;
  slot.script = &script;
  slot.argc = argc;
  slot.tail = std::move(tail);
  slot.layout = layout;
  slot.key_count = static_cast<std::uint16_t>(key_count);
  slot.with_wait = with_wait;
  slot.expected = slot.with_wait ? 2 : 1;
  queue_script(slot, core_.clock().now(), batchable);
}

void NodeConnection::queue_script(Slot& slot, TimePoint sent_at, bool defer) {
  slot.sent_at = sent_at;
  // A request queued before the session is ready also waits for the connect
  // and handshake, which the connect timeout bounds; counting that against
  // the request timeout would fail every first request of a short-lived
  // process on a slower network. Validity still counts from t0.
  slot.before_ready = state_ != State::ready;
  const Microseconds setup = slot.before_ready ? Microseconds(connect_timeout_) : Microseconds(0);
  const TimePoint now = clock_is_steady_ ? sent_at : SteadyClock::now();
  slot.deadline = now + setup + request_timeout_ +
                  (slot.with_wait ? Microseconds(wait_timeout_) : Microseconds(0));
  if (defer) {
    ++pending_count_;
  } else {
    append_request(slot, false);
  }
  want_flush();
  if (slot.deadline < deadline_armed_for_) arm_deadline();
}

void NodeConnection::emit_pending() {
  if (pending_count_ == 0) return;
  std::size_t i = slots_.size() - pending_count_;
  pending_count_ = 0;
  while (i < slots_.size()) {
    std::size_t run = 1;
    while (i + run < slots_.size() && run < kMaxBatch && batches_with(slots_[i], slots_[i + run])) {
      ++run;
    }
    if (run == 1) {
      append_request(slots_[i], false);
    } else {
      append_batch(i, run, false);
      stats_.batched.fetch_add(run, std::memory_order_relaxed);
    }
    i += run;
  }
}

bool NodeConnection::batches_with(const Slot& first, const Slot& next) {
  // The same script and number of arguments, and the same keys after the
  // first (batch_script: they are sent once for the whole batch).
  if (next.script != first.script || next.argc != first.argc || next.key_count != first.key_count) {
    return false;
  }
  const std::string_view mine = tail_of(first).substr(
      first.layout.second_key_offset, first.layout.args_offset - first.layout.second_key_offset);
  const std::string_view theirs = tail_of(next).substr(
      next.layout.second_key_offset, next.layout.args_offset - next.layout.second_key_offset);
  return mine == theirs;
}

void NodeConnection::append_batch(std::size_t first, std::size_t count, bool use_eval) {
  // EVALSHA sha numkeys, the shared keys once (from the first request: the
  // run holds only requests with the same ones, batches_with), each
  // request's first key, then every request's arguments.
  const Slot& head = slots_[first];
  const std::size_t shared = head.key_count - 1U;
  const std::size_t args = head.argc - 3 - head.key_count;
  append_script_head(outbuf_, *batch_script(*head.script), 3 + shared + count * (1 + args),
                     use_eval);
  append_bulk(outbuf_, number_text(static_cast<long long>(shared + count)));
  outbuf_.append(tail_of(head).substr(head.layout.second_key_offset,
                                      head.layout.args_offset - head.layout.second_key_offset));
  for (std::size_t i = first; i < first + count; ++i) {
    const Slot& slot = slots_[i];
    outbuf_.append(tail_of(slot).substr(slot.layout.keys_offset,
                                        slot.layout.second_key_offset - slot.layout.keys_offset));
  }
  for (std::size_t i = first; i < first + count; ++i) {
    const Slot& slot = slots_[i];
    outbuf_.append(tail_of(slot).substr(slot.layout.args_offset));
  }
  slots_[first].batch_size = static_cast<std::uint16_t>(count);
}

void NodeConnection::send_command(std::initializer_list<std::string_view> argv) {
  if (state_ != State::handshaking && state_ != State::ready && state_ != State::connecting &&
      state_ != State::resolving) {
    return;  // the ready handler re-sends what matters after a reconnect
  }
  emit_pending();
  append_command(outbuf_, argv);
  Slot slot;
  slot.deadline = TimePoint::max();
  slots_.push_back(std::move(slot));
  want_flush();
}

void NodeConnection::append_request(const Slot& slot, bool use_eval) {
  if (slot.prepared != nullptr && !use_eval) {
    outbuf_ += slot.prepared->evalsha();
  } else {
    append_script_head(outbuf_, *slot.script, slot.argc, use_eval);
    outbuf_ += tail_of(slot);
  }
  if (slot.with_wait) {
    append_command(outbuf_,
                   {"WAIT", number_text(node_.min_replicas), number_text(wait_timeout_.count())});
  }
}

void NodeConnection::want_flush() {
  // Once per loop turn, not once per request: the loop turn's list of
  // connections to flush is searched on every call.
  if (flush_wanted_ || (state_ != State::handshaking && state_ != State::ready)) return;
  flush_wanted_ = true;
  core_.turn().want_flush(this);
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
  const TimePoint received_at = core_.clock().now();
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
  if (front.batch_size > 1) {
    complete_batch(received_at);
    return;
  }
  const std::array<ReplyPtr, 2> replies = std::move(front.replies);
  std::array<const redisReply*, 2> views{replies[0].get(), replies[1].get()};
  deliver_front(views.data(), front.expected, received_at);
}

void NodeConnection::resend_with_eval(std::size_t count) {
  // The node lost its script cache (restart, SCRIPT FLUSH): the request, or
  // the batch, goes again with its script's body; EVAL also caches the
  // script again for the next EVALSHA.
  std::vector<Slot> again;
  again.reserve(count);
  for (std::size_t i = 0; i < count; ++i) again.push_back(slots_.take_front());
  emit_pending();
  const std::size_t first = slots_.size();
  for (Slot& slot : again) {
    slot.evaled = true;
    slot.received = 0;
    slot.replies = {};
    slots_.push_back(std::move(slot));
  }
  if (count == 1) {
    append_request(slots_[first], true);
  } else {
    append_batch(first, count, true);
  }
  want_flush();
}

void NodeConnection::complete_batch(TimePoint received_at) {
  Slot& front = slots_.front();
  const std::size_t count = front.batch_size;
  const ReplyPtr reply = std::move(front.replies[0]);
  const bool per_request = reply->type == REDIS_REPLY_ARRAY && reply->elements == count;
  if (!per_request && reply->type != REDIS_REPLY_ERROR) {
    reset("batched reply out of step: " + number_text(static_cast<long long>(count)) + " requests");
    return;
  }
  // An error for the whole call (BUSY, OOM, a denied command) is every
  // request's answer.
  const std::uint64_t generation = generation_;
  for (std::size_t i = 0; i < count && generation == generation_; ++i) {
    const redisReply* mine = per_request ? reply->element[i] : reply.get();
    deliver_front(&mine, 1, received_at);
  }
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
    core_.timers().cancel(connect_timer_);
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
    if (ready_handler_) ready_handler_();
  }
}

void NodeConnection::arm_deadline() {
  TimePoint earliest = TimePoint::max();
  for (const Slot& slot : slots_) {
    if (!slot.handshake && !slot.answered) earliest = std::min(earliest, slot.deadline);
  }
  if (earliest == deadline_armed_for_) return;
  core_.timers().cancel(deadline_timer_);
  deadline_timer_ = TimerQueue::kNone;
  deadline_armed_for_ = earliest;
  if (earliest == TimePoint::max()) return;
  const auto wait = std::chrono::ceil<Microseconds>(earliest - SteadyClock::now());
  deadline_timer_ = core_.timers().schedule_after(std::max(wait, Microseconds(0)), [this] {
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
    response.latency = std::chrono::ceil<Microseconds>(core_.clock().now() - slot.sent_at);
    sink->on_response(index_, slot.tag, response);
    if (generation != generation_) return;
  }
  arm_deadline();
}

void NodeConnection::reset(std::string why) {
  ++generation_;
  last_error_ = std::move(why);
  core_.timers().cancel(connect_timer_);
  connect_timer_ = TimerQueue::kNone;
  core_.timers().cancel(deadline_timer_);
  deadline_timer_ = TimerQueue::kNone;
  deadline_armed_for_ = TimePoint::max();
  if (tcp_ != nullptr) {
    TcpHolder* holder = std::exchange(tcp_, nullptr);
    holder->owner = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(&holder->tcp), [](uv_handle_t* handle) {
      auto* closing = static_cast<TcpHolder*>(handle->data);
      ClientCore* core = closing->core;
      delete closing;
      core->handle_closed();
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
  core_.turn().forget(this);
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
    if (slot.handshake || slot.answered || !slot.sink) continue;
    stats_.unreachable.fetch_add(1, std::memory_order_relaxed);
    NodeResponse response;
    response.kind = NodeResponse::Kind::unreachable;
    response.detail = why;
    slot.sink->on_response(index_, slot.tag, response);
  }
}

void NodeConnection::fail_later(std::shared_ptr<ResponseSink> sink, std::uint32_t tag,
                                std::string why) {
  stats_.unreachable.fetch_add(1, std::memory_order_relaxed);
  core_.turn().post([sink = std::move(sink), tag, why = std::move(why), index = index_] {
    NodeResponse response;
    response.kind = NodeResponse::Kind::unreachable;
    response.detail = why;
    sink->on_response(index, tag, response);
  });
}

void NodeConnection::schedule_reconnect() {
  core_.timers().cancel(reconnect_timer_);
  reconnect_timer_ = core_.timers().schedule_after(backoff_, [this] {
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
  core_.timers().cancel(reconnect_timer_);
  reconnect_timer_ = TimerQueue::kNone;
  reset("client closed");
}

}  // namespace redlock::detail
