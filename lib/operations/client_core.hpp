// What the operations of one client share: the loop, the configuration, the
// node connections, the timer queue and the end-of-turn hook. Owns itself
// while open: it is freed by the last close callback of its libuv handles.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "operations/operation.hpp"
#include "operations/recovery_coordinator.hpp"
#include "operations/wakeup_hub.hpp"
#include "protocol/quorum.hpp"
#include "protocol/validity.hpp"
#include "redlock/async_client.hpp"
#include "redlock/config.hpp"
#include "redlock/error.hpp"
#include "scripts/key_space.hpp"
#include "transport/loop_context.hpp"
#include "transport/loop_turn.hpp"
#include "transport/node_link.hpp"
#include "transport/timer_queue.hpp"

namespace redlock::detail {

class ClientCore {
 public:
  // `make_link` makes each node's links (its lock link and, once a waiter
  // needs one, its subscriber link); by default NodeConnection, the link
  // to a real node. Tests hand in fake links (tests/support/fake_link.hpp).
  static std::shared_ptr<ClientCore> create(uv_loop_t* loop, QuorumConfig config,
                                            ClientOptions options, LinkFactory make_link = {});
  // The link to a real node.
  [[nodiscard]] static LinkFactory real_links();
  ClientCore(const ClientCore&) = delete;
  ClientCore& operator=(const ClientCore&) = delete;
  ~ClientCore();

  [[nodiscard]] LoopContext& loop_context() noexcept { return *context_; }
  [[nodiscard]] uv_loop_t* loop() const noexcept { return context_->loop(); }
  [[nodiscard]] const QuorumConfig& config() const noexcept { return config_; }
  // The nodes' names in configuration order, for records that may outlive
  // the core (a held lock's packed acquisition, holding/held_record.hpp).
  [[nodiscard]] const std::shared_ptr<const std::vector<std::string>>& node_names() const noexcept {
    return node_names_;
  }
  [[nodiscard]] const MonotonicClock& clock() const noexcept { return context_->clock(); }
  [[nodiscard]] TimerQueue& timers() noexcept { return context_->timers(); }
  [[nodiscard]] LoopTurn& turn() noexcept { return context_->turn(); }
  [[nodiscard]] WakeupHub& wakeups() noexcept { return *wakeups_; }
  [[nodiscard]] std::vector<std::unique_ptr<NodeLink>>& nodes() noexcept { return nodes_; }
  [[nodiscard]] std::size_t quorum() const noexcept { return majority(nodes_.size()); }
  [[nodiscard]] Milliseconds drift_for(Milliseconds ttl) const noexcept;
  // Where the keys of `resource` live (scripts/key_space.hpp): per slot
  // when a member is a Redis Cluster.
  // The pairs of members that are not independent, as the members'
  // links know their servers now (protocol/same_server.hpp).
  [[nodiscard]] std::vector<SharedMembers> members_sharing() const;
  [[nodiscard]] KeySpace keys_for(std::string_view resource) const {
    return KeySpace(config_.lock, layout_, resource);
  }
  // Whether some node counts a grant only once replicated (min_replicas):
  // a fair waiter then makes no claim, since a release's grant is not
  // followed by WAIT.
  [[nodiscard]] bool any_replicated_node() const noexcept {
    for (const auto& node : nodes_) {
      if (node->min_replicas() > 0) return true;
    }
    return false;
  }
  // Whether node `node`'s current session has shown the node's identity
  // marker (an acquire answer the node rules let through, with the amnesia
  // defence on): until then, or after a reconnect, an acquire goes as the
  // script, which takes no key on a node without it (scripts.hpp,
  // acquire_set). What one session showed says nothing of the next: it
  // may reach a restarted node.
  // Per slot, a marker seen in one slot says nothing of another's: never.
  [[nodiscard]] bool seen_marked(std::size_t node) const noexcept {
    return layout_ == KeyLayout::shared && marked_session_[node] == nodes_[node]->session() + 1;
  }
  void note_marked(std::size_t node, bool marked) noexcept {
    marked_session_[node] = marked ? nodes_[node]->session() + 1 : 0;
  }
  // Empty when the configuration is usable.
  [[nodiscard]] const std::string& config_problem() const noexcept { return config_problem_; }
  [[nodiscard]] bool closing() const noexcept { return closing_; }
  [[nodiscard]] Metrics& metrics() const noexcept { return *metrics_; }
  [[nodiscard]] std::shared_ptr<Metrics> metrics_handle() const noexcept { return metrics_; }

  // Keeps `op` alive until it calls finished(); close() aborts it.
  void started(const std::shared_ptr<Operation>& op);
  void finished(const Operation* op) noexcept;

  void close(std::function<void()> on_closed);

  // The amnesia defence's rounds (recovery_coordinator.hpp).
  [[nodiscard]] RecoveryCoordinator& recovery() noexcept { return *recovery_; }

 private:
  ClientCore(uv_loop_t* loop, QuorumConfig config, ClientOptions options, LinkFactory make_link);
  void refuse_dependent_votes();

  QuorumConfig config_;
  std::shared_ptr<const std::vector<std::string>> node_names_;
  KeyLayout layout_;
  std::shared_ptr<Metrics> metrics_;
  std::string config_problem_;
  // The core frees itself when the last handle counted here closes after
  // close().
  std::unique_ptr<LoopContext> context_;
  std::vector<std::unique_ptr<NodeLink>> nodes_;
  std::unique_ptr<WakeupHub> wakeups_;
  // Per node: its session number plus one when that session showed the
  // marker, else 0 (seen_marked).
  std::vector<std::uint64_t> marked_session_;
  // The live operations, each at its Operation::live_index_: a held lock is
  // one of them for as long as it is held, and a vector entry costs it 16
  // bytes where a hash map's node and bucket cost 56.
  std::vector<std::shared_ptr<Operation>> live_;
  std::shared_ptr<ClientCore> self_;
  std::unique_ptr<RecoveryCoordinator> recovery_;
  bool closing_ = false;
};

}  // namespace redlock::detail
