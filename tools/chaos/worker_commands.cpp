#include "worker_commands.hpp"

#include <poll.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace redlock::chaos {

WorkerCommands::WorkerCommands()
    : reader_([this](const std::stop_token& done) { read_loop(done); }) {}

WorkerCommands::~WorkerCommands() {
  reader_.request_stop();
  reader_.join();
}

bool WorkerCommands::wait_for_go(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_for(lock, limit, [this] { return go_ || stopped_; });
  return go_ && !stopped_;
}

bool WorkerCommands::take_pause(std::string_view point) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (armed_pause_ != point) return false;
  armed_pause_.clear();
  return true;
}

bool WorkerCommands::sleep(std::chrono::milliseconds length) {
  std::unique_lock<std::mutex> lock(mutex_);
  return !changed_.wait_for(lock, length, [this] { return stopped_; });
}

void WorkerCommands::read_loop(const std::stop_token& done) {
  std::array<char, 512> chunk{};
  while (!done.stop_requested()) {
    pollfd input{STDIN_FILENO, POLLIN, 0};
    const int ready = ::poll(&input, 1, 50);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;
    const ssize_t got = ready > 0 ? ::read(STDIN_FILENO, chunk.data(), chunk.size()) : -1;
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      command("stop");  // the harness went away
      return;
    }
    buffer_.append(chunk.data(), static_cast<std::size_t>(got));
    for (std::size_t newline = buffer_.find('\n'); newline != std::string::npos;
         newline = buffer_.find('\n')) {
      const std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      command(line);
    }
  }
}

void WorkerCommands::command(const std::string& line) {
  bool stop = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (line == "go") {
      go_ = true;
    } else if (line == "stop") {
      armed_pause_.clear();  // a pause armed but not reached stays unfired
      stopped_ = stop = true;
    } else if (line.rfind("pause ", 0) == 0) {
      armed_pause_ = line.substr(6);
    }
  }
  changed_.notify_all();
  // Outside the lock: it runs the cancellation of an acquire in progress.
  if (stop) stop_.request_stop();
}

}  // namespace redlock::chaos
