#include "server_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <system_error>

namespace redlock::test::server_process {
namespace {

// Makes `fd` the descriptor `target` and keeps it across exec. dup2 onto
// itself would leave O_CLOEXEC set, hence the fcntl.
bool install_descriptor(int fd, int target) noexcept {
  if (fd == target) return ::fcntl(fd, F_SETFD, 0) == 0;
  return ::dup2(fd, target) == target;
}

}  // namespace

std::string errno_text(std::string_view what) {
  return std::string(what) + ": " + std::error_code(errno, std::generic_category()).message();
}

std::filesystem::path make_temp_directory(const std::filesystem::path& base,
                                          std::string_view prefix, std::string& error) {
  std::string pattern = (base / prefix).string() + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    error = errno_text("mkdtemp " + pattern);
    return {};
  }
  return pattern;
}

void remove_directory(const std::filesystem::path& directory) noexcept {
  if (directory.empty()) return;
  try {
    std::error_code ignored;
    std::filesystem::remove_all(directory, ignored);
  } catch (...) {  // Only bad_alloc is possible; a leaked temp dir is fine.
  }
}

std::uint16_t pick_free_port(std::string& error) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = errno_text("socket");
    return 0;
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  const bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), length) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  if (!ok) error = errno_text("bind 127.0.0.1:0");
  ::close(fd);
  return ok ? ntohs(address.sin_port) : std::uint16_t{0};
}

[[noreturn]] void exec_in_child(char* const* argv, char* const* envp, int stdin_fd, int log_fd,
                                pid_t parent, int highest_fd, ChildIdentity identity) noexcept {
  // Groups first: once the uid is dropped, changing them is refused.
  if (identity.drop && (::setgroups(1, &identity.gid) != 0 || ::setgid(identity.gid) != 0 ||
                        ::setuid(identity.uid) != 0)) {
    ::_exit(126);
  }
  // After the uid change, which clears the parent-death signal. If the
  // parent died before prctl took effect, getppid() no longer names it and
  // the signal never comes.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(126);
  // Signals blocked by the test thread would otherwise stay blocked in the
  // server, which then ignores SIGTERM.
  sigset_t nothing_blocked;
  ::sigemptyset(&nothing_blocked);
  // The child has a single thread, and sigprocmask is async-signal-safe.
  ::sigprocmask(SIG_SETMASK, &nothing_blocked, nullptr);  // NOLINT(concurrency-mt-unsafe)
  if (!install_descriptor(stdin_fd, STDIN_FILENO) || !install_descriptor(log_fd, STDOUT_FILENO) ||
      !install_descriptor(log_fd, STDERR_FILENO)) {
    ::_exit(126);
  }
  // hiredis and others open sockets without O_CLOEXEC; an inherited socket
  // would keep a test's connection to another node open after it closed it.
  if (::close_range(3, ~0U, 0) != 0) {
    for (int fd = 3; fd <= highest_fd; ++fd) ::close(fd);
  }
  ::execve(argv[0], argv, envp);
  ::_exit(127);
}

}  // namespace redlock::test::server_process
