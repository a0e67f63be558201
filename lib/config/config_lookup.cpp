// Which quorum file applies: the caller's explicit path (the CLI's --config
// FILE), then $REDLOCK_CONFIG, then ./redlock.toml (docs/configuration.md).
// An explicit choice is returned even if the file does not exist, so that
// loading it reports why; only the last, implicit candidate is skipped when
// it is absent. The messages name no command-line flag: a program calls
// this too, and the CLI words its own (tools/redlock/quorum_setup.cpp).
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "redlock/config.hpp"

namespace redlock {
namespace {

constexpr const char* kConfigVariable = "REDLOCK_CONFIG";
constexpr const char* kLocalConfigFile = "redlock.toml";

std::optional<std::filesystem::path> find_config_file_or_throw(
    const std::optional<std::filesystem::path>& explicit_path) {
  if (explicit_path) return *explicit_path;
  // The library never writes the environment, so reading it here is safe.
  // NOLINTNEXTLINE(concurrency-mt-unsafe)
  if (const char* from_environment = std::getenv(kConfigVariable);
      from_environment != nullptr && *from_environment != '\0') {
    return std::filesystem::path(from_environment);
  }
  std::error_code ignored;  // An unreadable directory means "no local file".
  std::filesystem::path local(kLocalConfigFile);
  if (std::filesystem::exists(local, ignored)) return local;
  return std::nullopt;
}

}  // namespace

std::optional<std::filesystem::path> find_config_file(
    const std::optional<std::filesystem::path>& explicit_path) {
  try {
    return find_config_file_or_throw(explicit_path);
  } catch (const std::exception&) {
    // Only allocation can fail here; with no memory for a path there is no
    // file to name either.
    return std::nullopt;
  }
}

ConfigResult load_default_config(const std::optional<std::filesystem::path>& explicit_path) {
  try {
    if (explicit_path && explicit_path->empty()) {
      return ConfigResult{std::nullopt,
                          ConfigError{"", 0, 0, "expected a file path, got an empty one"}};
    }
    if (const auto file = find_config_file(explicit_path)) return load_config(*file);
    return ConfigResult{
        std::nullopt, ConfigError{"", 0, 0,
                                  "no configuration file: expected the REDLOCK_CONFIG environment "
                                  "variable or ./redlock.toml"}};
  } catch (const std::exception& error) {
    return ConfigResult{std::nullopt,
                        ConfigError{"", 0, 0, std::string("internal error: ") + error.what()}};
  }
}

}  // namespace redlock
