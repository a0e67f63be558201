// Fake node links (transport/node_link.hpp) for unit tests of exact
// interleavings: every request an operation sends is recorded, decoded, and
// answered when and how the test says: a reply given as RESP text, a
// timeout, a late reply, a published message, a session reset. No sockets
// and no servers: the same races the integration tests play on real nodes,
// here in a fixed order.
//
// Lifetime: FakeNodes outlives the ClientCore whose links it made; the
// links themselves belong to the core.
#pragma once

#include <hiredis/hiredis.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "scripts/scripts.hpp"
#include "transport/node_link.hpp"

namespace redlock::test {

// One request as an operation sent it.
struct SentRequest {
  std::size_t node = 0;
  const detail::Script* script = nullptr;
  std::vector<std::string> keys;
  std::vector<std::string> args;
  std::shared_ptr<detail::ResponseSink> sink;
  std::uint32_t tag = 0;
  bool cleanup = false;
  bool answered = false;
  [[nodiscard]] detail::ScriptId id() const { return detail::id_of(*script); }
};

// A reply tree parsed from RESP text (hiredis's reader), freed with it.
class ParsedReply {
 public:
  explicit ParsedReply(std::string_view resp);
  ParsedReply(const ParsedReply&) = delete;
  ParsedReply& operator=(const ParsedReply&) = delete;
  ~ParsedReply();
  [[nodiscard]] const redisReply* get() const noexcept { return reply_; }

 private:
  redisReply* reply_ = nullptr;
};

// RESP text of an array of integers: resp_integers({1, 0}) is "*2 :1 :0".
[[nodiscard]] std::string resp_integers(std::initializer_list<long long> values);

class FakeNodes;

class FakeLink final : public detail::NodeLink {
 public:
  FakeLink(FakeNodes& nodes, std::size_t index, const NodeConfig& node, bool subscriber);

  void send(detail::Request request) override;
  void send_command(std::initializer_list<std::string_view> argv) override;
  void set_push_handler(
      std::function<void(std::string_view channel, std::string_view payload)> handler) override {
    push_handler_ = std::move(handler);
  }
  void set_ready_handler(std::function<void()> handler) override {
    ready_handler_ = std::move(handler);
  }
  void start() override;
  void close() override { closed_ = true; }

  [[nodiscard]] std::size_t index() const noexcept override { return index_; }
  [[nodiscard]] const NodeConfig& config() const noexcept override { return node_; }
  [[nodiscard]] bool ready() const noexcept override { return !closed_; }
  [[nodiscard]] int min_replicas() const noexcept override { return 0; }
  [[nodiscard]] std::uint64_t session() const noexcept override { return session_; }
  [[nodiscard]] bool refused_transaction() const noexcept override { return false; }
  [[nodiscard]] Persistence persistence() const noexcept override {
    return Persistence::aof_always;
  }
  [[nodiscard]] NodeHealth health() const override;

  // A new session (the connection was reset and is ready again).
  void new_session();
  // A message published on `channel`, as this subscriber link receives it.
  void push(std::string_view channel, std::string_view payload);
  [[nodiscard]] bool subscriber() const noexcept { return subscriber_; }
  // Every plain command (SUBSCRIBE, a mark's SET), in order.
  std::vector<std::vector<std::string>> commands;

 private:
  FakeNodes& nodes_;
  std::size_t index_;
  NodeConfig node_;
  bool subscriber_;
  bool closed_ = false;
  std::uint64_t session_ = 0;
  std::function<void(std::string_view, std::string_view)> push_handler_;
  std::function<void()> ready_handler_;
};

class FakeNodes {
 public:
  // The links a ClientCore made through factory(), by node: its lock
  // links and (once a waiter needed them) its subscriber links.
  [[nodiscard]] detail::LinkFactory factory();
  [[nodiscard]] FakeLink& lock(std::size_t node) { return *locks_.at(node); }
  [[nodiscard]] FakeLink* subscriber(std::size_t node) {
    return node < subscribers_.size() ? subscribers_[node] : nullptr;
  }

  // Every request sent, in order (stable addresses).
  std::deque<SentRequest> sent;
  // The requests of `id` to `node` not answered yet, oldest first
  // (cleanups included only with `cleanups`).
  [[nodiscard]] std::vector<SentRequest*> pending(std::size_t node, detail::ScriptId id,
                                                  bool cleanups = false);
  // The only such request; fails the test (and returns null) if there is
  // not exactly one.
  [[nodiscard]] SentRequest* one_pending(std::size_t node, detail::ScriptId id);
  // Every cleanup sent to `node`.
  [[nodiscard]] std::vector<SentRequest*> cleanups(std::size_t node);

  // Answers `request` with `resp` (a late reply when `late`).
  void reply(SentRequest& request, std::string_view resp, bool late = false);
  // Tells `request`'s sink that it timed out (the node may have run it).
  void time_out(SentRequest& request);

 private:
  friend class FakeLink;
  std::vector<FakeLink*> locks_;
  std::vector<FakeLink*> subscribers_;
};

}  // namespace redlock::test
