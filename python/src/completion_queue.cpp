#include "completion_queue.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace redlock::python {

std::shared_ptr<CompletionQueue> CompletionQueue::create(std::error_code& error) {
  const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) {
    error = std::error_code(errno, std::system_category());
    return nullptr;
  }
  return std::shared_ptr<CompletionQueue>(new CompletionQueue(fd));
}

CompletionQueue::~CompletionQueue() { ::close(fd_); }

void CompletionQueue::push(Completion completion) {
  bool was_empty = false;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    was_empty = queued_.empty();
    queued_.push_back(std::move(completion));
  }
  if (!was_empty) return;  // the reader is woken already and has not taken yet
  const std::uint64_t one = 1;
  // EAGAIN only when the counter is at its maximum: the reader is due anyway.
  [[maybe_unused]] const ssize_t written = ::write(fd_, &one, sizeof one);
}

std::vector<Completion> CompletionQueue::take() {
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t read = ::read(fd_, &count, sizeof count);
  std::vector<Completion> taken;
  const std::lock_guard<std::mutex> lock(mutex_);
  taken.swap(queued_);
  return taken;
}

}  // namespace redlock::python
