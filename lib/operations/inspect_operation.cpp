#include "operations/inspect_operation.hpp"

#include <algorithm>
#include <string>

#include "protocol/majority_view.hpp"
#include "protocol/validity.hpp"
#include "scripts/reply_parse.hpp"
#include "scripts/script_calls.hpp"
#include "scripts/scripts.hpp"

namespace redlock::detail {

InspectOperation::InspectOperation(ClientCore& core, Resource resource, Callback callback)
    : Operation(core), resource_(std::move(resource)), callback_(std::move(callback)) {}

InspectOperation::InspectOperation(ClientCore& core, const Semaphore& semaphore, Callback callback)
    : Operation(core),
      resource_(semaphore.name()),
      permits_(semaphore.permits()),
      callback_(std::move(callback)) {}

void InspectOperation::fail_later(std::error_code error) {
  finished_ = true;
  core_.turn().post([self = shared_from_this(), this, error] { complete(error); });
}

void InspectOperation::start() {
  if (!core_.config_problem().empty()) return fail_later(make_error_code(errc::config_error));
  const bool bad_count = permits_ && (*permits_ < 1 || *permits_ > Semaphore::kMaxPermits);
  if (resource_.empty() || bad_count) return fail_later(make_error_code(errc::invalid_argument));
  const auto& configured = core_.config().nodes;
  result_.nodes.resize(configured.size());
  for (std::size_t i = 0; i < configured.size(); ++i) {
    result_.nodes[i].node = i;
    result_.nodes[i].name = configured[i].name;
  }
  const KeySpace keys = core_.keys_for(resource_.str());
  const std::string& prefix = keys.key_prefix();
  ScriptCall call;
  if (permits_) {
    const std::string count = permit_count_key(prefix, resource_.str());
    const std::string fence = fence_key(prefix);
    const std::string key_prefix = permit_key_prefix(prefix, resource_.str());
    const std::string fence_prefix = permit_fence_prefix(resource_.str());
    const std::string permits = std::to_string(*permits_);
    call = encode(InspectPermitsCall{.count_key = count,
                                     .fence_key = fence,
                                     .permit_key_prefix = key_prefix,
                                     .fence_field_prefix = fence_prefix,
                                     .permits = permits});
  } else {
    const std::string key = lock_key(keys, resource_.str());
    // A name whose lock key is one of the library's own keys is no lock.
    if (is_bookkeeping_key(prefix, key)) {
      return fail_later(make_error_code(errc::invalid_argument));
    }
    const std::string fence = fence_key(prefix);
    call = encode(
        InspectLockCall{.lock_key = key, .fence_key = fence, .fence_field = resource_.str()});
  }
  waiting_ = core_.nodes().size();
  round_.open(configured, core_.clock().now());
  auto self = shared_from_this();
  for (auto& node : core_.nodes()) {
    node->send_call(call, false, round_.started(), self, round_.tag());
  }
}

void InspectOperation::on_response(std::size_t node, std::uint32_t tag,
                                   const NodeResponse& response) {
  if (finished_ || !round_.counts(tag, response)) return;
  (void)parse_inspect_response(response, permits_.has_value(), result_.nodes[node]);
  if (--waiting_ == 0) decide();
}

void InspectOperation::decide() {
  const RoundTiming timing = round_.close(core_.clock().now());
  const std::size_t quorum = core_.quorum();
  std::vector<const NodeInspection*> answered;
  for (const NodeInspection& node : result_.nodes) {
    if (node.answered) answered.push_back(&node);
  }
  if (answered.size() < quorum) {
    complete(make_error_code(errc::no_quorum));
    return;
  }
  const Microseconds elapsed = timing.elapsed();
  if (!permits_) {
    std::vector<KeyView> keys;
    for (const NodeInspection* node : answered) keys.push_back(node->key);
    const Milliseconds ttl_read{std::max<std::int64_t>(
        0, std::max_element(keys.begin(), keys.end(), [](const KeyView& a, const KeyView& b) {
             return a.pttl_ms < b.pttl_ms;
           })->pttl_ms)};
    result_.holder = majority_holder(keys, quorum, elapsed, core_.drift_for(ttl_read));
    result_.readers = majority_readers(keys, quorum, elapsed, core_.drift_for(ttl_read));
    result_.fence = majority_fence(keys, quorum);
    complete({});
    return;
  }
  std::size_t span = 0;
  for (const NodeInspection* node : answered) span = std::max(span, node->permits.size());
  for (std::size_t j = 0; j < span; ++j) {
    std::vector<KeyView> keys;
    Milliseconds ttl_read{0};
    for (const NodeInspection* node : answered) {
      keys.push_back(j < node->permits.size() ? node->permits[j] : KeyView{});
      ttl_read = std::max(ttl_read, Milliseconds(std::max<std::int64_t>(0, keys.back().pttl_ms)));
    }
    std::optional<HolderView> holder =
        majority_holder(keys, quorum, elapsed, core_.drift_for(ttl_read));
    result_.fence = std::max(result_.fence, majority_fence(keys, quorum));
    if (!holder) continue;
    holder->permit = static_cast<std::uint32_t>(j);
    result_.holders.push_back(std::move(*holder));
  }
  complete({});
}

void InspectOperation::complete(std::error_code error) {
  auto keep = shared_from_this();
  core_.finished(this);
  finished_ = true;
  result_.error = error;
  deliver(callback_, std::move(result_));
}

void InspectOperation::cancel() {
  if (finished_) return;
  if (round_.is_open()) (void)round_.close(core_.clock().now());
  fail_later(make_error_code(errc::cancelled));
}

void InspectOperation::abort(std::error_code why) {
  if (finished_) return;
  complete(why);
}

}  // namespace redlock::detail
