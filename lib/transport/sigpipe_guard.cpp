#include "transport/sigpipe_guard.hpp"

#include <pthread.h>

#include <ctime>

namespace redlock::detail {

namespace {
sigset_t sigpipe_only() noexcept {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  return set;
}

bool sigpipe_pending() noexcept {
  sigset_t pending;
  sigemptyset(&pending);
  return sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}
}  // namespace

void block_sigpipe_on_this_thread() noexcept {
  const sigset_t set = sigpipe_only();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

ScopedSigpipeBlock::ScopedSigpipeBlock() noexcept {
  const sigset_t set = sigpipe_only();
  was_pending_ = sigpipe_pending();
  pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

ScopedSigpipeBlock::~ScopedSigpipeBlock() {
  // Consume a SIGPIPE our writes raised (not one that was already pending),
  // so unblocking does not deliver it.
  if (!was_pending_ && sigpipe_pending()) {
    const sigset_t set = sigpipe_only();
    const timespec zero{0, 0};
    (void)sigtimedwait(&set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace redlock::detail
