// A client worker as seen from the harness: a child process of this same
// binary (`redlock-chaos worker ...`) with a pipe to its stdin (commands)
// and one from its stdout (reports), its stderr in a log file.
//
// Only this process's own children are signalled, by pid. A child gets
// PR_SET_PDEATHSIG = SIGKILL, so a crashed harness leaves none behind
// (Linux ties that to the forking thread: spawn from the main thread).
// Not thread-safe; never throws.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace redlock::chaos {

class WorkerProcess {
 public:
  WorkerProcess() = default;
  ~WorkerProcess();  // SIGCONT + SIGKILL and reap when still running
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Starts `executable` with `arguments` (argv[1..]); false with `error`.
  bool spawn(const std::filesystem::path& executable, const std::vector<std::string>& arguments,
             const std::filesystem::path& stderr_file, std::string& error);

  // Sends one line (a newline is added). False when the pipe is gone.
  bool send(const std::string& line);
  // Complete lines read so far without blocking.
  std::vector<std::string> poll_lines();
  [[nodiscard]] int stdout_fd() const noexcept { return out_fd_; }

  void signal(int signal_number) const noexcept;
  // Waits up to `timeout` for the child to exit (reaping it); true if it did.
  bool wait_exit(std::chrono::milliseconds timeout);
  // Whether the child is stopped (SIGSTOP took effect), checked without blocking.
  bool stopped();
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  // What the kernel says the running child is doing, for the report of a
  // child that does not exit: "state S, wchan ep_poll, 1 thread(s)"
  // (empty when it is gone).
  [[nodiscard]] std::string describe_state() const;
  [[nodiscard]] std::optional<int> exit_status() const noexcept { return exit_status_; }

 private:
  pid_t pid_ = -1;
  int in_fd_ = -1;   // our end of the child's stdin
  int out_fd_ = -1;  // our end of the child's stdout
  std::string buffer_;
  bool stopped_ = false;
  std::optional<int> exit_status_;
};

}  // namespace redlock::chaos
