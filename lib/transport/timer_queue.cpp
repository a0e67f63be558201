#include "transport/timer_queue.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

namespace redlock::detail {

namespace {
struct TimerHandle {
  uv_timer_t timer;
  TimerQueue* owner;
  std::function<void()> on_closed;
};

constexpr std::uint64_t kIndexMask = 0xffffffffu;
// Cancelled timers still listed in groups are swept only past this many, so
// that a small queue never sweeps.
constexpr std::size_t kSweepFloor = 64;

// An index into `items` for a new element: a freed one if any, else a new
// default-constructed element at the end.
template <typename T>
std::uint32_t take_index(std::vector<T>& items, std::vector<std::uint32_t>& free) {
  if (free.empty()) {
    items.emplace_back();
    return static_cast<std::uint32_t>(items.size() - 1);
  }
  const std::uint32_t index = free.back();
  free.pop_back();
  return index;
}
}  // namespace

bool TimerSchedule::live(Id id) const noexcept { return slot(id & kIndexMask).id == id; }

std::uint32_t TimerSchedule::take_slot() {
  if (!free_slots_.empty()) {
    const std::uint32_t index = free_slots_.back();
    free_slots_.pop_back();
    return index;
  }
  if (slot_count_ == slot_blocks_.size() * kSlotsPerBlock) {
    slot_blocks_.push_back(std::make_unique<Slot[]>(kSlotsPerBlock));
  }
  return static_cast<std::uint32_t>(slot_count_++);
}

void TimerSchedule::free_slot(Slot& slot, std::uint32_t index) {
  slot.id = (slot.id & ~kIndexMask) | kFreeIndex;
  free_slots_.push_back(index);
}

std::uint32_t TimerSchedule::group_for(TimePoint when) {
  for (std::size_t i = 0; i < recent_count_; ++i) {
    const Group& group = groups_[recent_[i]];
    if (group.active && group.when == when) return recent_[i];
  }
  const std::uint32_t index = take_index(groups_, free_groups_);
  Group& group = groups_[index];
  group.when = when;
  group.next = 0;
  group.active = true;
  heap_.push_back(HeapEntry{when, next_order_++, index});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
  recent_[recent_next_] = index;
  recent_next_ = (recent_next_ + 1) % kRecentGroups;
  recent_count_ = std::min(recent_count_ + 1, kRecentGroups);
  return index;
}

TimerSchedule::Id TimerSchedule::add(TimePoint when, std::function<void()> fn) {
  const std::uint32_t index = take_slot();
  Slot& slot = this->slot(index);
  auto generation = static_cast<std::uint32_t>(slot.id >> 32);
  if (++generation == 0) generation = 1;
  slot.id = (static_cast<Id>(generation) << 32) | index;
  slot.fn = std::move(fn);
  ++live_;
  groups_[group_for(when)].ids.push_back(slot.id);
  return slot.id;
}

bool TimerSchedule::cancel(Id id) noexcept {
  if (id == kNone) return false;
  const std::size_t index = id & kIndexMask;
  if (index >= slot_count_ || slot(index).id != id) return false;
  Slot& slot = this->slot(index);
  // The callback's captures are destroyed here, after the schedule is
  // consistent again; they may cancel other timers.
  std::function<void()> dropped = std::move(slot.fn);
  slot.fn = nullptr;
  free_slot(slot, static_cast<std::uint32_t>(index));
  --live_;
  ++cancelled_listed_;
  sweep_if_mostly_cancelled();
  return true;
}

bool TimerSchedule::front_live(Id& id) noexcept {
  while (!heap_.empty()) {
    Group& group = groups_[heap_.front().group];
    while (group.next < group.ids.size()) {
      const Id candidate = group.ids[group.next];
      if (live(candidate)) {
        id = candidate;
        return true;
      }
      ++group.next;
      --cancelled_listed_;
    }
    retire_front_group();
  }
  return false;
}

void TimerSchedule::retire_front_group() noexcept {
  const std::uint32_t index = heap_.front().group;
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  heap_.pop_back();
  Group& group = groups_[index];
  group.active = false;
  group.ids.clear();
  group.next = 0;
  free_groups_.push_back(index);
}

void TimerSchedule::sweep_if_mostly_cancelled() {
  if (cancelled_listed_ <= kSweepFloor || cancelled_listed_ <= live_) return;
  for (const HeapEntry& entry : heap_) {
    Group& group = groups_[entry.group];
    group.ids.erase(group.ids.begin(), group.ids.begin() + static_cast<std::ptrdiff_t>(group.next));
    group.next = 0;
    std::erase_if(group.ids, [this](Id id) { return !live(id); });
  }
  cancelled_listed_ = 0;
  std::erase_if(heap_, [this](const HeapEntry& entry) {
    Group& group = groups_[entry.group];
    if (!group.ids.empty()) return false;
    group.active = false;
    free_groups_.push_back(entry.group);
    return true;
  });
  std::make_heap(heap_.begin(), heap_.end(), Later{});
}

TimePoint TimerSchedule::next_due() noexcept {
  Id id = kNone;
  return front_live(id) ? heap_.front().when : TimePoint::max();
}

bool TimerSchedule::take_due(TimePoint now, std::function<void()>& fn) {
  Id id = kNone;
  if (!front_live(id) || heap_.front().when > now) return false;
  ++groups_[heap_.front().group].next;
  const auto index = static_cast<std::uint32_t>(id & kIndexMask);
  Slot& slot = this->slot(index);
  fn = std::move(slot.fn);
  slot.fn = nullptr;
  free_slot(slot, index);
  --live_;
  return true;
}

TimerQueue::TimerQueue(uv_loop_t* loop, std::function<void()> on_handle_closed)
    : on_handle_closed_(std::move(on_handle_closed)) {
  auto* holder = new TimerHandle{};
  holder->owner = this;
  uv_timer_init(loop, &holder->timer);
  holder->timer.data = holder;
  handle_ = &holder->timer;
}

TimerQueue::~TimerQueue() { close(); }

TimerQueue::Id TimerQueue::schedule_after(Microseconds delay, std::function<void()> fn) {
  if (closed_) return kNone;
  return schedule_at(SteadyClock::now() + delay, std::move(fn));
}

TimerQueue::Id TimerQueue::schedule_at(TimePoint when, std::function<void()> fn) {
  if (closed_) return kNone;
  const Id id = schedule_.add(when, std::move(fn));
  // While run_due runs callbacks it re-arms once at the end, however many
  // timers they add.
  if (!running_ && when < armed_for_) arm();
  return id;
}

void TimerQueue::cancel(Id id) noexcept {
  // The handle stays armed for the old instant; firing early is harmless
  // (run_due finds nothing due and re-arms).
  (void)schedule_.cancel(id);
}

void TimerQueue::close() {
  if (closed_) return;
  closed_ = true;
  // Move the timers out before destroying them: a callback's captures may
  // own objects whose destructors touch this queue.
  TimerSchedule dropped = std::exchange(schedule_, TimerSchedule{});
  auto* holder = static_cast<TimerHandle*>(handle_->data);
  holder->owner = nullptr;
  holder->on_closed = std::move(on_handle_closed_);
  uv_timer_stop(handle_);
  uv_close(reinterpret_cast<uv_handle_t*>(handle_), [](uv_handle_t* h) {
    auto* closing = static_cast<TimerHandle*>(h->data);
    auto done = std::move(closing->on_closed);
    delete closing;
    if (done) done();
  });
}

void TimerQueue::on_timer(uv_timer_t* handle) {
  auto* holder = static_cast<TimerHandle*>(handle->data);
  if (holder->owner != nullptr) holder->owner->run_due();
}

void TimerQueue::run_due() {
  armed_for_ = TimePoint::max();
  running_ = true;
  // One reading for the whole run: timers that come due while callbacks run
  // wait for the next turn (the handle is re-armed with no delay), so a run
  // never chases timers its own callbacks keep adding.
  const TimePoint now = SteadyClock::now();
  run_time_ = now;
  std::function<void()> fn;
  while (!closed_ && schedule_.take_due(now, fn)) {
    if (fn) fn();
    fn = nullptr;
  }
  running_ = false;
  if (!closed_) arm();
}

void TimerQueue::arm() {
  const TimePoint when = schedule_.next_due();
  if (when == TimePoint::max()) {
    uv_timer_stop(handle_);
    armed_for_ = TimePoint::max();
    return;
  }
  // uv timers count from the loop's cached time, which may lag; refresh it
  // so a short deadline is not shortened further.
  uv_update_time(handle_->loop);
  const auto wait = std::chrono::ceil<Milliseconds>(when - SteadyClock::now());
  const auto wait_ms = wait.count() > 0 ? static_cast<std::uint64_t>(wait.count()) : 0;
  uv_timer_start(handle_, &TimerQueue::on_timer, wait_ms, 0);
  armed_for_ = when;
}

}  // namespace redlock::detail
