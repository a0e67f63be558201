#include "protocol/retry_policy.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "protocol/random_value.hpp"

namespace redlock::detail {

namespace {

// A draw outside [0, 1) is read as 0, so a bad source never stretches a pause.
double clamp_unit(double uniform01) noexcept {
  return uniform01 >= 0.0 && uniform01 < 1.0 ? uniform01 : 0.0;
}

Microseconds scaled(Microseconds base, double factor) noexcept {
  return Microseconds(static_cast<Microseconds::rep>(static_cast<double>(base.count()) * factor));
}

}  // namespace

std::optional<Microseconds> next_retry_delay(const RetryPlan& plan, int attempts_made,
                                             TimePoint now, double uniform01) noexcept {
  const int retries_done = attempts_made - 1;
  if (plan.max_retries >= 0 && retries_done >= plan.max_retries) return std::nullopt;
  if (plan.max_retries < 0 && !plan.deadline) return std::nullopt;  // unbounded: refuse
  if (plan.deadline && now >= *plan.deadline) return std::nullopt;

  Microseconds delay = scaled(Microseconds(plan.mean_delay) * 2, clamp_unit(uniform01));
  if (plan.deadline) {
    const auto until_deadline = std::chrono::floor<Microseconds>(*plan.deadline - now);
    if (delay > until_deadline) delay = until_deadline;
  }
  return delay;
}

Microseconds split_retry_pause(Microseconds round_trip, double uniform01) noexcept {
  if (round_trip.count() <= 0) return Microseconds(0);
  return scaled(round_trip, kSplitRetrySpan * clamp_unit(uniform01));
}

Microseconds courtesy_pause(const RetryPlan& plan, TimePoint now,
                            std::optional<Microseconds> contended_round_trip,
                            double uniform01) noexcept {
  if (!contended_round_trip || contended_round_trip->count() <= 0) return Microseconds(0);
  if (plan.max_retries == 0) return Microseconds(0);
  Microseconds pause = scaled(*contended_round_trip, 3.0 + 2.0 * clamp_unit(uniform01));
  pause = std::min<Microseconds>(pause, plan.mean_delay);
  if (plan.deadline) {
    const auto until_deadline = std::chrono::floor<Microseconds>(*plan.deadline - now);
    pause = std::min(pause, std::max(until_deadline, Microseconds(0)));
  }
  return pause;
}

double random_unit() noexcept {
  std::uint64_t bits = 0;
  fill_random(reinterpret_cast<std::uint8_t*>(&bits), sizeof bits);
  // 53 random bits scaled into [0, 1).
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

void RecentContention::note(std::string_view resource, TimePoint now, int retries,
                            Microseconds round_trip) {
  const double sample = retries > 0 ? static_cast<double>(retries) : 0.0;
  auto found = entries_.find(resource);
  if (found == entries_.end()) {
    if (sample == 0.0) return;
    make_room(now);
    entries_.emplace(std::string(resource), Entry{now, sample, round_trip});
    return;
  }
  Entry& entry = found->second;
  entry.mean_retries = fresh(entry, now) ? (entry.mean_retries * 3.0 + sample) / 4.0 : sample;
  entry.noted = now;
  entry.round_trip = round_trip;
}

std::optional<Microseconds> RecentContention::contended_round_trip(std::string_view resource,
                                                                   TimePoint now) const {
  const auto found = entries_.find(resource);
  if (found == entries_.end()) return std::nullopt;
  const Entry& entry = found->second;
  if (!fresh(entry, now) || entry.mean_retries < kContendedRetries) return std::nullopt;
  if (entry.round_trip.count() <= 0) return std::nullopt;
  return entry.round_trip;
}

void RecentContention::make_room(TimePoint now) {
  if (entries_.size() < kMaxRemembered) return;
  std::erase_if(entries_, [now](const auto& entry) { return !fresh(entry.second, now); });
  if (entries_.size() < kMaxRemembered) return;
  const auto oldest = std::min_element(
      entries_.begin(), entries_.end(),
      [](const auto& a, const auto& b) { return a.second.noted < b.second.noted; });
  entries_.erase(oldest);
}

}  // namespace redlock::detail
