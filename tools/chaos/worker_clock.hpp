// The chaos client's own clock (a client clock fault, `clock_rate`) and
// its conversion back to the history's reference time.
#pragma once

#include <chrono>
#include <climits>
#include <cstdint>

#include "history.hpp"
#include "redlock/clock.hpp"

namespace redlock::chaos {

// The client's own clock: true time scaled by `rate` from the start, so a
// fast (rate > 1) or slow (rate < 1) client clock acts on every validity
// computation of the library. Conversions back to reference time let the
// history record the client's claims on the shared time line.
class RateClock final : public MonotonicClock {
 public:
  explicit RateClock(double rate) : rate_(rate) { pair_clocks(); }

  [[nodiscard]] TimePoint now() const noexcept override {
    if (rate_ == 1.0) return SteadyClock::now();
    const auto real = SteadyClock::now() - base_;
    return base_ + std::chrono::duration_cast<SteadyClock::duration>(real * rate_);
  }

  // The history's time line is CLOCK_MONOTONIC; the library's clock counts
  // from CLOCK_BOOTTIME (types.hpp), which is ahead of it by however long
  // the host has been suspended. Both were read together at construction
  // (pair_clocks), and no suspend happens during a run, so the offset holds.
  [[nodiscard]] std::int64_t to_reference_ns(TimePoint client_time) const noexcept {
    const auto scaled = client_time - base_;
    const auto real = std::chrono::duration_cast<std::chrono::nanoseconds>(scaled / rate_);
    return reference_base_ns_ + real.count();
  }

 private:
  // Reads the library's clock between two readings of the reference clock
  // and keeps the tightest of several tries, the reference instant taken
  // at the middle. Two plain reads one after the other could be split by
  // the scheduler by a millisecond or more on a loaded machine, and every
  // time this client records would then be off by as much against the
  // other processes' (an ordering invariant such as C16 compares them to
  // the sub-millisecond).
  void pair_clocks() noexcept {
    std::int64_t tightest = INT64_MAX;
    for (int attempt = 0; attempt < 64; ++attempt) {
      const std::int64_t before = reference_now_ns();
      const TimePoint library = SteadyClock::now();
      const std::int64_t after = reference_now_ns();
      if (after - before < tightest) {
        tightest = after - before;
        base_ = library;
        reference_base_ns_ = before + (after - before) / 2;
      }
      if (tightest < 2000) break;  // within 1 µs either way
    }
  }

  double rate_;
  TimePoint base_{};
  std::int64_t reference_base_ns_ = 0;
};

}  // namespace redlock::chaos
