// What an operation needs of one node (a NodeLink): one way to send a
// request, the session's facts, and the handlers of a subscriber session.
// NodeConnection is the link to a real node; tests drive operations through
// exact interleavings over a fake one (tests/support/fake_link.hpp).
//
// Callback contract: a request's sink gets exactly one non-late response,
// never from inside send() (a request that cannot be sent is failed from a
// posted task), and at most one late one after a timeout. Lifetime: a link
// lives as long as the ClientCore (or WakeupHub) that made it; a sink is
// kept alive by the link until its responses are given.
#pragma once

#include <hiredis/hiredis.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/same_server.hpp"
#include "redlock/config.hpp"
#include "redlock/metrics.hpp"
#include "redlock/outcome.hpp"
#include "redlock/types.hpp"
#include "transport/script.hpp"

namespace redlock::detail {

class LoopContext;

struct NodeResponse {
  enum class Kind { reply, timeout, unreachable };
  Kind kind = Kind::reply;
  // For Kind::reply: the replies of the request's commands (the script's,
  // then WAIT's when replicas are required). Valid only during the call.
  const redisReply* const* replies = nullptr;
  std::size_t reply_count = 0;
  Microseconds latency{0};
  // For timeout / unreachable: why.
  std::string_view detail;
  // A reply that arrived after the sink had been told `timeout`.
  bool late = false;
  // For timeout / unreachable: false when the request provably never left
  // this client (it was still queued behind an unanswered handshake, or the
  // node was not connected), so it cannot have run on the node.
  bool may_have_run = true;
};

// A script request encoded once, for a caller that sends the same request
// again and again (a guard's renewal): nothing is encoded or allocated per
// send but the script's head.
class PreparedRequest {
 public:
  PreparedRequest(const Script& script, std::initializer_list<std::string_view> keys,
                  std::initializer_list<std::string_view> args);
  explicit PreparedRequest(const ScriptCall& call);

  [[nodiscard]] const Script& script() const noexcept { return *script_; }
  // What follows the script's name, "numkeys key... arg...", in RESP (as
  // EVALSHA and EVAL take it).
  [[nodiscard]] std::string_view tail() const noexcept { return tail_; }
  [[nodiscard]] std::size_t argc() const noexcept { return argc_; }
  // Where the keys and arguments begin in tail(), for a batched call.
  [[nodiscard]] const TailLayout& layout() const noexcept { return layout_; }
  [[nodiscard]] std::size_t key_count() const noexcept { return key_count_; }

 private:
  void encode(std::string tail);

  // Narrow fields: a held lock keeps one of these.
  const Script* script_;
  std::string tail_;
  std::uint32_t argc_ = 0;
  std::uint32_t key_count_ = 0;
  TailLayout layout_;
};

// Receives the responses of requests. Each request gets exactly one
// non-late response, and at most one late one after a timeout.
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  virtual void on_response(std::size_t node, std::uint32_t tag, const NodeResponse& response) = 0;
};

// What a session asks of the node once connected, beyond AUTH and SELECT:
// decided by the layer above (the transport only carries it out).
struct SessionSetup {
  // Loaded with SCRIPT LOAD, so the session's EVALSHA finds them; any
  // other script goes as EVAL the first time the session sends it.
  std::vector<const Script*> scripts;
  // A server of a Redis Cluster: requests join one batched call only when
  // their first keys share a hash slot (a call whose keys span slots is
  // refused with CROSSSLOT).
  bool one_slot_per_call = false;
  // Read appendonly, appendfsync and no-appendfsync-on-rewrite with CONFIG
  // GET (persistence()) at connect, and again every `persistence_recheck`
  // while connected; and the server's run_id (INFO server) at connect.
  bool read_persistence = false;
  Milliseconds persistence_recheck{5000};
  // A script call the session runs first, before any request of its own,
  // as EVAL: the layer above's first word to each server it reaches. Its
  // answer is dropped; an error reply ends the session as a failed AUTH
  // does (reconnecting with backoff), with the error as its reason.
  std::optional<ScriptCall> opening;
  // When set, the opening's last argument is, at each session's start,
  // what this returns instead: the hash tag of a slot the server serves
  // now (a Redis Cluster's link gives one from its map; empty keeps the
  // argument as it is). Called on the loop thread; it must outlive the
  // connection.
  std::function<std::string_view()> opening_slot_tag;
  // What the session sends in a script's place (loaded, EVALSHA, EVAL):
  // the layer above's variant of it, as a script of its own (its own
  // number, body and SHA-1). Null: the script itself.
  const Script& (*sent_as)(const Script&) noexcept = nullptr;
};

// One request to a node: a script (or transaction form) with its keys and
// arguments given one of three ways, and where its answer goes.
struct Request {
  // A plain command instead of a script (script null): its words, valid
  // during send(); its reply goes to the sink as one reply (a slot map's
  // CLUSTER SLOTS, a redirect's ASKING). Never a cleanup, never batched.
  std::span<const std::string_view> command;
  const Script* script = nullptr;
  // Keys and arguments as views, valid during send(); or a call built at
  // run time (`call`); or a request encoded beforehand (`prepared`, which
  // must stay unchanged while `sink` lives; the sink owns it).
  std::span<const std::string_view> keys;
  std::span<const std::string_view> args;
  const ScriptCall* call = nullptr;
  const PreparedRequest* prepared = nullptr;
  // A pipelined `WAIT min_replicas timeout` follows (when the node's
  // config asks for replicas).
  bool require_replicas = false;
  // The caller's reading of the client's clock before the call (a round's
  // start): the requests of one round share one reading, and the timeout
  // and the latency count from it.
  TimePoint sent_at{};
  std::shared_ptr<ResponseSink> sink;
  std::uint32_t tag = 0;
  // A cleanup (a compare-and-delete, or any request that only undoes what
  // a request of ours may have done on the node): no sink, no answer
  // wanted. If the connection is reset before the node answered it, or the
  // node is not connected now, it is kept (bounded) and sent as soon as the
  // session is ready again, unless `expires_at` (when whatever it undoes
  // has expired on the node anyway) has passed by then.
  bool cleanup = false;
  TimePoint expires_at{};
};

