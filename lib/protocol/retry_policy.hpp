// When to try again after a failed acquire attempt, and when to make the
// first one: pure logic over a clock reading and a uniform random draw, so
// tests can pin the jitter.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "redlock/types.hpp"

namespace redlock::detail {

struct RetryPlan {
  // Retries after the first attempt; -1 means bounded by `deadline` only.
  int max_retries = 3;
  Milliseconds mean_delay{200};
  // No attempt starts after this instant.
  std::optional<TimePoint> deadline;
};

// The pause before the next attempt, or nullopt when no attempt remains.
// `attempts_made` counts attempts so far (>= 1). `uniform01` is a draw from
// [0, 1): the pause is uniform in [0, 2 * mean_delay) ("full jitter" around
// the mean, which desynchronises contending clients), cut short so that the
// next attempt starts no later than the deadline.
[[nodiscard]] std::optional<Microseconds> next_retry_delay(const RetryPlan& plan, int attempts_made,
                                                           TimePoint now,
                                                           double uniform01) noexcept;

// The pause after a split vote: this attempt got some grants, a rival
// attempt held the other nodes, and neither has a majority. Nobody holds the
// lock then, and no release will be published to wake anyone, so the
// splitters do not sleep out the retry delay: each retries after a pause
// uniform in [0, kSplitRetrySpan * round_trip), long enough apart that one
// of them usually takes the lock before the other tries again. The caller
// keeps the shorter of this and next_retry_delay(), whose count and
// deadline still apply.
inline constexpr int kSplitRetrySpan = 3;
[[nodiscard]] Microseconds split_retry_pause(Microseconds round_trip, double uniform01) noexcept;

// The pause before the first attempt of an acquire of a resource this
// client has found contended (`contended_round_trip`, from
// RecentContention): uniform in [3, 5) round trips. Without it, a client
// that releases a contended lock and at once acquires it again races the
// waiters its own release has just woken, and often wins: the others then
// wait round after round (a long tail). Zero when there is no such memory,
// when the plan allows no retry (a try-lock answers at once), or when the
// plan has no time to spare; never beyond the mean retry delay or the
// deadline.
[[nodiscard]] Microseconds courtesy_pause(const RetryPlan& plan, TimePoint now,
                                          std::optional<Microseconds> contended_round_trip,
                                          double uniform01) noexcept;

// A uniform draw in [0, 1) from the OS CSPRNG (retry jitter is not secret,
// but one source of randomness is simpler than two).
[[nodiscard]] double random_unit() noexcept;

// Which resources one client finds contended. Each successful acquire of a
// resource notes how many retries it needed and the round trip of the
// attempt that won. A resource counts as contended while the mean of those
// retries (exponentially weighted, a quarter to the newest) is at least
// kContendedRetries and the last note is less than kContentionMemory old:
// two clients taking turns on a briefly held lock need fewer (the one that
// releases often takes it straight back), a queue of several needs about
// one (refused once, which lines the waiter up, then named by a release).
// Half a retry, not one: a queue's mean hovers around one, and each dip
// below the mark let the next acquire skip its pause and collide with the
// waiter the release had named.
// Counted in attempts, not in time, so a loaded machine whose round trips
// stretch does not change the verdict. At most kMaxRemembered resources are
// kept: expired ones go first, then the oldest.
class RecentContention {
 public:
  static constexpr Milliseconds kContentionMemory{1000};
  static constexpr std::size_t kMaxRemembered = 1024;
  static constexpr double kContendedRetries = 0.5;

  // An acquire without retries is noted only for a resource already
  // remembered.
  void note(std::string_view resource, TimePoint now, int retries, Microseconds round_trip);
  // The last noted round trip, while `resource` counts as contended.
  [[nodiscard]] std::optional<Microseconds> contended_round_trip(std::string_view resource,
                                                                 TimePoint now) const;
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }

 private:
  struct Entry {
    TimePoint noted;
    double mean_retries;
    Microseconds round_trip;
  };
  [[nodiscard]] static bool fresh(const Entry& entry, TimePoint now) noexcept {
    return now - entry.noted < kContentionMemory;
  }
  void make_room(TimePoint now);

  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace redlock::detail
