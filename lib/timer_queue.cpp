#include "timer_queue.hpp"

#include <chrono>

namespace redlock::detail {

namespace {
struct TimerHandle {
  uv_timer_t timer;
  TimerQueue* owner;
  std::function<void()> on_closed;
};
}  // namespace

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
  const TimePoint when = SteadyClock::now() + delay;
  const Id id = next_id_++;
  auto it = entries_.emplace(when, std::make_pair(id, std::move(fn)));
  by_id_.emplace(id, it);
  if (when < armed_for_) arm();
  return id;
}

void TimerQueue::cancel(Id id) noexcept {
  auto found = by_id_.find(id);
  if (found == by_id_.end()) return;
  entries_.erase(found->second);
  by_id_.erase(found);
  // The handle stays armed for the old instant; firing early is harmless
  // (run_due finds nothing due and re-arms).
}

void TimerQueue::close() {
  if (closed_) return;
  closed_ = true;
  // Move the entries out before destroying them: a callback's captures may
  // own objects whose destructors touch this queue.
  Entries dropped;
  dropped.swap(entries_);
  by_id_.clear();
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
  while (!closed_ && !entries_.empty()) {
    auto first = entries_.begin();
    if (first->first > SteadyClock::now()) break;
    auto fn = std::move(first->second.second);
    by_id_.erase(first->second.first);
    entries_.erase(first);
    fn();
  }
  if (!closed_) arm();
}

void TimerQueue::arm() {
  if (entries_.empty()) {
    uv_timer_stop(handle_);
    armed_for_ = TimePoint::max();
    return;
  }
  const TimePoint when = entries_.begin()->first;
  // uv timers count from the loop's cached time, which may lag; refresh it
  // so a short deadline is not shortened further.
  uv_update_time(handle_->loop);
  const auto wait = std::chrono::ceil<Milliseconds>(when - SteadyClock::now());
  const auto wait_ms = wait.count() > 0 ? static_cast<std::uint64_t>(wait.count()) : 0;
  uv_timer_start(handle_, &TimerQueue::on_timer, wait_ms, 0);
  armed_for_ = when;
}

}  // namespace redlock::detail
