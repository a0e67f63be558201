// Writes to a socket whose peer has gone raise SIGPIPE, which kills the
// process by default; libuv and hiredis write with write(2) and leave that
// to the application. Where the library owns the writing thread (the
// blocking client's loop) or makes the write on the caller's thread
// (FenceGate), it blocks SIGPIPE for that thread so the write fails with
// EPIPE instead.
#pragma once

#include <csignal>

namespace redlock::detail {

// Blocks SIGPIPE on the calling thread for the rest of its life. For threads
// the library starts itself.
void block_sigpipe_on_this_thread() noexcept;

// Blocks SIGPIPE on this thread while in scope; on exit, discards a SIGPIPE
// raised meanwhile and restores the previous mask.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() noexcept;
  ~ScopedSigpipeBlock();
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t previous_{};
  bool was_pending_ = false;
};

}  // namespace redlock::detail
