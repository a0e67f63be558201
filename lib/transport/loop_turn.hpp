// End-of-turn work on the loop, run from a uv_prepare_t just before the loop
// polls for I/O:
//   * flushing every connection that has bytes queued, so all requests made
//     during one loop turn leave in one write per node (coalescing);
//   * running posted tasks, which is how the library keeps its promise never
//     to call a callback from inside the call that started an operation.
// Tasks run before flushes and may queue more of both; the turn repeats until
// nothing is left, so the loop never blocks with work pending.
#pragma once

#include <uv.h>

#include <deque>
#include <functional>
#include <vector>

namespace redlock::detail {

class Flushable {
 public:
  virtual void flush() = 0;

 protected:
  ~Flushable() = default;
};

class LoopTurn {
 public:
  LoopTurn(uv_loop_t* loop, std::function<void()> on_handle_closed);
  LoopTurn(const LoopTurn&) = delete;
  LoopTurn& operator=(const LoopTurn&) = delete;
  ~LoopTurn();

  void post(std::function<void()> task);
  // `target` must stay alive until flushed or forget()-ten.
  void want_flush(Flushable* target);
  void forget(Flushable* target) noexcept;
  // Runs everything queued now (used when closing, so no posted callback is
  // lost), then closes the handle.
  void drain_and_close();

 private:
  static void on_prepare(uv_prepare_t* handle);
  void run();
  void activate();

  uv_prepare_t* handle_;
  std::function<void()> on_handle_closed_;
  std::deque<std::function<void()>> tasks_;
  std::vector<Flushable*> dirty_;
  std::vector<Flushable*> flushing_;
  bool active_ = false;
  bool closed_ = false;
};

}  // namespace redlock::detail
