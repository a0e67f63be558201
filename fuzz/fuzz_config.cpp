// The quorum file reader (lib/config, docs/configuration.md): the fuzz bytes
// are the text of a quorum file, read by parse_config(), whose pre-scan
// (config/config_prescan.hpp) stands between them and toml++. Every input must
// give either a configuration that keeps the reader's promises or an error
// with a position inside the text; nothing may throw, leak or crash.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "redlock/config.hpp"

namespace {

constexpr std::string_view kSource = "fuzz.toml";

void check_config(const redlock::QuorumConfig& config) {
  REDLOCK_FUZZ_CHECK(config.source == kSource);
  REDLOCK_FUZZ_CHECK(!config.nodes.empty());
  for (const redlock::NodeConfig& node : config.nodes) {
    REDLOCK_FUZZ_CHECK(!node.host.empty());
    REDLOCK_FUZZ_CHECK(!node.name.empty());
    REDLOCK_FUZZ_CHECK(node.port != 0);
    REDLOCK_FUZZ_CHECK(node.db >= 0);
    REDLOCK_FUZZ_CHECK(node.min_replicas >= 0);
    REDLOCK_FUZZ_CHECK(redlock::effective_node_timeout(config.lock, node).count() > 0);
  }
  const redlock::LockConfig& lock = config.lock;
  REDLOCK_FUZZ_CHECK(lock.ttl.count() > 0);
  REDLOCK_FUZZ_CHECK(lock.drift_factor >= 0 && lock.drift_factor < 0.5);
  REDLOCK_FUZZ_CHECK(lock.retry_count >= -1);
  REDLOCK_FUZZ_CHECK(lock.reconnect_min <= lock.reconnect_max);
  REDLOCK_FUZZ_CHECK(redlock::effective_max_ttl(lock) >= lock.ttl);
}

void check_error(const redlock::ConfigError& error, std::string_view text) {
  REDLOCK_FUZZ_CHECK(error.file == kSource);
  REDLOCK_FUZZ_CHECK(!error.message.empty());
  const std::string shown = error.to_string();
  REDLOCK_FUZZ_CHECK(shown.starts_with(kSource));
  // A position, when there is one, is inside the text (one past its last
  // line at most: an error at the very end).
  const auto lines = static_cast<std::uint32_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  REDLOCK_FUZZ_CHECK(error.line <= lines);
  if (error.line == 0) REDLOCK_FUZZ_CHECK(error.column == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > redlock::fuzz::kMaxInputBytes) return -1;
  const std::string_view text = redlock::fuzz::as_text(data, size);
  const redlock::ConfigResult result = redlock::parse_config(text, kSource);
  if (redlock::fuzz::showing()) {
    std::fprintf(stderr, "%s\n",
                 result.ok()
                     ? ("ok: " + std::to_string(result.config->nodes.size()) + " nodes").c_str()
                     : result.error.to_string().c_str());
  }
  if (result.ok()) {
    check_config(*result.config);
  } else {
    check_error(result.error, text);
  }
  // A password in an address must not change what the reader says, once
  // toml++ has taken the text (before that, the password may not even be
  // inside a string).
  const bool valid_toml = result.ok() || !result.error.message.starts_with("invalid TOML");
  if (const auto masked = redlock::fuzz::with_passwords_masked(text, true); masked && valid_toml) {
    const redlock::ConfigResult same = redlock::parse_config(*masked, kSource);
    REDLOCK_FUZZ_CHECK(same.ok() == result.ok());
    REDLOCK_FUZZ_CHECK(same.error.to_string() == result.error.to_string());
  }
  return 0;
}
