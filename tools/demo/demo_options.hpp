// The demo's command line. Parsing never exits: it returns the options or
// one line saying what was wrong, and main() decides the exit code.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "redlock/types.hpp"

namespace redlock::demo {

struct StoreAddress {
  std::string host;
  std::uint16_t port = 6379;
};

struct DemoOptions {
  // The quorum file. Unset: $REDLOCK_CONFIG, then ./redlock.toml.
  std::optional<std::filesystem::path> config_path;
  // The redis-server that holds the counter (not one of the lock nodes).
  StoreAddress store;
  // Worker threads, split evenly across two BlockingClients.
  int workers = 16;
  // Read-increment-write cycles per worker, one lock acquisition each.
  int increments = 50;
  // Lock TTL. Unset: the quorum file's [lock] ttl_ms.
  std::optional<Milliseconds> ttl;
  // How long one acquire may wait for the lock, retries included.
  Milliseconds wait{30000};
  bool help = false;
};

struct ParsedOptions {
  std::optional<DemoOptions> options;
  std::string error;  // one line, when !options
};

[[nodiscard]] ParsedOptions parse_options(std::span<char* const> args);

extern const char* const kUsage;

}  // namespace redlock::demo
