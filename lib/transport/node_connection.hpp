// The transport to one Redis node, on the client's libuv loop.
//
// It owns its socket (TCP, or a Unix domain socket's pipe), optionally with
// TLS between the socket and the reader (tls_session.hpp), and uses hiredis only as the reply
// parser (redisReader); commands are encoded by resp_writer into one buffer per node, written once
// per loop turn (LoopTurn). Redis answers a connection's commands in order, so replies are matched
// to requests by position in a FIFO of slots; a request that timed out keeps its slot, and its
// reply, when it comes, is handed to the sink marked `late`.
//
// Requests are never answered from inside send(): a request that cannot be
// sent (node unreachable) is failed from a posted task.
#pragma once

#include <uv.h>

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "redlock/config.hpp"
#include "redlock/metrics.hpp"
#include "redlock/outcome.hpp"
#include "redlock/types.hpp"
#include "transport/loop_turn.hpp"
#include "transport/node_link.hpp"
#include "transport/script.hpp"
#include "transport/server_facts.hpp"
#include "transport/timer_queue.hpp"

struct redisReply;

namespace redlock::detail {

class LoopContext;
class ReplyReader;
class TlsSession;

// A first-in first-out queue on one vector that keeps its capacity: a
// steady stream of requests allocates nothing, where std::deque allocates and
// frees a block every few elements. Taken elements stay behind, moved-from,
// until the queue empties or they make up half of it; then they are dropped
// in one go. Indices and iteration cover the queued elements only.
template <typename T>
class Fifo {
 public:
  [[nodiscard]] bool empty() const noexcept { return head_ == items_.size(); }
  [[nodiscard]] std::size_t size() const noexcept { return items_.size() - head_; }
  [[nodiscard]] T& front() { return items_[head_]; }
  [[nodiscard]] T& operator[](std::size_t index) { return items_[head_ + index]; }
  [[nodiscard]] auto begin() noexcept {
    return items_.begin() + static_cast<std::ptrdiff_t>(head_);
  }
  [[nodiscard]] auto end() noexcept { return items_.end(); }
  [[nodiscard]] auto begin() const noexcept {
    return items_.begin() + static_cast<std::ptrdiff_t>(head_);
  }
  [[nodiscard]] auto end() const noexcept { return items_.end(); }

  void push_back(T item) { items_.push_back(std::move(item)); }
  // The new last element; valid until the queue next changes.
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    return items_.emplace_back(std::forward<Args>(args)...);
  }
  void push_front(T item) {
    if (head_ > 0) {
      items_[--head_] = std::move(item);
    } else {
      items_.insert(items_.begin(), std::move(item));
    }
  }
  // Removes the first element and returns it; the queue must not be empty.
  [[nodiscard]] T take_front() {
    T item = std::move(items_[head_]);
    drop_front();
    return item;
  }
  // Removes the first element where it is (for a caller that moved out what
  // it needed); the queue must not be empty.
  void drop_front() {
    ++head_;
    drop_taken();
  }

