#include "worker_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

namespace redlock::chaos {

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (in_fd_ >= 0) ::close(in_fd_);
  if (out_fd_ >= 0) ::close(out_fd_);
}

bool WorkerProcess::spawn(const std::filesystem::path& executable,
                          const std::vector<std::string>& arguments,
                          const std::filesystem::path& stderr_file, std::string& error) {
  int to_child[2];
  int from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  if (::pipe2(from_child, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    ::close(to_child[0]);
    ::close(to_child[1]);
    return false;
  }
  const int err_fd = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  std::vector<std::string> storage;
  storage.push_back(executable.string());
  storage.insert(storage.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(to_child[0], STDIN_FILENO);
    ::dup2(from_child[1], STDOUT_FILENO);
    if (err_fd >= 0) ::dup2(err_fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  pid_ = pid;
  ::close(to_child[0]);
  ::close(from_child[1]);
  if (err_fd >= 0) ::close(err_fd);
  in_fd_ = to_child[1];
  out_fd_ = from_child[0];
  ::fcntl(out_fd_, F_SETFL, ::fcntl(out_fd_, F_GETFL) | O_NONBLOCK);
  return true;
}

bool WorkerProcess::send(const std::string& line) {
  if (in_fd_ < 0) return false;
  const std::string text = line + "\n";
  // Short lines to a pipe are written whole; SIGPIPE is ignored by the harness.
  return ::write(in_fd_, text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

std::vector<std::string> WorkerProcess::poll_lines() {
  std::vector<std::string> lines;
  if (out_fd_ < 0) return lines;
  char chunk[4096];
  for (;;) {
    const ssize_t count = ::read(out_fd_, chunk, sizeof chunk);
    if (count > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(count));
      continue;
    }
    if (count < 0 && errno == EINTR) continue;
    if (count == 0) {
      // EOF: the worker exited. Stop polling its pipe (poll skips -1).
      ::close(out_fd_);
      out_fd_ = -1;
    }
    break;  // EAGAIN or EOF: take what is complete
  }
  std::size_t newline = 0;
  while ((newline = buffer_.find('\n')) != std::string::npos) {
    lines.push_back(buffer_.substr(0, newline));
    buffer_.erase(0, newline + 1);
  }
  return lines;
}

void WorkerProcess::signal(int signal_number) const noexcept {
  if (pid_ > 0) ::kill(pid_, signal_number);
}

std::string WorkerProcess::describe_state() const {
  if (pid_ <= 0) return {};
  const std::filesystem::path proc = "/proc/" + std::to_string(pid_);
  auto read_all = [](const std::filesystem::path& path) {
    std::ifstream file(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(file), {});
  };
  // /proc/<pid>/stat: "pid (comm) state ..."; comm may hold spaces.
  const std::string stat = read_all(proc / "stat");
  const std::size_t after_comm = stat.rfind(')');
  const std::string state = after_comm != std::string::npos && after_comm + 2 < stat.size()
                                ? stat.substr(after_comm + 2, 1)
                                : "?";
  std::string wchan = read_all(proc / "wchan");
  if (wchan.empty() || wchan == "0") wchan = "-";
  std::error_code error;
  int threads = 0;
  for (auto it = std::filesystem::directory_iterator(proc / "task", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    ++threads;
  }
  return "state " + state + ", wchan " + wchan + ", " + std::to_string(threads) + " thread(s)";
}

bool WorkerProcess::stopped() {
  if (pid_ <= 0) return false;
  int status = 0;
  const pid_t changed = ::waitpid(pid_, &status, WNOHANG | WUNTRACED | WCONTINUED);
  if (changed == pid_) {
    if (WIFSTOPPED(status)) stopped_ = true;
    if (WIFCONTINUED(status)) stopped_ = false;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      pid_ = -1;
      stopped_ = false;
    }
  }
  return stopped_;
}

bool WorkerProcess::wait_exit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (pid_ > 0) {
    int status = 0;
    const pid_t changed = ::waitpid(pid_, &status, WNOHANG);
    if (changed == pid_) {
      exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      pid_ = -1;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace redlock::chaos
