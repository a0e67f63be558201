#include "fake_node.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <stdexcept>
#include <system_error>

extern char** environ;  // NOLINT(readability-redundant-declaration)

#ifndef FAKE_NODE_SCRIPT
#error "FAKE_NODE_SCRIPT must name tests/cli/fake_node.py"
#endif

namespace redlock::test {
namespace {

// Reads the script's first line (its port) from `fd`, waiting at most ten
// seconds in all.
std::string first_line(int fd) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string line;
  while (line.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        give_up - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw std::runtime_error("fake node: no port within 10 s");
    pollfd watched{fd, POLLIN, 0};
    const int ready = ::poll(&watched, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[64];
    const ssize_t count = ::read(fd, buffer, sizeof buffer);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) throw std::runtime_error("fake node: exited before printing its port");
    line.append(buffer, static_cast<std::size_t>(count));
  }
  return line.substr(0, line.find('\n'));
}

}  // namespace

FakeNode::FakeNode(const std::vector<std::string>& arguments) {
  int pipe_fds[2] = {-1, -1};
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::runtime_error("fake node: pipe: " + std::system_category().message(errno));
  }
  std::vector<std::string> words{"python3", FAKE_NODE_SCRIPT};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  const int rc = posix_spawnp(&pid_, "python3", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    pid_ = -1;
    throw std::runtime_error("fake node: cannot start python3: " +
                             std::system_category().message(rc));
  }
  try {
    port_ = static_cast<std::uint16_t>(std::stoi(first_line(pipe_fds[0])));
  } catch (...) {
    ::close(pipe_fds[0]);
    ::kill(pid_, SIGKILL);
    (void)::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    throw;
  }
  ::close(pipe_fds[0]);
}

FakeNode::~FakeNode() {
  if (pid_ <= 0) return;
  (void)::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

std::string FakeNode::address() const { return "127.0.0.1:" + std::to_string(port_); }

}  // namespace redlock::test
