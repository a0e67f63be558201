// The quorum file's [lock] table: its keys (lock_key's pattern checked by
// lock_key_pattern.hpp), and the rules between them
// (node timeout and minimum validity below the TTL, a validity left after
// the drift, a maximum TTL not below the TTL, reconnect bounds in order).
#include <algorithm>

#include "config/config_internal.hpp"
#include "config/lock_key_pattern.hpp"

namespace redlock::detail {
namespace {

constexpr std::string_view kLockKeys[] = {"ttl_ms",
                                          "drift_factor",
                                          "drift_ms",
                                          "min_validity_ms",
                                          "node_timeout_ms",
                                          "connect_timeout_ms",
                                          "retry_count",
                                          "retry_delay_ms",
                                          "key_prefix",
                                          "lock_key",
                                          "fenced",
                                          "fair",
                                          "reconnect_min_ms",
                                          "reconnect_max_ms",
                                          "max_ttl_ms",
                                          "amnesia_defence",
                                          "strict_persistence",
                                          "strict_transport",
                                          "release_at_majority"};

}  // namespace

bool QuorumFileReader::read_lock(const toml::node& value) {
  if (!reader_.read_table(value, "lock", "a table ([lock])", lock_table_)) return false;
  const auto entries = entries_in_file_order(*lock_table_);
  return std::all_of(entries.begin(), entries.end(), [this](const auto& entry) {
    return read_lock_key(*entry.first, *entry.second);
  });
}

bool QuorumFileReader::read_lock_key(const toml::key& key, const toml::node& value) {
  const std::string_view name = key.str();
  const std::string path = "lock." + std::string(name);
  if (name == "ttl_ms") {
    return reader_.read_milliseconds(value, path, kPositiveMilliseconds, lock_.ttl);
  }
  if (name == "drift_factor") {
    return reader_.read_number(value, path, kDriftFactor, lock_.drift_factor);
  }
  if (name == "drift_ms") {
    return reader_.read_milliseconds(value, path, kNonNegativeMilliseconds, lock_.drift_ms);
  }
  if (name == "min_validity_ms") {
    return reader_.read_milliseconds(value, path, kNonNegativeMilliseconds, lock_.min_validity);
  }
  if (name == "node_timeout_ms") {
    return reader_.read_milliseconds(value, path, kPositiveMilliseconds, lock_.node_timeout);
  }
  if (name == "connect_timeout_ms") {
    return reader_.read_milliseconds(value, path, kPositiveMilliseconds, lock_.connect_timeout);
  }
  if (name == "retry_count") return reader_.read_int(value, path, kRetryCount, lock_.retry_count);
  if (name == "retry_delay_ms") {
    return reader_.read_milliseconds(value, path, kNonNegativeMilliseconds, lock_.retry_delay);
  }
  if (name == "key_prefix") return reader_.read_string(value, path, true, lock_.key_prefix);
  if (name == "lock_key") {
    if (!reader_.read_string(value, path, true, lock_.lock_key)) return false;
    const std::string problem = lock_key_pattern_problem(lock_.lock_key);
    return problem.empty() || reader_.fail(value.source(), path, problem);
  }
  if (name == "fenced") return reader_.read_bool(value, path, lock_.fenced);
  if (name == "fair") return reader_.read_bool(value, path, lock_.fair);
  if (name == "reconnect_min_ms") {
    return reader_.read_milliseconds(value, path, kPositiveMilliseconds, lock_.reconnect_min);
  }
  if (name == "reconnect_max_ms") {
    return reader_.read_milliseconds(value, path, kPositiveMilliseconds, lock_.reconnect_max);
  }
  if (name == "max_ttl_ms") {
    return reader_.read_milliseconds(value, path, kPositiveMilliseconds, lock_.max_ttl);
  }
  if (name == "amnesia_defence") return reader_.read_bool(value, path, lock_.amnesia_defence);
  if (name == "strict_persistence") {
    return reader_.read_bool(value, path, lock_.strict_persistence);
  }
  if (name == "strict_transport") return reader_.read_bool(value, path, lock_.strict_transport);
  if (name == "release_at_majority") {
    return reader_.read_bool(value, path, lock_.release_at_majority);
  }
  return reader_.fail(key.source(), path, unknown_key_message(name, kLockKeys));
}

// "ttl_ms (10000)" or "ttl_ms (10000, the default)".
std::string QuorumFileReader::describe_lock_setting(std::string_view key,
                                                    Milliseconds value) const {
  const bool written = lock_table_ != nullptr && lock_table_->contains(key);
  return std::string(key) + " (" + std::to_string(value.count()) +
         (written ? ")" : ", the default)");
}

bool QuorumFileReader::check_lock_rules() {
  const Milliseconds ttl = lock_.ttl;
  if (lock_.min_validity >= ttl) {
    return reader_.fail(where(lock_table_, "min_validity_ms"), "lock.min_validity_ms",
                        "expected less than " + describe_lock_setting("ttl_ms", ttl) + ", got " +
                            std::to_string(lock_.min_validity.count()));
  }
  if (lock_.node_timeout >= ttl) {
    return reader_.fail(where(lock_table_, "node_timeout_ms"), "lock.node_timeout_ms",
                        "expected less than " + describe_lock_setting("ttl_ms", ttl) + ", got " +
                            std::to_string(lock_.node_timeout.count()));
  }
  // validity = ttl - elapsed - drift must exceed min_validity; when it
  // cannot even with zero elapsed time, no acquire can ever succeed.
  if (!ttl_can_be_valid(lock_, ttl)) {
    const Milliseconds drift = lock_drift(lock_, ttl);
    // Point at the drift setting the user wrote, or at the TTL when the
    // default drift is what a too-short TTL cannot carry.
    const char* key = "ttl_ms";
    for (const char* candidate : {"drift_ms", "drift_factor"}) {
      if (lock_table_ != nullptr && lock_table_->contains(candidate)) {
        key = candidate;
        break;
      }
    }
    return reader_.fail(where(lock_table_, key), std::string("lock.") + key,
                        "no lock could ever be acquired: " + describe_lock_setting("ttl_ms", ttl) +
                            " minus the drift (ttl_ms * drift_factor + drift_ms = " +
                            std::to_string(drift.count()) + " ms) is not above " +
                            describe_lock_setting("min_validity_ms", lock_.min_validity));
  }
  if (lock_.max_ttl.count() > 0 && lock_.max_ttl < ttl) {
    return reader_.fail(where(lock_table_, "max_ttl_ms"), "lock.max_ttl_ms",
                        "expected at least " + describe_lock_setting("ttl_ms", ttl) + ", got " +
                            std::to_string(lock_.max_ttl.count()));
  }
  if (lock_.reconnect_min > lock_.reconnect_max) {
    const bool min_written = lock_table_ != nullptr && lock_table_->contains("reconnect_min_ms");
    const char* key = min_written ? "reconnect_min_ms" : "reconnect_max_ms";
    return reader_.fail(where(lock_table_, key), std::string("lock.") + key,
                        "expected reconnect_min_ms <= reconnect_max_ms, got " +
                            describe_lock_setting("reconnect_min_ms", lock_.reconnect_min) + " > " +
                            describe_lock_setting("reconnect_max_ms", lock_.reconnect_max));
  }
  return true;
}

}  // namespace redlock::detail
