// How `run`'s main thread learns about signals and about the loss of its
// lock without busy waiting: both become readable file descriptors that one
// poll(2) waits on.
//
// SignalChannel blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD and reads them
// from a signalfd. It must be opened before any other thread starts (the
// BlockingClient's loop thread): threads inherit the signal mask, and a
// signal that some thread does not block would be delivered to that thread
// with its default action — terminating run without releasing the lock.
//
// Wakeup is an eventfd. notify() is one write(2): safe from any thread,
// cheap and non-blocking, which is all the Guard's on_lost callback (on the
// client's loop thread) may do.
#pragma once

#include <csignal>
#include <optional>
#include <string>

namespace redlock::cli {

class SignalChannel {
 public:
  // Blocks the signals in the calling thread and opens the signalfd. On
  // failure returns nullopt and says why in `error`.
  static std::optional<SignalChannel> open(std::string& error);

  SignalChannel(SignalChannel&& other) noexcept;
  SignalChannel& operator=(SignalChannel&&) = delete;
  SignalChannel(const SignalChannel&) = delete;
  SignalChannel& operator=(const SignalChannel&) = delete;
  // Closes the signalfd. The mask stays: the process is about to exit.
  ~SignalChannel();

  [[nodiscard]] int fd() const noexcept { return fd_; }
  // The signal mask from before open(), for the child to start with.
  [[nodiscard]] const sigset_t& original_mask() const noexcept { return original_mask_; }
  // The next pending signal, without waiting; nullopt when none is pending.
  [[nodiscard]] std::optional<int> next() const noexcept;

 private:
  SignalChannel(int fd, const sigset_t& original_mask) noexcept;
  int fd_ = -1;
  sigset_t original_mask_{};
};

class Wakeup {
 public:
  // On failure fd() is -1 and `error` says why.
  explicit Wakeup(std::string& error);
  ~Wakeup();
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;
  Wakeup(Wakeup&&) = delete;
  Wakeup& operator=(Wakeup&&) = delete;

  [[nodiscard]] int fd() const noexcept { return fd_; }
  // Any thread. Never blocks.
  void notify() const noexcept;
  // Whether notify() was called since the last take(); resets it.
  [[nodiscard]] bool take() const noexcept;

 private:
  int fd_ = -1;
};

// Ignores SIGPIPE in this process, remembering whether it had its default
// action. libuv and hiredis write to sockets with write(2): a node that
// closes its connection must cost an error reply, not the process. Call it
// first thing in main(), before any thread starts.
void ignore_sigpipe() noexcept;
// Whether SIGPIPE had its default action before ignore_sigpipe().
[[nodiscard]] bool sigpipe_was_default() noexcept;

// "SIGTERM", "SIGINT", ... for messages.
[[nodiscard]] std::string signal_name(int signal_number);

}  // namespace redlock::cli
