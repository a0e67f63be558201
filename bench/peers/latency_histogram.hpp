// Latency percentiles in constant memory: samples (µs) fall into buckets
// 1 % wide, so a percentile is exact to within 1 %. The fixed-time cases
// complete 10^5 cycles and more; keeping every sample would grow the very
// peak RSS the drivers report by megabytes of harness data.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace redlock::bench::peers {

class LatencyHistogram {
 public:
  void add(double micros) {
    ++buckets_[bucket_of(micros)];
    ++count_;
  }
  void add_all(const std::vector<double>& samples) {
    for (const double sample : samples) add(sample);
  }
  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }

  // The upper bound of the bucket that holds the q-quantile; q in (0, 1].
  [[nodiscard]] double percentile(double q) const {
    if (count_ == 0) return 0.0;
    const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
      seen += buckets_[i];
      if (seen >= std::max<std::uint64_t>(rank, 1)) return upper_bound(i);
    }
    return upper_bound(buckets_.size() - 1);
  }

 private:
  static constexpr double kGrowth = 1.01;
  // 1.01^2000 µs is about 4.4e8 s: no cycle is longer.
  static constexpr std::size_t kBuckets = 2000;

  static std::size_t bucket_of(double micros) {
    if (micros <= 1.0) return 0;
    const auto index = static_cast<std::size_t>(std::ceil(std::log(micros) / std::log(kGrowth)));
    return std::min(index, kBuckets - 1);
  }
  static double upper_bound(std::size_t index) {
    return std::pow(kGrowth, static_cast<double>(index));
  }

  std::array<std::uint64_t, kBuckets> buckets_{};
  std::uint64_t count_ = 0;
};

}  // namespace redlock::bench::peers
