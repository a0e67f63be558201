// Release on every node (docs/algorithm.md, "Release"); only our own value is ever deleted.
#pragma once

#include <memory>
#include <optional>

#include "operations/client_core.hpp"
#include "operations/operation.hpp"
#include "operations/quorum_round.hpp"

namespace redlock::detail {

class ReleaseOperation final : public Operation {
 public:
  ReleaseOperation(ClientCore& core, Lock lock, AsyncClient::ReleaseCallback callback);

  void start();
  void on_response(std::size_t node, std::uint32_t tag, const NodeResponse& response) override;
  void cancel() override;
  void abort(std::error_code why) override;

 private:
  void complete(std::error_code error);
  void fail_later(std::error_code error);
  [[nodiscard]] std::error_code summary();

  // Sends the release to `node` again once it is reachable, for as long as
  // the value could live there.
  void resend_when_reachable(std::size_t node);

  // A release that offered a place or draws a ticket: tells the hub that
  // `node` took the place, and counts `response`'s drawn ticket, handing
  // the highest of a majority's to the hub.
  void note_comeback(std::size_t node, const NodeResponse& response);

  Lock lock_;
  AsyncClient::ReleaseCallback callback_;
  // The place in line this release offers the nodes (WakeupHub::
  // offer_rejoin), for the client's next acquire of the lock.
  std::optional<WakeupHub::LinePlace> rejoin_;
  // A fair lock's release that draws the client's next ticket: the
  // resource's channel, and the draws so far and their highest.
  bool drawing_ = false;
  std::string channel_;
  std::size_t draws_ = 0;
  std::uint64_t draw_max_ = 0;
  // Its pre-claim (WakeupHub::pre_claim), and whether the hub has it for
  // the next acquire (a majority drew).
  std::shared_ptr<WakeupHub::PreClaim> claim_;
  bool claim_handed_ = false;
  // A release is a round whose votes are deletions; it ends when every node
  // answered, or with release_at_majority at a majority of deletions.
  QuorumRound round_;
  // A set across slots (one call per slot): the nodes whose release was
  // resent already, since each part's failure would resend every part.
  std::vector<bool> resent_;
  bool finished_ = false;
  // Reported at a majority with answers still to come (release_at_majority):
  // those answers still matter to the nodes they come from.
  bool reported_at_majority_ = false;
  ReleaseResult result_;
};

}  // namespace redlock::detail
