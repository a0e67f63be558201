#include "operations/recovery_operation.hpp"

#include <string>

#include "protocol/random_value.hpp"
#include "scripts/reply_parse.hpp"
#include "scripts/script_calls.hpp"
#include "scripts/scripts.hpp"

namespace redlock::detail {

namespace {

// The merged counters as the recover and remerge scripts take them: field,
// counter pairs after `args`' own arguments.
void append_counters(std::vector<std::string>& args, const FenceEntries& merged) {
  args.reserve(args.size() + 2 * merged.size());
  for (const auto& [field, value] : merged) {
    args.push_back(field);
    args.push_back(std::to_string(value));
  }
}

}  // namespace

RecoveryOperation::RecoveryOperation(ClientCore& core, const KeySpace& keys)
    : Operation(core), keys_(keys) {}

void RecoveryOperation::start() {
  auto& nodes = core_.nodes();
  probes_.assign(nodes.size(), NodeProbe{});
  waiting_ = nodes.size();
  const std::string& prefix = keys_.key_prefix();
  const std::string marker = marker_key(prefix);
  const std::string recovering = recovering_key(prefix);
  const std::string fence = fence_key(prefix);
  const std::string locks = lock_pattern(keys_);
  const std::string permits = permit_pattern(prefix);
  probe_.open(core_.config().nodes, core_.clock().now());
  auto self = shared_from_this();
  const ProbeCall call{.marker_key = marker,
                       .recovering_key = recovering,
                       .fence_key = fence,
                       .lock_pattern = locks,
                       .permit_pattern = permits};
  for (auto& node : nodes) send_to(*node, call, false, probe_.started(), self, probe_.tag());
}

void RecoveryOperation::on_response(std::size_t node, std::uint32_t tag,
                                    const NodeResponse& response) {
  if (finished_) return;
  if (probe_.counts(tag, response)) {
    (void)parse_probe_response(response, probes_[node]);
    if (--waiting_ == 0) {
      (void)probe_.close(core_.clock().now());
      act();
    }
    return;
  }
  if (writes_.counts(tag, response) && --waiting_ == 0) {
    (void)writes_.close(core_.clock().now());
    finish(true);
  }
}

void RecoveryOperation::act() {
  plan_ = plan_recovery(probes_);
  if (plan_.action == RecoveryAction::none) return finish(true);
  if (plan_.action == RecoveryAction::wait) return finish(false);
  if (plan_.action == RecoveryAction::remerge) return remerge();

  const LockConfig& lock = core_.config().lock;
  const std::string marker_name = marker_key(keys_.key_prefix());
  const std::string recovering = recovering_key(keys_.key_prefix());
  const std::string fence = fence_key(keys_.key_prefix());
  const std::string delay =
      plan_.delayed ? std::to_string(effective_max_ttl(lock).count()) : std::string("0");
  const std::string note = recovering_note();
  std::vector<std::string> counters;
  append_counters(counters, plan_.merged_fence);
  waiting_ = plan_.targets.size();
  writes_.open(core_.config().nodes, core_.clock().now());
  auto self = shared_from_this();
  for (std::size_t target : plan_.targets) {
    // The marker names the node's incarnation, for diagnosis, and the
    // max_ttl this client's recovery delay is.
    std::uint8_t bytes[8];
    fill_random(bytes, sizeof bytes);
    const std::string incarnation = to_hex(bytes, sizeof bytes);
    const std::string marker = plan_.first_init
                                   ? first_init_marker_value(incarnation, effective_max_ttl(lock))
                                   : marker_value(incarnation, effective_max_ttl(lock));
    send_to(*core_.nodes()[target],
            RecoverCall{.marker_key = marker_name,
                        .recovering_key = recovering,
                        .fence_key = fence,
                        .delay_ms = delay,
                        .marker_value = marker,
                        .recovering_value = note,
                        .counters = counters},
            false, writes_.started(), self, writes_.tag());
  }
}

std::string RecoveryOperation::recovering_note() const {
  if (!plan_.first_init) return "recovering";
  // What happened, for whoever finds the node waiting (redlock status, a
  // refused acquire's note): names only, escaped where they are printed.
  std::string silent;
  for (std::size_t i : plan_.silent) {
    if (i >= core_.config().nodes.size()) continue;
    if (!silent.empty()) silent += ", ";
    silent += core_.config().nodes[i].name;
  }
  return std::string(kFirstInitRecovering) + silent +
         " did not answer when the quorum was first used; a majority that lost its data looks "
         "the same, so the nodes that answered grant nothing until max_ttl has passed";
}

void RecoveryOperation::remerge() {
  // The sources' counters must be read after each target's delay was seen
  // over: the first probe's requests to them may have run earlier, so the
  // plan is made again from a second probe, sent after the first answered.
  if (!probed_again_) {
    probed_again_ = true;
    start();
    return;
  }
  const std::string recovering = recovering_key(keys_.key_prefix());
  const std::string fence = fence_key(keys_.key_prefix());
  std::vector<std::string> counters;
  append_counters(counters, plan_.merged_fence);
  const RemergeCall call{.recovering_key = recovering, .fence_key = fence, .counters = counters};
  waiting_ = plan_.targets.size();
  writes_.open(core_.config().nodes, core_.clock().now());
  auto self = shared_from_this();
  for (std::size_t target : plan_.targets) {
    send_to(*core_.nodes()[target], call, false, writes_.started(), self, writes_.tag());
  }
}

void RecoveryOperation::finish(bool progressed) {
  if (finished_) return;
  finished_ = true;
  auto keep = shared_from_this();
  core_.finished(this);
  core_.recovery().finished(keys_.key_prefix(), progressed, plan_.reason);
}

}  // namespace redlock::detail
