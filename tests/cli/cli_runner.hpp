// Runs the `redlock` binary under test as a real process: arguments,
// environment and working directory in; exit code, stdout and stderr out.
//
// Process contract (as the Redis fixture's): only processes started here are
// signalled, only by pid, and every one is reaped. Waits are bounded: a
// process still running at its deadline is killed with SIGKILL and the
// result says timed_out. Waiting uses a pidfd with poll(2), not a sleep loop.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace redlock::test {

// The path of the redlock binary (a compile definition from CMake).
[[nodiscard]] std::string redlock_binary();

struct CliOptions {
  // Added to (or replacing in) the test's own environment. REDLOCK_CONFIG
  // is removed from the inherited environment unless set here.
  std::vector<std::pair<std::string, std::string>> environment;
  // The working directory. Default: a fresh empty directory (so no stray
  // ./redlock.toml is found).
  std::optional<std::filesystem::path> working_directory;
};

struct CliResult {
  // The exit status, or 128 + N when signal N ended the process.
  int exit_code = -1;
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};
  bool timed_out = false;
};

// A directory under $TMPDIR (or /tmp), removed with its contents on
// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  TempDir(TempDir&&) = delete;
  TempDir& operator=(TempDir&&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const {
    return path_ / name;
  }

 private:
  std::filesystem::path path_;
};

class CliProcess {
 public:
  // Starts `redlock ARGS...`. Throws std::runtime_error when it cannot.
  explicit CliProcess(std::vector<std::string> arguments, const CliOptions& options = {});
  // Kills (SIGKILL) and reaps the process if it is still running.
  ~CliProcess();
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;
  CliProcess(CliProcess&&) = delete;
  CliProcess& operator=(CliProcess&&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  // Sends a signal to the redlock process (not to its children).
  void signal(int signal_number) const;
  // Waits up to `limit` for the process to end; kills it after that.
  // Call once.
  CliResult wait(std::chrono::milliseconds limit = std::chrono::seconds(30));

 private:
  TempDir scratch_;  // captured output and the default working directory
  pid_t pid_ = -1;
  int pidfd_ = -1;
  std::chrono::steady_clock::time_point started_;
};

// Starts redlock, waits (bounded) and returns the result.
[[nodiscard]] CliResult run_cli(std::vector<std::string> arguments, const CliOptions& options = {},
                                std::chrono::milliseconds limit = std::chrono::seconds(30));

// Waits until `condition` holds, checking every few milliseconds; false
// when `limit` passed first.
template <typename Condition>
bool eventually(Condition condition, std::chrono::milliseconds limit = std::chrono::seconds(10));

// The file's contents, or nullopt when it cannot be read.
[[nodiscard]] std::optional<std::string> read_file(const std::filesystem::path& path);

// Whether a process with this pid exists (zombies count).
[[nodiscard]] bool process_exists(pid_t pid);

}  // namespace redlock::test

#include <thread>

template <typename Condition>
bool redlock::test::eventually(Condition condition, std::chrono::milliseconds limit) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}
