// A node's session: resolving, connecting, the handshake and what it learns
// of the server, resets and reconnects, health, closing. Requests going out
// are in node_requests.cpp, bytes and replies in node_io.cpp, unanswered
// requests in node_deadlines.cpp.
#include "transport/node_connection.hpp"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <deque>
#include <span>
#include <utility>

#include "redlock/clock.hpp"
#include "text/escape.hpp"
#include "transport/loop_context.hpp"
#include "transport/node_connection_inside.hpp"
#include "transport/node_slot.hpp"
#include "transport/reply_pool.hpp"
#include "transport/reply_reader.hpp"
#include "transport/resp_writer.hpp"
#include "transport/tls_session.hpp"

namespace redlock::detail {

struct NodeConnection::HandshakeStep {
  std::string what;  // the command, for error messages
  // An error is tolerated (CONFIG GET may be denied).
  bool optional = false;
};

namespace {

struct ConnectRequest {
  uv_connect_t req{};
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
      drift_factor_(lock.drift_factor),
      drift_ms_(lock.drift_ms),
      backoff_(lock.reconnect_min) {}

NodeConnection::~NodeConnection() = default;

void NodeConnection::start() {
  if (state_ == State::closed) return;
  ++generation_;
  last_error_.clear();
  addresses_.clear();
  next_address_ = 0;
  if (!node_.unix_path.empty()) {
    connect_next();
    return;
  }
  sockaddr_storage address{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (uv_ip4_addr(node_.host.c_str(), node_.port, v4) == 0 ||
      uv_ip6_addr(node_.host.c_str(), node_.port, v6) == 0) {
    addresses_.push_back(address);
    connect_next();
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
            // Every address, in the resolver's order: a name whose first
            // address is ::1 may serve on 127.0.0.1 only.
            for (const addrinfo* entry = result; entry != nullptr; entry = entry->ai_next) {
              if (entry->ai_addr == nullptr || entry->ai_addrlen > sizeof(sockaddr_storage)) {
                continue;
              }
              sockaddr_storage address{};
              std::memcpy(&address, entry->ai_addr, entry->ai_addrlen);
              self->addresses_.push_back(address);
            }
            if (self->addresses_.empty()) {
              self->reset("cannot resolve " + self->node_.host + ": no address");
            } else {
              self->connect_next();
            }
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

void NodeConnection::connect_next() {
  const bool first = next_address_ == 0;
  const bool unix_socket = !node_.unix_path.empty();
  const sockaddr_storage* address = unix_socket ? nullptr : &addresses_[next_address_];
  ++next_address_;
  state_ = State::connecting;
  if (first) {
    // One deadline for every address tried, and for the handshake.
    connect_started_ = SteadyClock::now();
    reader_ = std::make_unique<ReplyReader>();
    connect_timer_ = loop_.timers().schedule_after(connect_timeout_, [this] {
      connect_timer_ = TimerQueue::kNone;
      // The handshake's answers may be waiting unread (see on_deadline).
      const std::uint64_t generation = generation_;
      read_arrived();
      if (generation != generation_ || state_ == State::ready) return;
      const char* during = state_ != State::handshaking ? ""
                           : tls_ && !tls_->established()
                               ? " (in the TLS handshake: no answer to it; is the node serving "
                                 "plain TCP here, not TLS?)"
                               : " (in the session set-up)";
      reset("connect timeout after " + number_text(connect_timeout_.count()) + " ms" + during);
    });
  }
  tcp_ = new TcpHolder{};
  tcp_->owner = this;
  tcp_->loop = &loop_;
  tcp_->generation = generation_;
  tcp_->is_pipe = unix_socket;
  const auto on_connect = [](uv_connect_t* req, int status) {
    auto* holder = static_cast<TcpHolder*>(req->handle->data);
    delete reinterpret_cast<ConnectRequest*>(req);
    if (holder->owner != nullptr && holder->generation == holder->owner->generation_) {
      holder->owner->on_connected(status);
    }
  };
  auto* request = new ConnectRequest{};
  if (unix_socket) {
    uv_pipe_init(loop_.loop(), &tcp_->pipe, 0);
    tcp_->pipe.data = tcp_;
    loop_.handle_opened();
    // Reports a failure through the callback too.
    uv_pipe_connect(&request->req, &tcp_->pipe, node_.unix_path.c_str(), on_connect);
    return;
  }
  uv_tcp_init(loop_.loop(), &tcp_->tcp);
  tcp_->tcp.data = tcp_;
  loop_.handle_opened();
  uv_tcp_nodelay(&tcp_->tcp, 1);

  const int rc = uv_tcp_connect(&request->req, &tcp_->tcp,
                                reinterpret_cast<const sockaddr*>(address), on_connect);
  if (rc < 0) {
    delete request;
    on_connected(rc);
  }
}

void NodeConnection::on_connected(int status) {
  if (status < 0) {
    if (next_address_ < addresses_.size()) {
      close_socket();
      connect_next();
      return;
    }
    reset(uv_error_text("connect", status) +
          (addresses_.size() > 1
               ? " (" + number_text(static_cast<long long>(addresses_.size())) + " addresses tried)"
               : std::string()));
    return;
  }
  state_ = State::handshaking;
  // An idle connection (a subscriber's, a quiet client's) to a host that
  // vanished is noticed by the kernel's probes; one in use by stall_limit().
  if (!tcp_->is_pipe) (void)uv_tcp_keepalive(&tcp_->tcp, 1, kKeepAliveSeconds);
  plain_seen_ = false;
  tls_.reset();
  tls_out_.clear();
  if (node_.tls.enabled) {
    // The context is shared, and built again once a certificate file it
    // was read from changes: a rotation takes effect at the next connect.
    std::string error;
    tls_ = TlsSession::open(node_, tls_out_, error);
    if (!tls_) {
      reset(error);
      return;
    }
  }
  const int rc = uv_read_start(
      tcp_->stream(),
      [](uv_handle_t* handle, std::size_t, uv_buf_t* buf) {
        const std::span<char> shared = static_cast<TcpHolder*>(handle->data)->loop->read_buffer();
        buf->base = shared.data();
        buf->len = shared.size();
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
  auto add = [&](std::string what, bool optional = false, ServerFact fact = ServerFact::none) {
    Slot slot;
    slot.handshake = true;
    slot.step = static_cast<std::uint8_t>(handshake_steps_.size());
    slot.fact = fact;
    handshake_steps_.push_back(HandshakeStep{std::move(what), optional});
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
  // The layer above's first word, before anything else of the session.
  if (setup_.opening) {
    const ScriptCall& opening = *setup_.opening;
    std::vector<std::string_view> words{"EVAL", opening.script->body, std::string_view()};
    const std::string key_count = number_text(static_cast<long long>(opening.keys.size()));
    words[2] = key_count;
    words.insert(words.end(), opening.keys.begin(), opening.keys.end());
    words.insert(words.end(), opening.args.begin(), opening.args.end());
    if (setup_.opening_slot_tag && !opening.args.empty()) {
      if (const std::string_view tag = setup_.opening_slot_tag(); !tag.empty()) words.back() = tag;
    }
    append_command(head, words);
    // An error ends the session, as a failed AUTH does: the layer above
    // refuses this server for now (its script's error says why).
    add(std::string(opening.script->name));
  }
  // Persistence, where the node allows CONFIG GET.
  facts_.forget();
  if (setup_.read_persistence) {
    for (const ServerQuestion& question : ServerFacts::handshake_questions()) {
      const std::span<const std::string_view> words(question.words.data(), question.word_count);
      append_command(head, words);
      std::string what;
      for (std::string_view word : words) what += (what.empty() ? "" : " ") + std::string(word);
      add(std::move(what), true, question.fact);
    }
  }
  loaded_.reset();
  for (const Script* requested : setup_.scripts) {
    const Script& script = sent_as(*requested);
    loaded_.set(script.number);
    append_command(head, {"SCRIPT", "LOAD", script.body});
    add(std::string("SCRIPT LOAD (") + std::string(script.name) + ")");
  }
  // A session is ready once the node has answered it: with nothing else to
  // ask, a PING is the question.
  if (handshake.empty()) {
    append_command(head, {"PING"});
    add("PING");
  }
  handshake_pending_ = handshake.size();
  // Appended to the handshake rather than inserted before what is queued:
  // one copy of the scripts' text in memory at a time, not two.
  head += outbuf_;
  outbuf_.swap(head);
  for (auto it = handshake.rbegin(); it != handshake.rend(); ++it) {
    slots_.push_front(std::move(*it));
  }
}

void NodeConnection::on_handshake_reply(Slot& slot) {
  const redisReply* reply = slot.replies[0].get();
  const HandshakeStep& step = handshake_steps_[slot.step];
  if (reply->type == REDIS_REPLY_ERROR && !step.optional) {
    reset(step.what + " failed: " + std::string(reply->str, reply->len));
    return;
  }
  if (--handshake_pending_ == 0 && state_ == State::handshaking) {
    state_ = State::ready;
    // The handshake's steps are not kept for the session's life (a swap:
    // clear() keeps the capacity).
    std::vector<HandshakeStep>().swap(handshake_steps_);
    loop_.timers().cancel(connect_timer_);
    connect_timer_ = TimerQueue::kNone;
    backoff_ = reconnect_min_;
    last_error_.clear();
    // Requests queued during set-up get their own timeout from now on.
    const TimePoint now = SteadyClock::now();
    for (Slot& queued : slots_) {
      if (!queued.before_ready || queued.answered) continue;
      queued.before_ready = false;
      queued.deadline = now + timeout_of(queued) +
                        (queued.with_wait ? Microseconds(wait_timeout_) : Microseconds(0));
    }
    deadline_armed_for_ = TimePoint::max();
    arm_deadline();
    // What waited for the handshake leaves now, cleanups of values that may
    // still live on the node first.
    resend_deferred_cleanups();
    if (pending_count_ > 0) want_flush();
    schedule_persistence_recheck();
    // (The run_id is known now.)
    if (servers_handler_) servers_handler_();
    if (ready_handler_) ready_handler_();
  }
}

void NodeConnection::schedule_persistence_recheck() {
  if (!setup_.read_persistence || setup_.persistence_recheck <= Milliseconds(0)) return;
  loop_.timers().cancel(recheck_timer_);
  recheck_timer_ = loop_.timers().schedule_after(setup_.persistence_recheck, [this] {
    recheck_timer_ = TimerQueue::kNone;
    if (state_ != State::ready) return;  // the next handshake reads them anyway
    // Behind what is pending, like any command; the replies carry no
    // deadline (a node that stops answering is noticed by its requests).
    emit_pending();
    for (const ServerQuestion& question : ServerFacts::recheck_questions()) {
      append_command(outbuf_,
                     std::span<const std::string_view>(question.words.data(), question.word_count));
      Slot& slot = slots_.emplace_back();
      slot.deadline = TimePoint::max();
      slot.fact = question.fact;
    }
    want_flush();
    schedule_persistence_recheck();
  });
}

void NodeConnection::reset(std::string why) {
  ++generation_;
  // A new session may reach a restarted node (session() changes with
  // generation_).
  refused_transaction_ = false;
  // A new session has no subscription.
  shard_subscribed_ = false;
  unsubscribing_.clear();
  // `why` may quote the node's error reply or the reader's error: escaped,
  // as it ends up in NodeHealth::last_error and in request details.
  last_error_ = escape_text(why);
  loop_.timers().cancel(connect_timer_);
  connect_timer_ = TimerQueue::kNone;
  loop_.timers().cancel(deadline_timer_);
  deadline_timer_ = TimerQueue::kNone;
  deadline_armed_for_ = TimePoint::max();
  loop_.timers().cancel(recheck_timer_);
  recheck_timer_ = TimerQueue::kNone;
  close_socket();
  reader_.reset();
  tls_.reset();
  tls_out_.clear();
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

void NodeConnection::close_socket() {
  if (tcp_ == nullptr) return;
  TcpHolder* holder = std::exchange(tcp_, nullptr);
  holder->owner = nullptr;
  uv_close(holder->handle(), [](uv_handle_t* handle) {
    auto* closing = static_cast<TcpHolder*>(handle->data);
    LoopContext* loop = closing->loop;
    delete closing;
    loop->handle_closed();
  });
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
  // (A plain command sent for its effect alone, ASKING, has no sink.)
  if (!sink) return;
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

Persistence NodeConnection::persistence() const noexcept { return facts_.persistence(); }

NodeHealth NodeConnection::health() const {
  NodeHealth health;
  health.name = node_.name;
  health.connected = state_ == State::ready;
  health.persistence = persistence();
  health.last_error = last_error_;
  health.run_id = state_ == State::ready ? facts_.run_id() : std::string();
  health.warnings = transport_warnings(node_);
  return health;
}

void NodeConnection::renew_session(std::string why) {
  if (state_ == State::idle || state_ == State::backoff || state_ == State::closed) return;
  reset(std::move(why));
  // The server is up (it was just named a master): a new session now, with
  // no backoff, so the requests sent meanwhile wait for it instead of
  // failing.
  loop_.timers().cancel(reconnect_timer_);
  reconnect_timer_ = TimerQueue::kNone;
  backoff_ = reconnect_min_;
  start();
}

void NodeConnection::close() {
  if (state_ == State::closed) return;
  if (state_ == State::ready || state_ == State::handshaking) {
    emit_pending();
    (void)encrypt_output();
    std::string& wire = wire_buffer();
    if (!write_in_flight_ && !wire.empty()) {
      // Releases issued just before closing deserve one chance to leave.
      uv_buf_t buf = uv_buf_init(wire.data(), static_cast<unsigned>(wire.size()));
      (void)uv_try_write(tcp_->stream(), &buf, 1);
    }
  }
  state_ = State::closed;
  loop_.timers().cancel(reconnect_timer_);
  reconnect_timer_ = TimerQueue::kNone;
  reset("client closed");
}

}  // namespace redlock::detail