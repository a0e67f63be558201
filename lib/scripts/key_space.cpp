#include "scripts/key_space.hpp"

#include "protocol/hash_slot.hpp"

namespace redlock::detail {

KeyLayout key_layout(const QuorumConfig& config) noexcept {
  for (const NodeConfig& node : config.nodes) {
    if (!node.cluster.empty()) return KeyLayout::per_slot;
  }
  return KeyLayout::shared;
}

std::string per_slot_problem(const LockConfig& lock) {
  if (lock.lock_key.find("{prefix}") == std::string::npos) {
    return "lock_key must contain {prefix} when a member is a Redis Cluster (every key of a lock "
           "must share its slot's hash tag)";
  }
  if (lock.key_prefix.find_first_of("{}") != std::string::npos) {
    return "key_prefix must not contain '{' or '}' when a member is a Redis Cluster (the library "
           "puts each resource's hash tag after it)";
  }
  return {};
}

std::uint16_t resource_slot(std::string_view resource) noexcept { return hash_slot(resource); }

KeySpace::KeySpace(const LockConfig& lock, KeyLayout layout, std::string_view resource)
    : lock_(&lock), key_prefix_(lock.key_prefix) {
  if (layout == KeyLayout::shared) return;
  slot_ = resource_slot(resource);
  key_prefix_.append("{").append(slot_tag(*slot_)).append("}");
}

}  // namespace redlock::detail
