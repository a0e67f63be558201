// Distinct types for the values a lock call takes, so that a resource name,
// a lock value and a node name can never be passed in each other's place.
#pragma once

#include <time.h>

#include <chrono>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "redlock/export.hpp"

namespace redlock {

// The clock all timing is measured on: CLOCK_BOOTTIME on Linux. Like
// std::chrono::steady_clock (CLOCK_MONOTONIC) it never goes backwards and is
// never the wall clock, so a step of the system time cannot lengthen or
// shorten a lock. Unlike it, it keeps counting while the host is suspended
// (or its VM paused for a snapshot), so a client suspended between its first
// SET and its validity check counts the suspension as elapsed time instead
// of believing its lock still valid. Where CLOCK_BOOTTIME does not exist,
// CLOCK_MONOTONIC.
struct BootClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<BootClock>;
  static constexpr bool is_steady = true;

  [[nodiscard]] static time_point now() noexcept {
    timespec reading{};
#ifdef CLOCK_BOOTTIME
    ::clock_gettime(CLOCK_BOOTTIME, &reading);
#else
    ::clock_gettime(CLOCK_MONOTONIC, &reading);
#endif
    return time_point(std::chrono::seconds(reading.tv_sec) + duration(reading.tv_nsec));
  }
};

using SteadyClock = BootClock;
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

// A counting semaphore: at most `permits` holders at once, each holding
// one permit (0..permits-1) — an ordinary quorum lock of its own
// (docs/algorithm.md, "Semaphores"). Every client of one semaphore must name
// the same count; the nodes record it while a permit is held, and refuse
// another count (errc::invalid_argument) until no permit is held.
class Semaphore {
 public:
  // The most permits a semaphore may have.
  static constexpr std::uint32_t kMaxPermits = 1024;
  Semaphore(std::string name, std::uint32_t permits) : name_(std::move(name)), permits_(permits) {}
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::uint32_t permits() const noexcept { return permits_; }
  friend auto operator<=>(const Semaphore&, const Semaphore&) = default;

 private:
  std::string name_;
  std::uint32_t permits_;
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
