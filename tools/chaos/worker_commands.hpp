// The harness's commands to a worker that blocks in its own work (the
// reentrant worker: worker_guard.hpp), read from stdin on a thread of
// their own: "go", "pause <point>", "stop" (worker.hpp has the protocol).
// The end of stdin (the harness went away) counts as "stop".
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>

namespace redlock::chaos {

class WorkerCommands {
 public:
  WorkerCommands();
  ~WorkerCommands();  // stops the reader (within its 50 ms poll)
  WorkerCommands(const WorkerCommands&) = delete;
  WorkerCommands& operator=(const WorkerCommands&) = delete;

  // Waits for "go"; false on "stop" or after `limit`.
  [[nodiscard]] bool wait_for_go(std::chrono::milliseconds limit);
  [[nodiscard]] bool stop_requested() const noexcept { return stop_.stop_requested(); }
  // Requested on "stop": cancels an acquire's wait.
  [[nodiscard]] std::stop_token stop_token() const noexcept { return stop_.get_token(); }
  // Whether a pause is armed at `point`; disarms it when so.
  [[nodiscard]] bool take_pause(std::string_view point);
  // Sleeps `length`, returning early (false) on "stop".
  bool sleep(std::chrono::milliseconds length);

 private:
  void read_loop(const std::stop_token& done);
  void command(const std::string& line);

  std::mutex mutex_;
  std::condition_variable_any changed_;
  bool go_ = false;
  bool stopped_ = false;
  std::string armed_pause_;
  std::stop_source stop_;
  std::string buffer_;
  std::jthread reader_;
};

}  // namespace redlock::chaos