 private:
  // Below this many taken elements a queue that never empties keeps them.
  static constexpr std::size_t kCompactFloor = 64;
  void drop_taken() {
    if (head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ >= kCompactFloor && 2 * head_ >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  std::vector<T> items_;
  std::size_t head_ = 0;
};

class NodeConnection final : public NodeLink, public Flushable {
 public:
  // `stats` is where this connection counts its requests; it must outlive
  // the connection.
  NodeConnection(LoopContext& loop, NodeMetrics& stats, std::size_t index, const NodeConfig& node,
                 const LockConfig& lock, SessionSetup setup);
  NodeConnection(const NodeConnection&) = delete;
  NodeConnection& operator=(const NodeConnection&) = delete;
  ~NodeConnection();

  void start() override;

  void send(Request request) override;
  void send_command(std::initializer_list<std::string_view> argv) override;
  void set_push_handler(
      std::function<void(std::string_view channel, std::string_view payload)> handler) override {
    push_handler_ = std::move(handler);
  }
  void set_ready_handler(std::function<void()> handler) override {
    ready_handler_ = std::move(handler);
  }
  void set_servers_handler(std::function<void()> handler) override {
    servers_handler_ = std::move(handler);
  }
  // Loop thread: the server ended a shard channel's subscription (SSUBSCRIBE)
  // of its own accord, as a Redis Cluster server does when the channel's
  // slot moves to another shard; not called for a SUNSUBSCRIBE sent here.
  void set_unsubscribed_handler(std::function<void(std::string_view channel)> handler) {
    unsubscribed_handler_ = std::move(handler);
  }

  void flush() override;
  void close() override;
  // Ends the session, if one is open or opening (its requests fail as on
  // any reset), and opens a new one at once: for a server whose role
  // changed since the session's first word ran.
  void renew_session(std::string why);

  [[nodiscard]] std::size_t index() const noexcept override { return index_; }
  [[nodiscard]] const NodeConfig& config() const noexcept override { return node_; }
  [[nodiscard]] bool ready() const noexcept override { return state_ == State::ready; }
  [[nodiscard]] int min_replicas() const noexcept override { return node_.min_replicas; }
  [[nodiscard]] std::uint64_t session() const noexcept override { return generation_; }
  [[nodiscard]] bool refused_transaction() const noexcept override { return refused_transaction_; }
  [[nodiscard]] Persistence persistence() const noexcept override;
  [[nodiscard]] NodeHealth health() const override;

 private:
  enum class State { idle, resolving, connecting, handshaking, ready, backoff, closed };
  struct Slot;
  struct HandshakeStep;
  struct TcpHolder;

  // Connects to addresses_[next_address_] (and arms the connect deadline,
  // which covers every address and the handshake, on the first).
  void connect_next();
  // Closes the socket, if any, without touching the queue.
  void close_socket();
  void begin_resolve();
  void on_connected(int status);
  void queue_handshake();
  void on_read(ssize_t nread, const char* data);
  // Over TLS, encrypts what outbuf_ holds into tls_out_ once the handshake
  // is done; false when encryption failed (tls_->error()).
  bool encrypt_output();
  // Lets a drained output buffer's memory go: always while the session is
  // being set up (its text is the handshake's), else past
  // kKeptOutputCapacity.
  void release_drained(std::string& drained) const noexcept;
  // What goes on the socket next: tls_out_ over TLS, else outbuf_.
  [[nodiscard]] std::string& wire_buffer() noexcept { return tls_ ? tls_out_ : outbuf_; }
  // What the node said, decrypted when the session is TLS.
  void on_plaintext(const char* data, std::size_t size);
  // Reads, without waiting, what the node has sent and the loop has not
  // polled for yet (see on_deadline).
  void read_arrived();
  void on_reply(redisReply* reply, TimePoint received_at);
  void complete_front(TimePoint received_at);
  void on_handshake_reply(Slot& slot);
  // The reply to a question about the server (Slot::fact).
  // Reads the persistence settings again after setup_.persistence_recheck.
  void schedule_persistence_recheck();
  void on_deadline();
  void arm_deadline();
  // How long past its own timeout the oldest request may stay unanswered
  // before the connection is reset: the node has stalled (stopped, frozen,
  // its link dropping everything) and everything queued to it is waiting
  // in vain.
  [[nodiscard]] Microseconds stall_limit() const noexcept;
  // How long `slot` waits for its answer: the node timeout, or its
  // script's min_timeout when longer.
  [[nodiscard]] Microseconds timeout_of(const Slot& slot) const noexcept;
  // The oldest request the node has not answered, when it has timed out.
  [[nodiscard]] const Slot* oldest_timed_out() const noexcept;
  // When the connection is reset for a stalled node: the oldest timed-out
  // request's timeout plus stall_limit(); max when none has timed out.
  [[nodiscard]] TimePoint stall_deadline() const noexcept;
  // A node with kMaxQueuedWhileUnresponsive requests queued and either a
  // timed-out request unanswered or a session set-up overdue gets no more
  // until it answers: they fail at once as unreachable, so the queue and the
  // output buffer stay bounded.
  [[nodiscard]] bool unresponsive() const noexcept;
  [[nodiscard]] std::string unresponsive_text() const;
  void reset(std::string why);
  void fail_slots(Fifo<Slot>& slots, std::string_view why);
  void fail_later(std::shared_ptr<ResponseSink> sink, std::uint32_t tag, std::string why);
  // A request that cannot be queued (no session, or the node owes too many
  // answers) is failed from a posted task, its sink taken: true then.
  [[nodiscard]] bool failed_before_queueing(std::shared_ptr<ResponseSink>& sink, std::uint32_t tag);
  void schedule_reconnect();
  // Appends the request of `slot` to the output, and nothing else (a
  // script that is not batched).
  void append_request(const Slot& slot, bool use_eval);
  // Encodes slots_[index] alone: a batch of one for a lock script.
  void encode_lone(std::size_t index, bool use_eval);
  // A plain command with its reply to `sink` (Request::command).
  void send_plain_command(std::span<const std::string_view> words, TimePoint sent_at,
                          std::shared_ptr<ResponseSink> sink, std::uint32_t tag);
  void send_prepared_request(const PreparedRequest& request, TimePoint sent_at,
                             std::shared_ptr<ResponseSink> sink, std::uint32_t tag);
  void send_encoded(const Script& script, std::string tail, TailLayout layout,
                    std::size_t key_count, std::size_t argc, bool require_replicas,
                    TimePoint sent_at, std::shared_ptr<ResponseSink> sink, std::uint32_t tag);
  // Fills in the timing of a script request, already the last in the queue,
  // and encodes it, or with `defer` leaves it pending for the turn's flush;
  // `sent_at` is on the client's clock.
  void queue_script(Slot& slot, TimePoint sent_at, bool defer = false);
  // Encodes the pending requests (the last pending_count_ of the queue) in
  // queue order: a run of requests for the same batchable script as one
  // batched call, a lone one as itself.
  void emit_pending();
  // Encodes slots_[first .. first + count) as one call of their script's
  // batched form (EVALSHA, or with `use_eval` EVAL of its body).
  void append_batch(std::size_t first, std::size_t count, bool use_eval);
  // The request's "numkeys key... arg..." part, its own or its prepared
  // request's.
  [[nodiscard]] static std::string_view tail_of(const Slot& slot) noexcept;
  // Whether `next` may join the batch that `first` begins (the same script,
  // argument count and shared keys).
  [[nodiscard]] bool batches_with(const Slot& first, const Slot& next) const;
  // Encodes slots_[first .. first + count), requests of a transaction
  // form (Script::transaction), as its one MULTI ... EXEC.
  void append_transaction(std::size_t first, std::size_t count);
  // The front is a batch: hands each member its element of the reply.
  void complete_batch(TimePoint received_at);
  // The front is a transaction: hands each member its answer as its form
  // maps it, after sending the cleanups the form asks for.
  void complete_transaction(TimePoint received_at);
  // Writes a request's head to the output: EVAL with the body when asked
  // (`use_eval`), or the first time in this session for a script the
  // session set-up did not load, else EVALSHA. EVAL caches the script on
  // the node, so the session's later requests of it go as EVALSHA.
  void append_head(const Script& script, std::size_t argc, bool use_eval);
  // The front `count` requests (one, or one batch) met NOSCRIPT: queues
  // them again as EVAL of their script's body.
  void resend_with_eval(std::size_t count);
  // The answers a batch delivers, counted into stats_ once at its end: the
  // requests of one batch were mostly sent in one turn and answered in one
  // reply, so their latencies are runs of one value, and each count and
  // observation is a locked instruction (the metrics may be shared between
  // clients) that renewals at scale paid five times per renewal.
  struct AnswerTally {
    std::uint64_t replies = 0;
    std::uint64_t error_replies = 0;
    Microseconds run_latency{0};
    std::uint64_t run_length = 0;
  };
  // Takes the front slot off the queue and gives its sink `views`; what the
  // metrics count goes to `tally` when given, else to stats_ at once.
  void deliver_front(const redisReply* const* views, std::size_t reply_count, TimePoint received_at,
                     AnswerTally* tally = nullptr);
  void count_answer(AnswerTally& tally, Microseconds latency, bool error) noexcept;
  void flush_answers(AnswerTally& tally) noexcept;
  void start_write();
  void want_flush();
  // A cleanup request (send_cleanup), encoded, while it waits for the
  // node to be reachable again or for its queue slot.
  struct DeferredCleanup {
    const Script* script;
    std::string tail;
    TailLayout layout;
    std::size_t key_count;
    std::size_t argc;
    TimePoint expires_at;
  };
  // Queues `cleanup` as a request on this session.
  void queue_cleanup(DeferredCleanup cleanup, TimePoint now);
  // Keeps `cleanup` until the next handshake, unless it has expired.
  void defer_cleanup(DeferredCleanup cleanup);
  // Queues the kept cleanups that have not expired (the session has just
  // become ready).
  void resend_deferred_cleanups();
  // Queues an encoded cleanup, or keeps it until the node is reachable.
  void send_cleanup_encoded(DeferredCleanup cleanup);

  LoopContext& loop_;
  std::size_t index_;
  NodeConfig node_;
  SessionSetup setup_;
  NodeMetrics& stats_;
  Microseconds request_timeout_;
  bool refused_transaction_ = false;
  Milliseconds connect_timeout_;
  Milliseconds wait_timeout_;
  Milliseconds reconnect_min_;
  Milliseconds reconnect_max_;
  // The lock's clock-drift settings: a value stored with a TTL lives on the
  // node at most that TTL plus the drift allowance (lock_drift).
  double drift_factor_;
  Milliseconds drift_ms_;
  Milliseconds backoff_;

  State state_ = State::idle;
  // Bumped whenever the socket is reset, so callbacks from a previous
  // socket (connect, read, resolve) recognise they are stale.
  std::uint64_t generation_ = 0;
  TcpHolder* tcp_ = nullptr;
  // The node's addresses (the host resolved, or the address itself), tried
  // in order until one connects.
  std::vector<sockaddr_storage> addresses_;
  std::size_t next_address_ = 0;
  std::unique_ptr<ReplyReader> reader_;
  // The TLS session on the current socket (null without TLS), and the
  // ciphertext waiting to be written: over TLS, outbuf_ holds plaintext
  // until it is encrypted into tls_out_ at the write.
  std::unique_ptr<TlsSession> tls_;
  std::string tls_out_;
  // Whether the node has sent plaintext on this socket (a plain session's
  // first byte tells a TLS server from a Redis one).
  bool plain_seen_ = false;
  Fifo<Slot> slots_;
  std::vector<HandshakeStep> handshake_steps_;  // of the current handshake
  // The scripts this session has sent the node (SCRIPT LOAD at set-up, or
  // EVAL): any other goes as EVAL the first time (append_head).
  std::bitset<kMaxScripts> loaded_;
  std::size_t handshake_pending_ = 0;
  std::string outbuf_;
  // Requests at the back of the queue not yet encoded: batchable requests
  // wait for the turn's flush, so that those of one turn to this node go
  // out as one script call (requests made in one turn, e.g. the acquires
  // of many operations, cost the node one call instead of one each).
  std::size_t pending_count_ = 0;
  // At most this many requests per batched call: a script blocks its node
  // while it runs.
  static constexpr std::size_t kMaxBatch = 64;
  // stall_limit(): the request timeout this many times over (plus WAIT's).
  static constexpr int kStallTimeouts = 4;
  static constexpr std::size_t kMaxQueuedWhileUnresponsive = 4096;
  static constexpr int kKeepAliveSeconds = 15;
  bool write_in_flight_ = false;
  bool flush_wanted_ = false;  // this connection is on the loop turn's list
  TimerQueue::Id deadline_timer_ = TimerQueue::kNone;
  TimePoint deadline_armed_for_ = TimePoint::max();
  TimerQueue::Id connect_timer_ = TimerQueue::kNone;
  TimePoint connect_started_{};  // steady clock
  TimerQueue::Id reconnect_timer_ = TimerQueue::kNone;
  std::string last_error_;
  std::function<void(std::string_view, std::string_view)> push_handler_;
  std::function<void()> ready_handler_;
  std::function<void()> servers_handler_;
  std::function<void(std::string_view)> unsubscribed_handler_;
  // Shard subscriptions: whether this session sent SSUBSCRIBE, and the
  // channels it sent SUNSUBSCRIBE for whose confirmation is still to come
  // (a "sunsubscribe" for another channel is the server's own).
  bool shard_subscribed_ = false;
  std::vector<std::string> unsubscribing_;
  void note_subscription(std::span<const std::string_view> words);
  // A published message, or a shard subscription the server ended: handled
  // here, not the answer to any request.
  [[nodiscard]] bool took_push(const redisReply& reply);
  // What the session sends in `script`'s place (SessionSetup::sent_as).
  [[nodiscard]] const Script& sent_as(const Script& script) const noexcept {
    return setup_.sent_as != nullptr ? setup_.sent_as(script) : script;
  }
  ServerFacts facts_;
  TimerQueue::Id recheck_timer_ = TimerQueue::kNone;
  // Cleanups waiting for the node to be reachable again (send_cleanup).
  static constexpr std::size_t kMaxDeferredCleanups = 4096;
  std::vector<DeferredCleanup> deferred_cleanups_;
};

}  // namespace redlock::detail
