// What the examples share: their flags, reading the quorum, and the
// exit codes. Each example includes this and keeps only its own use case.
//
// Every example takes the quorum the same way the `redlock` tool does:
//   --config FILE          a quorum file (docs/configuration.md)
//   --node HOST:PORT ...   the nodes inline, one flag per node
// and with neither, $REDLOCK_CONFIG, else ./redlock.toml.
#pragma once

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "redlock/redlock.hpp"

namespace example {

// sysexits.h values, as the `redlock` tool uses them, so a scheduler can
// tell "try later" (75) from "the lock went away under us" (69).
namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int usage = 64;
inline constexpr int lost = 69;
inline constexpr int not_acquired = 75;
inline constexpr int config = 78;
}  // namespace exit_code

struct Flags {
  std::optional<std::filesystem::path> config_file;
  std::vector<std::string> nodes;
  std::map<std::string, std::string, std::less<>> values;  // the example's own flags
  std::string error;                                       // a usage error, if any

  [[nodiscard]] std::string value(std::string_view name, std::string_view fallback) const {
    const auto found = values.find(name);
    return found == values.end() ? std::string(fallback) : found->second;
  }
  // The flag as a number in [min, max]; `fallback` when absent, nullopt
  // when it is not such a number.
  [[nodiscard]] std::optional<long long> number(std::string_view name, long long fallback,
                                                long long min, long long max) const {
    const auto found = values.find(name);
    if (found == values.end()) return fallback;
    const std::string& text = found->second;
    long long parsed = 0;
    const auto [end, failure] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (failure != std::errc() || end != text.data() + text.size() || parsed < min ||
        parsed > max) {
      return std::nullopt;
    }
    return parsed;
  }
};

// Parses "--flag value" pairs: the quorum flags plus the example's `own`.
inline Flags parse_flags(int argc, char** argv, const std::vector<std::string_view>& own) {
  Flags flags;
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size() && flags.error.empty(); i += 2) {
    const std::string_view name = args[i];
    if (i + 1 == args.size()) {
      flags.error = std::string(name) + " needs a value";
    } else if (name == "--config") {
      flags.config_file = std::filesystem::path(args[i + 1]);
    } else if (name == "--node") {
      flags.nodes.emplace_back(args[i + 1]);
    } else if (std::find(own.begin(), own.end(), name) != own.end()) {
      flags.values.insert_or_assign(std::string(name), std::string(args[i + 1]));
    } else {
      flags.error = "unknown flag " + std::string(name);
    }
  }
  if (flags.error.empty() && flags.config_file && !flags.nodes.empty()) {
    flags.error = "--config and --node exclude each other";
  }
  return flags;
}

// Prints what was wrong and the synopsis; returns the usage exit code.
inline int usage(const Flags& flags, std::string_view synopsis) {
  std::cerr << (flags.error.empty() ? "a flag is missing or has an invalid value" : flags.error)
            << '\n'
            << "usage: " << synopsis << '\n';
  return exit_code::usage;
}

// The quorum from --node flags, else from the quorum file. Errors name the
// file, line and column; they are printed here, so callers just exit 78.
inline std::optional<redlock::QuorumConfig> load_quorum(const Flags& flags) {
  redlock::ConfigResult loaded = flags.nodes.empty()
                                     ? redlock::load_default_config(flags.config_file)
                                     : redlock::config_from_addresses(flags.nodes);
  if (!loaded.ok()) {
    std::cerr << "redlock: " << loaded.error.to_string() << '\n';
    return std::nullopt;
  }
  return std::move(loaded.config);
}

// The exit code for a lock that was not taken. Only a bad configuration or
// argument is permanent; busy, no quorum or timeouts all mean "try later".
inline int exit_code_for(std::error_code error) {
  if (error == redlock::errc::config_error) return exit_code::config;
  if (error == redlock::errc::invalid_argument) return exit_code::usage;
  return exit_code::not_acquired;
}

}  // namespace example
