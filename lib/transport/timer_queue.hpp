// Many timers on one uv_timer_t: request deadlines, connect timeouts,
// reconnect backoff, retry pauses and guard renewals all share it, so a lock
// operation costs no timer handle of its own.
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "redlock/types.hpp"

namespace redlock::detail {

// The pending timers of a TimerQueue, apart from libuv. Timers due at the
// same instant (guard renewals and deadlines fall due on a grid, many at a
// time) share one group, and a binary heap orders the groups by due time;
// within a group, and between groups due at the same instant, timers run in
// the order they were added. Callbacks live in a slab of slots. Once the
// slab, the groups and the heap have grown to what is pending, adding and
// cancelling allocate nothing (a callback whose captures fit in
// std::function's own storage, such as a single pointer, allocates nothing
// either). A cancelled timer stays listed in its group and is skipped when
// the group runs; such leftovers are swept once they outnumber the live
// timers.
class TimerSchedule {
 public:
  using Id = std::uint64_t;
  static constexpr Id kNone = 0;

  Id add(TimePoint when, std::function<void()> fn);
  // False for an id that already ran, was cancelled, or is kNone.
  bool cancel(Id id) noexcept;
  // The earliest due time of a pending timer; TimePoint::max() when none.
  [[nodiscard]] TimePoint next_due() noexcept;
  // Removes the earliest timer due at or before `now` and moves its callback
  // into `fn`; false when none is due. The timer counts as run: cancelling
  // its id afterwards does nothing.
  [[nodiscard]] bool take_due(TimePoint now, std::function<void()>& fn);
  [[nodiscard]] std::size_t size() const noexcept { return live_; }

 private:
  // An id is the slot's index in the low 32 bits and the slot's generation
  // (bumped on every reuse, never 0) in the high ones. A free slot keeps its
  // last generation, with kFreeIndex for the index, which no id has.
  struct Slot {
    Id id = kNone;
    std::function<void()> fn;
  };
  static constexpr std::uint32_t kFreeIndex = 0xffffffffu;
  // Slots come in blocks that never move: a held lock keeps two timers
  // pending all the time, and a vector of slots would copy every pending
  // callback as it doubled and keep up to half of its capacity unused.
  static constexpr std::size_t kSlotBlockBits = 8;
  static constexpr std::size_t kSlotsPerBlock = std::size_t{1} << kSlotBlockBits;
  struct Group {
    TimePoint when;
    std::vector<Id> ids;   // in the order added
    std::size_t next = 0;  // ids before it have run or were skipped
    bool active = false;   // false once it has run out (free for reuse)
  };
  struct HeapEntry {
    TimePoint when;
    std::uint64_t order;  // breaks ties: first created, first run
    std::uint32_t group;
  };
  // The heap's order (a type, not a function pointer, so that it inlines).
  struct Later {
    bool operator()(const HeapEntry& a, const HeapEntry& b) const noexcept {
      return a.when != b.when ? a.when > b.when : a.order > b.order;
    }
  };
  // How many of the most recently created groups an added timer may join.
  static constexpr std::size_t kRecentGroups = 4;

  [[nodiscard]] bool live(Id id) const noexcept;
  [[nodiscard]] Slot& slot(std::size_t index) const noexcept {
    return slot_blocks_[index >> kSlotBlockBits][index & (kSlotsPerBlock - 1)];
  }
  std::uint32_t take_slot();
  void free_slot(Slot& slot, std::uint32_t index);
  std::uint32_t group_for(TimePoint when);
  // The first live timer of the earliest group (groups with none left are
  // retired on the way); false when nothing is pending.
  [[nodiscard]] bool front_live(Id& id) noexcept;
  void retire_front_group() noexcept;
  void sweep_if_mostly_cancelled();

  std::vector<std::unique_ptr<Slot[]>> slot_blocks_;
  std::size_t slot_count_ = 0;
  std::vector<std::uint32_t> free_slots_;
  std::vector<Group> groups_;
  std::vector<std::uint32_t> free_groups_;
  std::vector<HeapEntry> heap_;
  std::array<std::uint32_t, kRecentGroups> recent_{};
  std::size_t recent_count_ = 0;
  std::size_t recent_next_ = 0;
  std::uint64_t next_order_ = 0;
  std::size_t live_ = 0;
  std::size_t cancelled_listed_ = 0;  // cancelled ids still in some group
};

class TimerQueue {
 public:
  using Id = TimerSchedule::Id;
  static constexpr Id kNone = TimerSchedule::kNone;

  // `on_handle_closed` runs from the uv_timer_t's close callback.
  TimerQueue(uv_loop_t* loop, std::function<void()> on_handle_closed);
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;
  ~TimerQueue();

  // Runs `fn` on the loop once `delay` has passed (measured on the steady
  // clock). `fn` may schedule and cancel timers.
  Id schedule_after(Microseconds delay, std::function<void()> fn);
  // Runs `fn` on the loop once the steady clock has reached `when`, for a
  // caller that already knows the instant on that clock.
  Id schedule_at(TimePoint when, std::function<void()> fn);
  // Harmless for an id that already fired or was cancelled.
  void cancel(Id id) noexcept;
  // Drops every pending timer without running it and closes the handle.
  void close();
  // Inside a timer callback: the steady clock's reading that found the
  // callback due, taken when the run of due timers began. A callback can use
  // it instead of reading the clock again: it is never later than the
  // callback's own start, and it is what decided that the timer was due.
  [[nodiscard]] TimePoint run_time() const noexcept { return run_time_; }

 private:
  static void on_timer(uv_timer_t* handle);
  void run_due();
  void arm();

  uv_timer_t* handle_;
  std::function<void()> on_handle_closed_;
  TimerSchedule schedule_;
  TimePoint armed_for_ = TimePoint::max();
  TimePoint run_time_{};
  bool running_ = false;  // inside run_due
  bool closed_ = false;
};

}  // namespace redlock::detail
