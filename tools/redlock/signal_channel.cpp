#include "signal_channel.hpp"

#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>  // sigabbrev_np
#include <system_error>

namespace redlock::cli {

std::optional<SignalChannel> SignalChannel::open(std::string& error) {
  sigset_t handled;
  sigemptyset(&handled);
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) {
    sigaddset(&handled, signal_number);
  }
  sigset_t original;
  if (const int rc = pthread_sigmask(SIG_BLOCK, &handled, &original); rc != 0) {
    error = "cannot block signals: " + std::system_category().message(rc);
    return std::nullopt;
  }
  const int fd = signalfd(-1, &handled, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) {
    error = "signalfd: " + std::system_category().message(errno);
    return std::nullopt;
  }
  return SignalChannel(fd, original);
}

SignalChannel::SignalChannel(int fd, const sigset_t& original_mask) noexcept
    : fd_(fd), original_mask_(original_mask) {}

SignalChannel::SignalChannel(SignalChannel&& other) noexcept
    : fd_(other.fd_), original_mask_(other.original_mask_) {
  other.fd_ = -1;
}

SignalChannel::~SignalChannel() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<int> SignalChannel::next() const noexcept {
  signalfd_siginfo info{};
  for (;;) {
    const ssize_t got = ::read(fd_, &info, sizeof info);
    if (got == static_cast<ssize_t>(sizeof info)) return static_cast<int>(info.ssi_signo);
    if (got < 0 && errno == EINTR) continue;
    return std::nullopt;  // EAGAIN: nothing pending
  }
}

Wakeup::Wakeup(std::string& error) {
  fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd_ < 0) error = "eventfd: " + std::system_category().message(errno);
}

Wakeup::~Wakeup() {
  if (fd_ >= 0) ::close(fd_);
}

void Wakeup::notify() const noexcept {
  const std::uint64_t one = 1;
  // Only fails when the counter would overflow, which still means "notified".
  [[maybe_unused]] const ssize_t written = ::write(fd_, &one, sizeof one);
}

bool Wakeup::take() const noexcept {
  std::uint64_t count = 0;
  return ::read(fd_, &count, sizeof count) == static_cast<ssize_t>(sizeof count) && count > 0;
}

namespace {
bool sigpipe_default_before = true;
}  // namespace

void ignore_sigpipe() noexcept {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  struct sigaction previous {};
  if (sigaction(SIGPIPE, &ignore, &previous) == 0) {
    sigpipe_default_before = previous.sa_handler == SIG_DFL;
  }
}

bool sigpipe_was_default() noexcept { return sigpipe_default_before; }

std::string signal_name(int signal_number) {
  if (const char* abbreviation = sigabbrev_np(signal_number)) {
    return std::string("SIG") + abbreviation;
  }
  return "signal " + std::to_string(signal_number);
}

}  // namespace redlock::cli
