#include "quorum_setup.hpp"

#include <filesystem>

#include "report.hpp"

namespace redlock::cli {

std::optional<QuorumConfig> load_quorum(const Invocation& invocation) {
  ConfigResult loaded;
  if (!invocation.node_addresses.empty()) {
    loaded = config_from_addresses(invocation.node_addresses);
  } else {
    std::optional<std::filesystem::path> explicit_path;
    if (invocation.config_path) explicit_path = std::filesystem::path(*invocation.config_path);
    loaded = load_default_config(explicit_path);
  }
  if (!loaded.ok()) {
    print_error(loaded.error.to_string());
    return std::nullopt;
  }
  return std::move(loaded.config);
}

Milliseconds effective_ttl(const Invocation& invocation, const QuorumConfig& config) noexcept {
  return invocation.ttl.value_or(config.lock.ttl);
}

std::string ttl_problem(const Invocation& invocation, const QuorumConfig& config) {
  if (!invocation.ttl) return "";
  if (!ttl_can_be_valid(config.lock, *invocation.ttl)) {
    // The rule the quorum file's ttl_ms is held to (lock.ttl_ms).
    return "--ttl " + std::to_string(invocation.ttl->count()) +
           " can never give a valid lock: minus the drift (ttl * drift_factor + drift_ms = " +
           std::to_string(lock_drift(config.lock, *invocation.ttl).count()) +
           " ms) it is not above min_validity_ms (" +
           std::to_string(config.lock.min_validity.count()) + " ms)";
  }
  if (!config.lock.amnesia_defence) return "";
  const Milliseconds max_ttl = effective_max_ttl(config.lock);
  if (*invocation.ttl <= max_ttl) return "";
  return "--ttl " + std::to_string(invocation.ttl->count()) + " exceeds the quorum's max_ttl (" +
         std::to_string(max_ttl.count()) + " ms, lock.max_ttl_ms or else lock.ttl_ms in " +
         config.source + "): a node recovering from data loss only waits that long";
}

AcquireOptions acquire_options(const Invocation& invocation) {
  AcquireOptions options;
  options.ttl = invocation.ttl;
  options.wait = invocation.wait;
  if (invocation.fenced) options.fenced = true;
  return options;
}

Lock lock_from_value(const Invocation& invocation, Milliseconds ttl) {
  const TimePoint now = SteadyClock::now();
  return Lock{Resource(invocation.resource.value_or("")),
              LockValue(invocation.value.value_or("")),
              ttl,
              now,
              now + ttl,
              std::nullopt};
}

}  // namespace redlock::cli
