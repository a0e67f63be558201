#include "cli_runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

extern char** environ;  // NOLINT(readability-redundant-declaration)

#ifndef REDLOCK_BINARY
#error "REDLOCK_BINARY must name the redlock executable"
#endif

namespace redlock::test {
namespace {

std::vector<std::string> environment_for(const CliOptions& options) {
  std::vector<std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string_view name = text.substr(0, text.find('='));
    if (name == "REDLOCK_CONFIG") continue;
    const bool replaced = std::any_of(options.environment.begin(), options.environment.end(),
                                      [&](const auto& variable) { return variable.first == name; });
    if (!replaced) environment.emplace_back(text);
  }
  for (const auto& [name, value] : options.environment) {
    std::string entry = name;
    entry += '=';
    entry += value;
    environment.push_back(std::move(entry));
  }
  return environment;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::string redlock_binary() { return REDLOCK_BINARY; }

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): read-only use
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/redlock-cli-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp: " + std::system_category().message(errno));
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

CliProcess::CliProcess(std::vector<std::string> arguments, const CliOptions& options) {
  arguments.insert(arguments.begin(), redlock_binary());
  std::vector<std::string> environment = environment_for(options);
  std::vector<char*> argv = c_strings(arguments);
  std::vector<char*> envp = c_strings(environment);
  const std::string out_path = (scratch_ / "stdout").string();
  const std::string err_path = (scratch_ / "stderr").string();
  const std::filesystem::path directory = options.working_directory.value_or(scratch_.path());
  const std::string directory_text = directory.string();

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addchdir_np(&actions, directory_text.c_str());
  // The test binary's signal mask and dispositions must not leak into the
  // process under test.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t empty;
  sigemptyset(&empty);
  sigset_t defaults;
  sigfillset(&defaults);
  sigdelset(&defaults, SIGKILL);
  sigdelset(&defaults, SIGSTOP);
  posix_spawnattr_setsigmask(&attributes, &empty);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  started_ = std::chrono::steady_clock::now();
  const int rc = posix_spawn(&pid_, argv[0], &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("cannot start " + arguments.front() + ": " +
                             std::system_category().message(rc));
  }
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
}

CliProcess::~CliProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (pidfd_ >= 0) ::close(pidfd_);
}

void CliProcess::signal(int signal_number) const {
  if (pid_ > 0) ::kill(pid_, signal_number);
}

CliResult CliProcess::wait(std::chrono::milliseconds limit) {
  CliResult result;
  if (pid_ <= 0) return result;
  const auto deadline = started_ + limit;
  int status = 0;
  bool exited = false;
  while (!exited) {
    const pid_t got = waitpid(pid_, &status, WNOHANG);
    if (got == pid_) {
      exited = true;
      break;
    }
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    if (pidfd_ >= 0) {
      pollfd watched{pidfd_, POLLIN, 0};
      (void)::poll(&watched, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (!exited) {
    result.timed_out = true;
    ::kill(pid_, SIGKILL);
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started_);
  result.exit_code = exit_code_of(status);
  result.out = read_file(scratch_ / "stdout").value_or("");
  result.err = read_file(scratch_ / "stderr").value_or("");
  return result;
}

CliResult run_cli(std::vector<std::string> arguments, const CliOptions& options,
                  std::chrono::milliseconds limit) {
  CliProcess process(std::move(arguments), options);
  return process.wait(limit);
}

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

bool process_exists(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace redlock::test
