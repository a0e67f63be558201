#include "transport/loop_context.hpp"

#include <utility>

namespace redlock::detail {

LoopContext::LoopContext(uv_loop_t* loop, const MonotonicClock& clock)
    : loop_(loop), clock_(&clock), clock_is_steady_(&clock == &steady_clock_source()) {
  timers_ = std::make_unique<TimerQueue>(loop_, [this] { handle_closed(); });
  handle_opened();
  turn_ = std::make_unique<LoopTurn>(loop_, [this] { handle_closed(); });
  handle_opened();
}

LoopContext::~LoopContext() = default;

void LoopContext::close(const std::function<void()>& close_users,
                        std::function<void()> on_all_closed) {
  if (closing_) return;
  closing_ = true;
  on_all_closed_ = std::move(on_all_closed);
  turn_->drain_and_close();
  if (close_users) close_users();
  timers_->close();
}

void LoopContext::handle_closed() {
  if (--open_handles_ != 0 || !closing_) return;
  // May free the owner and this context: nothing touches `this` after it.
  auto done = std::move(on_all_closed_);
  if (done) done();
}

}  // namespace redlock::detail
