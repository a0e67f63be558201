#include "quorum_setup.hpp"

#include <filesystem>
#include <set>

#include "report.hpp"

namespace redlock::cli {

std::optional<QuorumConfig> load_quorum(const Invocation& invocation) {
  ConfigResult loaded;
  if (!invocation.node_addresses.empty()) {
    loaded = config_from_addresses(invocation.node_addresses);
  } else {
    std::optional<std::filesystem::path> explicit_path;
    if (invocation.config_path) explicit_path = std::filesystem::path(*invocation.config_path);
    // The library's messages name no flag (a program calls it too); the
    // CLI's own say which flag to use.
    if (explicit_path && explicit_path->empty()) {
      print_error("--config: expected a file path, got an empty one");
      return std::nullopt;
    }
    if (!find_config_file(explicit_path)) {
      print_error(
          "no configuration file: expected --config FILE, the REDLOCK_CONFIG environment "
          "variable, or ./redlock.toml");
      return std::nullopt;
    }
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
  options.shared = invocation.shared;
  if (invocation.fair) options.fair = true;
  return options;
}

namespace {

std::vector<Resource> resources_of(const Invocation& invocation) {
  std::vector<Resource> resources;
  resources.reserve(invocation.resources.size());
  for (const std::string& name : invocation.resources) resources.emplace_back(name);
  return resources;
}

Semaphore semaphore_of(const Invocation& invocation) {
  return Semaphore(*invocation.semaphore, invocation.permits.value_or(0));
}

}  // namespace

std::string keys_named(const Invocation& invocation) {
  if (invocation.subcommand == Subcommand::campaign) return invocation.name.value_or("");
  if (invocation.semaphore) return *invocation.semaphore;
  return invocation.resource.value_or("");
}

std::string lock_target(const Invocation& invocation) {
  if (invocation.subcommand == Subcommand::campaign) {
    return "election " + printable(invocation.name.value_or(""));
  }
  if (invocation.semaphore) {
    return "semaphore " + printable(*invocation.semaphore) +
           (invocation.permit ? " permit " + std::to_string(*invocation.permit) : std::string());
  }
  if (invocation.shared) return "reader of " + printable(invocation.resource.value_or(""));
  std::string target;
  for (const std::string& name : invocation.resources) {
    if (!target.empty()) target += ", ";
    target += printable(name);
  }
  return target.empty() ? printable(invocation.resource.value_or("")) : target;
}

AcquireResult acquire_named(BlockingClient& client, const Invocation& invocation,
                            const AcquireOptions& options) {
  if (invocation.semaphore) return client.acquire(semaphore_of(invocation), options);
  if (invocation.resources.size() > 1) return client.acquire(resources_of(invocation), options);
  return client.acquire(Resource(invocation.resource.value_or("")), options);
}

Guard lock_named(BlockingClient& client, const Invocation& invocation, const GuardOptions& options,
                 std::stop_token stop) {
  if (invocation.subcommand == Subcommand::campaign) {
    CampaignOptions campaign;
    campaign.payload = invocation.payload.value_or("");
    campaign.wait = invocation.wait;  // unset: until elected
    campaign.ttl = invocation.ttl;
    campaign.on_lost = options.on_lost;
    return client.campaign(Election(invocation.name.value_or("")), campaign, std::move(stop));
  }
  if (invocation.semaphore) return client.lock(semaphore_of(invocation), options, std::move(stop));
  if (invocation.resources.size() > 1) {
    return client.lock(resources_of(invocation), options, std::move(stop));
  }
  return client.lock(Resource(invocation.resource.value_or("")), options, std::move(stop));
}

std::string permits_mismatch(const Invocation& invocation, const std::vector<NodeOutcome>& nodes) {
  if (!invocation.semaphore || !invocation.permits) return "";
  std::set<std::int64_t> recorded;
  for (const NodeOutcome& node : nodes) {
    if (node.status == NodeStatus::permits_differ) recorded.insert(node.holder_ttl_ms);
  }
  if (recorded.empty()) return "";
  std::string counts;
  for (const std::int64_t count : recorded) {
    if (!counts.empty()) counts += " or ";
    counts += std::to_string(count);
  }
  return "--permits " + std::to_string(*invocation.permits) + " differs from the count the nodes " +
         "record for this semaphore (" + counts +
         " permits) while a permit is held: every client of a semaphore must name the same "
         "count, and it can change only once no permit is held";
}

Lock lock_from_value(const Invocation& invocation, Milliseconds ttl) {
  const TimePoint now = SteadyClock::now();
  const std::string& name =
      invocation.semaphore ? *invocation.semaphore : invocation.resource.value_or("");
  Lock lock{Resource(name), LockValue(invocation.value.value_or("")), ttl, now, now + ttl,
            std::nullopt};
  if (invocation.semaphore) {
    lock.kind = LockKind::permit;
    lock.permit = invocation.permit.value_or(0);
    lock.permits = invocation.permits.value_or(*lock.permit + 1);
  } else if (invocation.resources.size() > 1) {
    lock.kind = LockKind::multi;
    lock.resources = resources_of(invocation);
  } else if (invocation.shared) {
    lock.kind = LockKind::shared;
  }
  // (Also on a permit or a set, which their kinds refuse: a mistake said,
  // not dropped.)
  lock.shared = invocation.shared;
  return lock;
}

}  // namespace redlock::cli
