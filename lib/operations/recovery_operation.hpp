// One round of the amnesia defence (docs/algorithm.md, "The amnesia defence"): probe every node,
// decide with plan_recovery(), write markers (and merged fence counters, and the recovering delay)
// where the plan says. Safe when several clients do it at once: the recover script does nothing on
// a node that already has its marker, and merging counters is a field-wise max.
#pragma once

#include <vector>

#include "operations/client_core.hpp"
#include "operations/operation.hpp"
#include "operations/quorum_round.hpp"
#include "protocol/recovery_plan.hpp"

namespace redlock::detail {

class RecoveryOperation final : public Operation {
 public:
  // A round of the node rules' keys of `keys` (one slot's, per slot).
  RecoveryOperation(ClientCore& core, const KeySpace& keys);

  void start();
  void on_response(std::size_t node, std::uint32_t tag, const NodeResponse& response) override;
  void cancel() override { finish(false); }
  void abort(std::error_code) override { finish(false); }

 private:
  void act();
  // The second merge of nodes recovered with a delay (plan_second_merge).
  void remerge();
  // The recovering key's value: "recovering", or after a first
  // initialisation that not every node answered, what happened.
  [[nodiscard]] std::string recovering_note() const;
  void finish(bool progressed);

  // Two rounds that wait for every node rather than a majority: the probe
  // of every node, then the writes to the nodes the plan names (tags apart).
  KeySpace keys_;
  QuorumRound probe_{0, false};
  QuorumRound writes_{0x80000000u, false};
  std::vector<NodeProbe> probes_;
  std::size_t waiting_ = 0;
  RecoveryPlan plan_;
  bool finished_ = false;
  bool probed_again_ = false;  // the second merge's plan is from a second probe
};

}  // namespace redlock::detail
