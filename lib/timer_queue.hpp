// Many timers on one uv_timer_t: request deadlines, connect timeouts,
// reconnect backoff and retry pauses all share it, so a lock operation costs
// no timer handle of its own.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>

#include "redlock/types.hpp"

namespace redlock::detail {

class TimerQueue {
 public:
  using Id = std::uint64_t;
  static constexpr Id kNone = 0;

  // `on_handle_closed` runs from the uv_timer_t's close callback.
  TimerQueue(uv_loop_t* loop, std::function<void()> on_handle_closed);
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;
  ~TimerQueue();

  // Runs `fn` on the loop once `delay` has passed (measured on the steady
  // clock). `fn` may schedule and cancel timers.
  Id schedule_after(Microseconds delay, std::function<void()> fn);
  // Harmless for an id that already fired or was cancelled.
  void cancel(Id id) noexcept;
  // Drops every pending timer without running it and closes the handle.
  void close();

 private:
  using Entries = std::multimap<TimePoint, std::pair<Id, std::function<void()>>>;
  static void on_timer(uv_timer_t* handle);
  void run_due();
  void arm();

  uv_timer_t* handle_;
  std::function<void()> on_handle_closed_;
  Entries entries_;
  std::unordered_map<Id, Entries::iterator> by_id_;
  Id next_id_ = 1;
  TimePoint armed_for_ = TimePoint::max();
  bool closed_ = false;
};

}  // namespace redlock::detail
