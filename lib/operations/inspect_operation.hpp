// Inspect (docs/engine.md, "Inspection"): read one lock's key, or every
// permit of a semaphore, on every node, and the majority view of them.
// Nothing is written. Completes when every node has answered or timed out.
#pragma once

#include <optional>

#include "operations/client_core.hpp"
#include "operations/operation.hpp"
#include "operations/quorum_round.hpp"
#include "redlock/inspection.hpp"

namespace redlock::detail {

class InspectOperation final : public Operation {
 public:
  using Callback = std::function<void(Inspection)>;
  InspectOperation(ClientCore& core, Resource resource, Callback callback);
  InspectOperation(ClientCore& core, const Semaphore& semaphore, Callback callback);

  void start();
  void on_response(std::size_t node, std::uint32_t tag, const NodeResponse& response) override;
  void cancel() override;
  void abort(std::error_code why) override;

 private:
  void decide();
  void complete(std::error_code error);
  void fail_later(std::error_code error);

  Resource resource_;
  std::optional<std::uint32_t> permits_;
  Callback callback_;
  QuorumRound round_{0, false};
  std::size_t waiting_ = 0;
  bool finished_ = false;
  Inspection result_;
};

}  // namespace redlock::detail
