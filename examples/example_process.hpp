// The example programs' tests run each example as a real process, as a user
// would start it: this is that process, and the scratch directories it uses.
//
// Process contract (as the Redis fixture's): only processes started here are
// signalled, only by pid, and every one is reaped; every wait is bounded,
// and a process still running at its limit is killed.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace redlock::test {

// A fresh directory, removed with its contents on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): read only
    std::string pattern =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/redlock-examples-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::system_error(errno, std::generic_category(), "mkdtemp");
    }
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// One run of an example. Its working directory is an empty scratch
// directory and $REDLOCK_CONFIG is removed from its environment, so only
// the flags given here say where the quorum is.
class Example {
 public:
  using Clock = std::chrono::steady_clock;
  using milliseconds = std::chrono::milliseconds;

  Example(const std::string& binary, std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), binary);
    std::vector<std::string> environment;
    for (char** entry = environ; *entry != nullptr; ++entry) {
      if (std::string_view(*entry).rfind("REDLOCK_CONFIG=", 0) != 0)
        environment.emplace_back(*entry);
    }
    std::vector<char*> argv = pointers(arguments);
    std::vector<char*> envp = pointers(environment);
    const std::string out = (scratch_.path() / "out").string();
    const std::string err = (scratch_.path() / "err").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addchdir_np(&actions, scratch_.path().c_str());
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::system_error(rc, std::generic_category(), binary);
  }
  ~Example() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);  // works on a stopped process too
      reap(0);
    }
  }
  Example(const Example&) = delete;
  Example& operator=(const Example&) = delete;

  void signal(int number) const {
    if (pid_ > 0) ::kill(pid_, number);
  }
  [[nodiscard]] bool running() { return pid_ > 0 && !reap(WNOHANG); }
  [[nodiscard]] std::string out() const { return read_text(scratch_.path() / "out"); }
  [[nodiscard]] std::string err() const { return read_text(scratch_.path() / "err"); }
  // The exit code; -1 when the process had to be killed at the limit.
  int wait(milliseconds limit = milliseconds(30000)) {
    const auto give_up = Clock::now() + limit;
    while (running() && Clock::now() < give_up) std::this_thread::sleep_for(milliseconds(10));
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      reap(0);
      return -1;
    }
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }
  // Waits (at most `limit`) until every thread of the process is stopped
  // (SIGSTOP, raised by itself or sent); false if it did not stop in time
  // or exited instead.
  bool wait_stopped(milliseconds limit) {
    const auto give_up = Clock::now() + limit;
    while (pid_ > 0 && !stopped_) {
      if (reap(WNOHANG | WUNTRACED)) return false;
      if (stopped_) break;
      if (Clock::now() >= give_up) return false;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return stopped_;
  }
  // SIGCONT to a stopped process.
  void resume() {
    if (pid_ > 0 && stopped_) {
      ::kill(pid_, SIGCONT);
      stopped_ = false;
    }
  }

 private:
  static std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> result;
    result.reserve(strings.size() + 1);
    for (std::string& text : strings) result.push_back(text.data());
    result.push_back(nullptr);
    return result;
  }
  // True once the child has exited (and is reaped); a stop reported under
  // WUNTRACED only sets stopped_.
  bool reap(int options) {
    pid_t got = -1;
    int status = 0;
    do {
      got = waitpid(pid_, &status, options);
    } while (got < 0 && errno == EINTR);
    if (got == pid_ && WIFSTOPPED(status)) {
      stopped_ = true;
      return false;
    }
    if (got == pid_) status_ = status;
    if (got == pid_ || got < 0) pid_ = -1;
    return pid_ < 0;
  }

  ScratchDir scratch_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool stopped_ = false;
};

}  // namespace redlock::test
