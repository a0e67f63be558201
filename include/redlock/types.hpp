// Distinct types for the values a lock call takes, so that a resource name,
// a lock value and a node name can never be passed in each other's place.
#pragma once

#include <chrono>
#include <compare>
#include <string>
#include <string_view>
#include <utility>

#include "redlock/export.hpp"

namespace redlock {

// The monotonic clock all timing is measured on. Never the wall clock.
using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;
using Milliseconds = std::chrono::milliseconds;
using Microseconds = std::chrono::microseconds;

// The name of the thing being locked, e.g. "nightly-report". Any byte
// string; the key on each node is `{prefix}lock:{resource}`.
class Resource {
 public:
  explicit Resource(std::string name) : name_(std::move(name)) {}
  [[nodiscard]] const std::string& str() const noexcept { return name_; }
  [[nodiscard]] bool empty() const noexcept { return name_.empty(); }
  friend auto operator<=>(const Resource&, const Resource&) = default;

 private:
  std::string name_;
};

// The random value that identifies one holding of a lock: 128 bits from the
// OS CSPRNG, as 32 hex characters. Only the holder knows it, so only the
// holder can extend or release the lock.
class LockValue {
 public:
  explicit LockValue(std::string value) : value_(std::move(value)) {}
  // A fresh value from getrandom(2).
  [[nodiscard]] REDLOCK_API static LockValue random();
  [[nodiscard]] const std::string& str() const noexcept { return value_; }
  [[nodiscard]] bool empty() const noexcept { return value_.empty(); }
  friend auto operator<=>(const LockValue&, const LockValue&) = default;

 private:
  std::string value_;
};

}  // namespace redlock
