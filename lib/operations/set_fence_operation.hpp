// The fencing token of a set that waited its turn (docs/algorithm.md, "A
// set's turn"): once adopt_all has made its members one lock, rounds of
// fence_all propose one token for every member, as a fenced acquire of
// several resources does in its phase 2 (docs/algorithm.md, "Fenced
// acquire"). The first proposal is 1; a lost round tells the highest
// counter seen, and the next proposes one more, up to three rounds.
//
// Lifetime: launched like any operation (launch.hpp); its callback is
// called exactly once, from the loop, never from inside start().
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <system_error>

#include "operations/client_core.hpp"
#include "operations/operation.hpp"
#include "operations/quorum_round.hpp"
#include "protocol/fence_round.hpp"

namespace redlock::detail {

class SetFenceOperation final : public Operation {
 public:
  // `token` is meaningful only without `error`: fencing_failed when
  // kMaxFenceRounds rounds were lost or the token would pass
  // kMaxFenceToken; cancelled or the abort's reason otherwise.
  using Callback = std::function<void(std::error_code error, std::uint64_t token)>;

  // `set` is the adopted lock over several resources.
  SetFenceOperation(ClientCore& core, Lock set, Callback callback);

  void start();
  void on_response(std::size_t node, std::uint32_t tag, const NodeResponse& response) override;
  void cancel() override;
  void abort(std::error_code why) override;

 private:
  void propose(std::uint64_t token);
  void request_recovery();
  void complete(std::error_code error, std::uint64_t token);

  Lock set_;
  Callback callback_;
  QuorumRound round_{0, false};
  std::optional<FenceRound> proposal_;
  int rounds_ = 0;
  bool recovery_requested_ = false;
  bool finished_ = false;
};

}  // namespace redlock::detail
