// Renew a held lock by quorum (docs/algorithm.md, "Extend").
//
// The rules of an extend round are pure functions here, shared by
// ExtendOperation (AsyncClient::extend) and by a guard's renewals
// (guard_state.hpp), which run the same round without an operation object.
#pragma once

#include <optional>
#include <system_error>
#include <vector>

#include "operations/client_core.hpp"
#include "operations/operation.hpp"
#include "operations/quorum_round.hpp"
#include "operations/slot_parts.hpp"
#include "protocol/quorum.hpp"
#include "scripts/scripts.hpp"

namespace redlock::detail {

// Why an extend of `lock` to `ttl` must never be sent: invalid_argument for
// an empty lock, a ttl that is not positive or one beyond the amnesia bound
// (effective_max_ttl). No error when it may be sent.
[[nodiscard]] std::error_code extend_request_refusal(const Lock& lock, Milliseconds ttl,
                                                     const LockConfig& config) noexcept;

// The same for an extend about to start at `now`, and then lost for a lock
// whose local deadline has passed: another client may hold it by now, and
// extending would make two holders.
[[nodiscard]] std::error_code extend_refusal(const Lock& lock, Milliseconds ttl,
                                             const LockConfig& config, TimePoint now) noexcept;

struct ExtendVerdict {
  std::error_code error;
  // On success: the validity left, counted from the round's start.
  Microseconds validity{0};
};

// How an extend round ends once its votes are decided: lost when it was
// decided at or after the lock's old deadline (timing.decided_in_time()),
// whatever the votes; lost or no_quorum when a majority can no longer say
// yes (extend_failure_reason); else validity_too_short unless the validity
// left after the round's elapsed time (validity_left with `drift`) is above
// `min_validity`; else success. A round still pending counts as no_quorum.
[[nodiscard]] ExtendVerdict extend_verdict(const QuorumTally& votes, std::size_t not_held,
                                           Milliseconds ttl, const RoundTiming& timing,
                                           Milliseconds drift, Milliseconds min_validity) noexcept;

// Counts one node's answer to an extend — an extend call's or a guard's
// renewal round — that `round` counts: parses it into the node's outcome,
// and once every part's answer has come (QuorumRound::whole) votes yes
// when extended, adds a "not held" answer to `not_held`. Returns the
// round's decision so far.
Decision count_extend_answer(QuorumRound& round, std::size_t node, const NodeResponse& response,
                             std::size_t& not_held);

class ExtendOperation final : public Operation {
 public:
  ExtendOperation(ClientCore& core, Lock lock, const ExtendOptions& options,
                  AsyncClient::ExtendCallback callback);
  // The same round with `calls` (one per part, slot_parts.hpp) sent
  // instead of the lock's extend, their answers read as an extend's (a
  // set's adopt_all, kinds/multi.hpp); the lock it hands back starts at
  // the round's start, the attempt that won.
  ExtendOperation(ClientCore& core, Lock lock, const ExtendOptions& options,
                  AsyncClient::ExtendCallback callback, MemberCalls calls);

  void start();
  void on_response(std::size_t node, std::uint32_t tag, const NodeResponse& response) override;
  void cancel() override;
  void abort(std::error_code why) override;

 private:
  // Decides the round at the deciding answer, or at the lock's deadline
  // when the round is still open then (lost, without waiting for the
  // node timeouts).
  void decide();
  void complete(std::error_code error);
  void fail_later(std::error_code error);

  Lock lock_;
  Milliseconds ttl_;
  AsyncClient::ExtendCallback callback_;
  std::optional<MemberCalls> calls_;
  // Built once the request is known to be sent; the nodes' slots point to it.
  std::optional<PreparedCalls> request_;
  QuorumRound round_;
  std::size_t not_held_ = 0;
  TimerQueue::Id deadline_timer_ = TimerQueue::kNone;
  bool finished_ = false;
  ExtendResult result_;
};

}  // namespace redlock::detail
