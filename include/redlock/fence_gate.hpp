// The fence gate: the resource side of fencing, for a resource kept in Redis.
//
// A lock alone cannot stop a holder that paused past its validity (a GC
// pause, SIGSTOP, a slow network) from writing after a newer holder. The
// resource must check: every operation carries the holder's fencing token,
// and one Lua script applies it only if the token is at least the resource's
// high-water mark, raising the mark in the same atomic step. An operation
// with a lower token is refused with errc::fenced_out.
//
// Fence every operation of the critical section, reads included: a read
// raises the mark too, so an older holder cannot write back a value computed
// from a read made before a newer holder's. Then read-modify-write loses no
// update.
//
// Keys: the data at `key`, its high-water mark at `key` + ":fence" (plain
// keys on the store; no expiry). The store is one Redis server (or a
// primary), not one of the lock nodes.
//
// Threads: a FenceGate is one connection; use one per thread. Every call
// is bounded by the timeout given at construction.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "redlock/config.hpp"
#include "redlock/error.hpp"
#include "redlock/export.hpp"
#include "redlock/metrics.hpp"

namespace redlock {

struct FencedResult {
  // Empty when applied; errc::fenced_out when refused; errc::node_error or
  // errc::timeout when the store failed (see detail).
  std::error_code error;
  // get: the value (nullopt when the key does not exist).
  std::optional<std::string> value;
  // incr_by: the new value; append: the list's new length.
  long long integer = 0;
  // The resource's high-water mark after the call.
  std::uint64_t high_water_mark = 0;
  std::string detail;
  [[nodiscard]] bool ok() const noexcept { return !error; }
};

class REDLOCK_API FenceGate {
 public:
  // Connects (with AUTH / SELECT from `store`) lazily, on first use and again
  // after a failure.
  // `metrics`, if given, counts refused operations (fenced_out).
  explicit FenceGate(NodeConfig store, Milliseconds timeout = Milliseconds(1000),
                     std::shared_ptr<Metrics> metrics = nullptr);
  ~FenceGate();
  FenceGate(const FenceGate&) = delete;
  FenceGate& operator=(const FenceGate&) = delete;
  FenceGate(FenceGate&&) noexcept;
  FenceGate& operator=(FenceGate&&) noexcept;

  [[nodiscard]] FencedResult get(std::string_view key, std::uint64_t token);
  [[nodiscard]] FencedResult set(std::string_view key, std::uint64_t token, std::string_view value);
  [[nodiscard]] FencedResult incr_by(std::string_view key, std::uint64_t token, long long delta);
  // Appends to a list (RPUSH): an append-only log.
  [[nodiscard]] FencedResult append(std::string_view key, std::uint64_t token,
                                    std::string_view entry);
  // The whole log (LRANGE 0 -1), fenced like a read.
  [[nodiscard]] FencedResult read_log(std::string_view key, std::uint64_t token,
                                      std::vector<std::string>& entries);

  // The gate's Lua script, for stores reached through another client:
  // KEYS = {key, key .. ":fence"}, ARGV = {token, op, args...} with op one of
  // get, set, incrby, rpush, lrange. Returns {1, result} or {0, mark}.
  [[nodiscard]] static std::string_view script() noexcept;

 private:
  class Connection;
  FencedResult run(std::string_view key, std::uint64_t token, std::string_view op,
                   std::string_view argument, std::vector<std::string>* entries);
  std::unique_ptr<Connection> connection_;
  std::shared_ptr<Metrics> metrics_;
};

}  // namespace redlock
