// What the operations of one client share: the loop, the configuration, the
// node connections, the timer queue and the end-of-turn hook. Owns itself
// while open: it is freed by the last close callback of its libuv handles.
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "operations/operation.hpp"
#include "operations/wakeup_hub.hpp"
#include "protocol/quorum.hpp"
#include "protocol/validity.hpp"
#include "redlock/async_client.hpp"
#include "redlock/config.hpp"
#include "redlock/error.hpp"
#include "transport/loop_turn.hpp"
#include "transport/node_connection.hpp"
#include "transport/timer_queue.hpp"

namespace redlock::detail {

class ClientCore {
 public:
  static std::shared_ptr<ClientCore> create(uv_loop_t* loop, QuorumConfig config,
                                            ClientOptions options);
  ClientCore(const ClientCore&) = delete;
  ClientCore& operator=(const ClientCore&) = delete;
  ~ClientCore();

  [[nodiscard]] uv_loop_t* loop() const noexcept { return loop_; }
  [[nodiscard]] const QuorumConfig& config() const noexcept { return config_; }
  [[nodiscard]] const MonotonicClock& clock() const noexcept { return *clock_; }
  [[nodiscard]] TimerQueue& timers() noexcept { return *timers_; }
  [[nodiscard]] LoopTurn& turn() noexcept { return *turn_; }
  [[nodiscard]] WakeupHub& wakeups() noexcept { return *wakeups_; }
  [[nodiscard]] std::vector<std::unique_ptr<NodeConnection>>& nodes() noexcept { return nodes_; }
  [[nodiscard]] std::size_t quorum() const noexcept { return majority(nodes_.size()); }
  [[nodiscard]] Milliseconds drift_for(Milliseconds ttl) const noexcept;
  // Empty when the configuration is usable.
  [[nodiscard]] const std::string& config_problem() const noexcept { return config_problem_; }
  [[nodiscard]] bool closing() const noexcept { return closing_; }
  [[nodiscard]] Metrics& metrics() const noexcept { return *metrics_; }
  [[nodiscard]] std::shared_ptr<Metrics> metrics_handle() const noexcept { return metrics_; }

  // Keeps `op` alive until it calls finished(); close() aborts it.
  void started(const std::shared_ptr<Operation>& op);
  void finished(const Operation* op) noexcept;

  void close(std::function<void()> on_closed);

  // The amnesia defence: starts a recovery round (or joins the one running)
  // and calls `done(progressed)` when it ends; progressed means every node
  // that answered now carries its marker. Rounds that found nothing to do
  // safely are not repeated more often than every kRecoveryPause.
  void request_recovery(std::function<void(bool progressed)> done);
  void recovery_finished(bool progressed, const std::string& report);
  // What the last recovery round found (for node outcomes and diagnosis).
  [[nodiscard]] const std::string& recovery_report() const noexcept { return recovery_report_; }

  // Accounting of open libuv handles and requests: the core frees itself
  // when the last one closes after close().
  void handle_opened() noexcept { ++open_handles_; }
  void handle_closed();

 private:
  ClientCore(uv_loop_t* loop, QuorumConfig config, ClientOptions options);

  uv_loop_t* loop_;
  QuorumConfig config_;
  const MonotonicClock* clock_;
  std::shared_ptr<Metrics> metrics_;
  std::string config_problem_;
  std::unique_ptr<TimerQueue> timers_;
  std::unique_ptr<LoopTurn> turn_;
  std::vector<std::unique_ptr<NodeConnection>> nodes_;
  std::unique_ptr<WakeupHub> wakeups_;
  std::unordered_map<const Operation*, std::shared_ptr<Operation>> live_;
  std::shared_ptr<ClientCore> self_;
  std::function<void()> on_closed_;
  std::size_t open_handles_ = 0;
  bool recovery_running_ = false;
  TimePoint recovery_ended_{};
  bool recovery_progressed_ = false;
  std::vector<std::function<void(bool)>> recovery_waiters_;
  std::string recovery_report_;
  bool closing_ = false;
};

}  // namespace redlock::detail
