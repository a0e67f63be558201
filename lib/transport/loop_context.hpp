// What everything on one client's libuv loop shares: the loop, the clock,
// one timer queue, the end-of-turn hook, and the count of open libuv
// handles and requests. The transport (node connections, subscriber
// connections) takes this instead of the client core, so it depends on
// nothing above it.
//
// Lifetime: the owner keeps the context alive until every handle counted
// here has closed; after close(), the last handle_closed() calls
// `on_all_closed` (which may free the owner, and this with it: nothing
// touches the context after that call).
#pragma once

#include <uv.h>

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>

#include "redlock/clock.hpp"
#include "transport/loop_turn.hpp"
#include "transport/timer_queue.hpp"

namespace redlock::detail {

class LoopContext {
 public:
  LoopContext(uv_loop_t* loop, const MonotonicClock& clock);
  LoopContext(const LoopContext&) = delete;
  LoopContext& operator=(const LoopContext&) = delete;
  ~LoopContext();

  [[nodiscard]] uv_loop_t* loop() const noexcept { return loop_; }
  [[nodiscard]] const MonotonicClock& clock() const noexcept { return *clock_; }
  // The client's clock is the steady clock that request deadlines and
  // timers run on, so one reading serves both (always, but for tests with a
  // clock of their own).
  [[nodiscard]] bool clock_is_steady() const noexcept { return clock_is_steady_; }
  [[nodiscard]] TimerQueue& timers() noexcept { return *timers_; }
  [[nodiscard]] LoopTurn& turn() noexcept { return *turn_; }
  // The one buffer every connection on this loop reads its socket into.
  // One is enough: a connection hands what it read to its reply reader
  // (which copies) or to its TLS session before anything else runs, so no
  // read outlives the callback it arrived in. Per connection, 16 KiB each
  // was most of an idle client's memory.
  [[nodiscard]] std::span<char> read_buffer() noexcept { return read_buffer_; }

  // Accounting of open libuv handles and requests.
  void handle_opened() noexcept { ++open_handles_; }
  void handle_closed();
  // Runs what is posted and closes the loop turn, then runs `close_users`
  // (which closes what uses the context: the connections), then closes the
  // timer queue. `on_all_closed` runs once every counted handle has closed.
  void close(const std::function<void()>& close_users, std::function<void()> on_all_closed);
  [[nodiscard]] bool closing() const noexcept { return closing_; }

 private:
  uv_loop_t* loop_;
  const MonotonicClock* clock_;
  bool clock_is_steady_;
  std::unique_ptr<TimerQueue> timers_;
  std::unique_ptr<LoopTurn> turn_;
  std::array<char, 16 * 1024> read_buffer_{};
  std::size_t open_handles_ = 0;
  bool closing_ = false;
  std::function<void()> on_all_closed_;
};

}  // namespace redlock::detail
