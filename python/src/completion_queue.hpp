// Results the library's loop thread hands to one asyncio event loop.
//
// The library's loop pushes a completion (an acquire decided, a lock lost, a
// release answered, an at-risk episode begun or ended) without blocking and without the GIL; the
// asyncio loop watches fd() (an eventfd, with loop.add_reader) and, when it is readable, takes
// every completion queued so far at once. Only a push onto an empty queue writes the eventfd, so a
// burst of results costs one wake-up of the asyncio loop. Completions carry ids the Python side
// assigned; they hold no Python object, so nothing here needs the GIL.
//
// Lifetime: shared by the Python-side owner and every library callback
// still due to push; the eventfd closes with the last of them. A Guard left
// in the queue when it is destroyed is dropped where that happens (on the
// library's loop it cannot release, and its lock lives out its TTL).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <system_error>
#include <vector>

#include "redlock/guard.hpp"

namespace redlock::python {

struct Completion {
  enum class Kind { acquired, lost, released, at_risk };
  std::uint64_t id = 0;
  Kind kind = Kind::acquired;
  Guard guard;               // acquired: the guard (empty when not acquired)
  std::error_code error;     // lost: why
  std::size_t released = 0;  // released: how many nodes deleted the lock
  bool at_risk = false;      // at_risk: an episode began (true) or a renewal ended it
};

class CompletionQueue {
 public:
  // A queue with its own eventfd; null and `error` set when none can be made.
  static std::shared_ptr<CompletionQueue> create(std::error_code& error);
  ~CompletionQueue();
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;

  // The eventfd: readable while completions wait.
  [[nodiscard]] int fd() const noexcept { return fd_; }
  // Any thread; never blocks beyond the queue's mutex.
  void push(Completion completion);
  // Everything queued so far, oldest first; clears the eventfd first, so a
  // push after the swap wakes the reader again.
  [[nodiscard]] std::vector<Completion> take();

 private:
  explicit CompletionQueue(int fd) noexcept : fd_(fd) {}
  int fd_;
  std::mutex mutex_;
  std::vector<Completion> queued_;
};

}  // namespace redlock::python