class NodeLink {
 public:
  virtual ~NodeLink() = default;

  // The one way a request is sent.
  virtual void send(Request request) = 0;
  // A plain command whose reply is consumed and dropped (SUBSCRIBE, a
  // listening mark's SET). Only on a ready session; before it, the ready
  // handler sends what it needs.
  virtual void send_command(std::initializer_list<std::string_view> argv) = 0;
  // The same for a command about one key or shard channel (a listening
  // mark's SET, SSUBSCRIBE), sent to the server that holds `key`: for one
  // server, send_command; a member that is a cluster sends it to the
  // master of the key's slot (dropped before its map is known: its ready
  // handler runs once it is).
  virtual void send_keyed_command(std::string_view key,
                                  std::initializer_list<std::string_view> argv) {
    (void)key;
    send_command(argv);
  }
  // Published messages (plain and shard channels') go here instead of to
  // requests: for a link used in subscribe mode.
  virtual void set_push_handler(
      std::function<void(std::string_view channel, std::string_view payload)> handler) = 0;
  // Runs each time the session becomes ready (first connect and
  // reconnects); for a cluster member, each time one of its servers'
  // sessions does and after each new slot map, so that what the caller
  // keeps on servers by key goes where the map now puts it.
  virtual void set_ready_handler(std::function<void()> handler) = 0;
  virtual void start() = 0;
  // Best-effort write of what is queued, then closes; pending requests
  // fail as unreachable, and further sends fail at once (posted).
  virtual void close() = 0;

  [[nodiscard]] virtual std::size_t index() const noexcept = 0;
  [[nodiscard]] virtual const NodeConfig& config() const noexcept = 0;
  [[nodiscard]] virtual bool ready() const noexcept = 0;
  [[nodiscard]] virtual int min_replicas() const noexcept = 0;
  // The current session's number: it changes at every reset, so what a
  // caller learned of the node on one session (an identity marker seen,
  // say) can be known for that session only.
  [[nodiscard]] virtual std::uint64_t session() const noexcept = 0;
  // Whether a transaction failed as a whole on this session (an ACL
  // without MULTI or EXEC, say): its caller then sends scripts instead.
  [[nodiscard]] virtual bool refused_transaction() const noexcept = 0;
  // What the handshake learned (unknown until it has, or when denied).
  [[nodiscard]] virtual Persistence persistence() const noexcept = 0;
  [[nodiscard]] virtual NodeHealth health() const = 0;
  // The servers behind this link as the independence check compares
  // members (protocol/same_server.hpp): by default one server, its run_id
  // (empty until known).
  [[nodiscard]] virtual MemberServers servers() const {
    MemberServers out;
    out.run_ids.push_back(health().run_id);
    return out;
  }
  // `handler` runs whenever what servers() answers may have changed: a
  // session to one of the link's servers became ready (its run_id is
  // known), or a member that is a Redis Cluster read a slot map.
  virtual void set_servers_handler(std::function<void()> handler) { (void)handler; }
  // A member that is a Redis Cluster: its votes can be refused, `why`
  // failing at once every request but cleanups (empty: its votes count
  // again). One server's link is never refused.
  virtual void refuse_votes(std::string why) { (void)why; }

  // The forms callers write, each one Request (a script's call by its
  // struct: scripts/script_calls.hpp, send_to).
  void send_prepared(const PreparedRequest& prepared, TimePoint sent_at,
                     std::shared_ptr<ResponseSink> sink, std::uint32_t tag) {
    Request request;
    request.script = &prepared.script();
    request.prepared = &prepared;
    request.sent_at = sent_at;
    request.sink = std::move(sink);
    request.tag = tag;
    send(std::move(request));
  }
  void send_call(const ScriptCall& call, bool require_replicas, TimePoint sent_at,
                 std::shared_ptr<ResponseSink> sink, std::uint32_t tag) {
    Request request;
    request.script = call.script;
    request.call = &call;
    request.require_replicas = require_replicas;
    request.sent_at = sent_at;
    request.sink = std::move(sink);
    request.tag = tag;
    send(std::move(request));
  }
  void send_cleanup(const ScriptCall& call, TimePoint expires_at) {
    Request request;
    request.script = call.script;
    request.call = &call;
    request.cleanup = true;
    request.expires_at = expires_at;
    send(std::move(request));
  }
};

// Makes the link to node `index` of `config` on `loop`, counting into
// `stats`, with `setup` asked of each session.
using LinkFactory = std::function<std::unique_ptr<NodeLink>(
    LoopContext& loop, NodeMetrics& stats, std::size_t index, const NodeConfig& node,
    const LockConfig& lock, SessionSetup setup)>;

}  // namespace redlock::detail
