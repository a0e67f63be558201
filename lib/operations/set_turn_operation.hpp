// A set's turn (docs/algorithm.md, "A set's turn"): an acquire of several
// resources that has to wait. Retrying acquire_all, it needs every member
// free on a majority at one moment, which single-resource clients that
// hand each member on in its fair line never allow: it starved. So after
// its first attempt is refused it takes the members one at a time, in byte
// order of their names, each as a fair waiter in that member's line (an
// AcquireOperation of the fair kind), keeping those it holds renewed while
// it waits for the next; once it holds every member, one round of
// adopt_all makes them one lock with one value, and the members' own
// locks are released (on the nodes that adopted, that only gives up their
// places in the lines).
//
// Why the order: a set holds the members it has while it waits for the
// next one, and every set takes them in the same order, so no two sets
// can each hold what the other waits for (no cycle of waits). A
// single-resource holder never waits while holding.
//
// Lifetime: launched like any operation (launch.hpp); it keeps itself
// alive through the callbacks of the operations it starts, which are
// registered with the core too, so close() aborts them and this.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "operations/client_core.hpp"
#include "operations/operation.hpp"
#include "redlock/async_client.hpp"

namespace redlock::detail {

class SetTurnOperation final : public Operation {
 public:
  SetTurnOperation(ClientCore& core, std::vector<Resource> resources, const AcquireOptions& options,
                   AsyncClient::AcquireCallback callback);

  // Whether an acquire of `resources` with `options` waits its turn so:
  // two or more valid names, exclusive, `fair` not false, and it may wait
  // (not a try-lock). Any other set acquire retries acquire_all. A fenced
  // set takes its members unfenced and fences the adopted set, one token
  // for every member (SetFenceOperation).
  [[nodiscard]] static bool applies(const ClientCore& core, const std::vector<Resource>& resources,
                                    const AcquireOptions& options);

  void start();
  // It sends nothing itself: the operations it starts get the answers.
  void on_response(std::size_t, std::uint32_t, const NodeResponse&) override {}
  void cancel() override;
  void abort(std::error_code why) override;

 private:
  enum class Phase {
    trying,    // the first attempt, acquire_all once
    taking,    // a member's fair acquire is out
    adopting,  // adopt_all's round is out
    fencing,   // a fenced set's token rounds are out (the set is held)
    done,
  };

  void on_first_attempt(AcquireResult result);
  // The wait left, none when the deadline has passed; nullopt deadline:
  // unbounded.
  [[nodiscard]] bool out_of_time() const;
  void take_next();
  void on_member(AcquireResult result);
  void adopt();
  void on_adopted(ExtendResult result);
  void on_fenced(std::error_code error, std::uint64_t token);
  // The adopted set's lock goes (its release, as a cleanup) and the set
  // starts over, or ends with `why` when no time is left.
  void drop_set_and_start_over(std::error_code why);
  // Keeps the members held renewed: an extend of each when the earliest
  // has half its TTL left.
  void schedule_renewal();
  void renew_held();
  void on_renewed(std::size_t index, ExtendResult result);
  // Gives up every member held (each one's release, which also serves its
  // line) and starts over from the first member, or ends with `why` when
  // no time is left.
  void start_over(std::error_code why);
  void release_held();
  // The release of `lock`'s value on every node, as a cleanup.
  void release_call_now(const Lock& lock);
  // Cancelled: what is out is cancelled, what is held given up.
  void stop();
  // Ends with `error` (releasing what it holds) or, without one, with
  // result_ as it stands.
  void finish(std::error_code error);

  std::vector<Resource> resources_;  // in the caller's order
  std::vector<std::size_t> order_;   // resources_ indices, by name
  AcquireOptions options_;
  Milliseconds ttl_{0};
  std::optional<TimePoint> deadline_;
  AsyncClient::AcquireCallback callback_;
  Phase phase_ = Phase::trying;
  // The members held, in order_ order (held_[i] is resources_[order_[i]]).
  std::vector<Lock> held_;
  // The acquire, adopt or fence round out now (for cancel and abort).
  std::shared_ptr<Operation> current_;
  TimerQueue::Id renewal_timer_ = TimerQueue::kNone;
  std::size_t renewals_out_ = 0;
  // Bumped when the held members are given up: a renewal's answer for an
  // earlier holding is ignored.
  std::uint64_t holding_ = 0;
  AcquireResult result_;
  bool delivered_ = false;
};

}  // namespace redlock::detail
