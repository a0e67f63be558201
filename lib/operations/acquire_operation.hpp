// One acquire (docs/algorithm.md, "Acquire"), possibly over several attempts.
#pragma once

#include <deque>
#include <utility>
#include <vector>

#include "operations/client_core.hpp"
#include "operations/operation.hpp"
#include "protocol/fence_round.hpp"
#include "protocol/quorum.hpp"
#include "protocol/retry_policy.hpp"

namespace redlock::detail {

class AcquireOperation final : public Operation, public Wakeable {
 public:
  AcquireOperation(ClientCore& core, Resource resource, const AcquireOptions& options,
                   AsyncClient::AcquireCallback callback);

  void start();
  void on_response(std::size_t node, std::uint32_t tag, const NodeResponse& response) override;
  void cancel() override;
  void abort(std::error_code why) override;
  bool wake() override;

 private:
  // Schedules the first attempt after a courtesy pause when this client
  // finds the resource contended (courtesy_pause); false when it may start
  // at once.
  [[nodiscard]] bool defer_first_attempt();
  void begin_attempt();
  void decide();
  void hand_out_if_valid();
  void begin_fencing();
  void propose(std::uint64_t token);
  void on_fence_response(std::size_t node, const NodeResponse& response);
  [[nodiscard]] Microseconds validity_now() const;
  [[nodiscard]] bool in_flight() const noexcept { return attempt_open_ || fencing_open_; }
  void fail_attempt(std::error_code why);
  // `announce`: publish the deletions as a release, to wake waiters.
  void unlock_attempt(bool announce);
  // Sends the compare-and-delete of `value` to `node`, to be sent again
  // after a reconnect for as long as the value could live there.
  void undo_grant(std::size_t node, const LockValue& value, std::string_view channel);
  void succeed(Microseconds validity);
  void complete(std::error_code error);
  void finish(std::error_code error);
  void handle_stale(std::uint32_t tag, std::size_t node, const NodeResponse& response);
  // The pause before the next attempt; nullopt when none remains.
  [[nodiscard]] std::optional<Microseconds> next_pause() const;
  void retry_or_finish(std::error_code why, std::optional<Microseconds> delay);
  void stop_waiting_for_release();
  [[nodiscard]] bool saw_unmarked_node() const;
  void note_if_unmarked(const NodeOutcome& outcome);

  Resource resource_;
  std::string lock_key_;
  std::string fence_key_;
  std::string marker_key_;
  std::string recovering_key_;
  std::string_view defence_flag_;
  std::string channel_;
  Milliseconds ttl_;
  std::string ttl_text_;
  RetryPlan plan_;
  std::error_code argument_problem_;
  AsyncClient::AcquireCallback callback_;

  // The attempt in progress (or the last one).
  std::uint32_t tag_ = 0;
  LockValue value_{""};
  TimePoint started_{};
  QuorumTally tally_{0};
  std::size_t busy_ = 0;
  std::vector<NodeOutcome> outcomes_;
  // Per node: this attempt's request provably never left the client (the
  // transport said so), so there is nothing on that node to undo.
  std::vector<bool> never_sent_;
  bool attempt_open_ = false;
  // From the attempt's t0 to its decision (phase 1 only).
  Microseconds last_round_trip_{0};
  // The attempt lost a split vote: some grants, some nodes held by a rival.
  bool split_ = false;

  // Phase 2 (fenced acquires only).
  bool fenced_ = false;
  bool fencing_open_ = false;
  std::uint32_t fence_tag_ = 0;
  int fence_rounds_ = 0;
  std::optional<FenceRound> fence_round_;
  std::optional<std::uint64_t> token_;

  // Values of failed attempts whose late grants must still be undone.
  std::deque<std::pair<std::uint32_t, LockValue>> abandoned_;
  TimerQueue::Id retry_timer_ = TimerQueue::kNone;
  std::error_code last_failure_;
  TimePoint called_at_{};
  bool finished_ = false;
  // One attempt per call may follow a recovery round at once, outside the
  // retry budget, so a brand-new quorum is initialised transparently.
  bool recovery_attempt_used_ = false;
  bool recovery_requested_ = false;
  bool waiting_for_release_ = false;
  int free_attempts_ = 0;
  AcquireResult result_;
};

}  // namespace redlock::detail
