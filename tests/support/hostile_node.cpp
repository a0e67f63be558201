#include "hostile_node.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace redlock::test {
namespace {

constexpr int kMaxClients = 64;

struct Script {
  std::string preamble{};  // written once, after the first bytes came in
  std::string stream{};    // then written again and again (empty: nothing more)
  bool trickle = false;    // one byte of `stream` per tick instead
  std::string reply{};     // error_reply: written once per command received
};

Script script_for(HostileMode mode, const std::string& error_text) {
  std::string integers;
  for (int i = 0; i < 4096; ++i) integers += ":1\r\n";
  switch (mode) {
    case HostileMode::huge_array:
      return {.preamble = "*100000000\r\n", .stream = integers};
    case HostileMode::giant_array:
      return {.preamble = "*2147483647\r\n", .stream = integers};
    case HostileMode::endless_error:
      return {.preamble = "-ERR ", .stream = std::string(16384, 'a')};
    case HostileMode::endless_bulk:
      return {.preamble = "$1000000000\r\n", .stream = std::string(16384, 'x')};
    case HostileMode::silent:
      return {};
    case HostileMode::slow:
      return {.preamble = "+", .stream = "x", .trickle = true};
    case HostileMode::error_reply:
      return {.reply = "-" + error_text + "\r\n"};
  }
  return {};
}

// Counts the commands in the bytes a client sends — RESP arrays of bulk
// strings — as they arrive, in fixed memory (the child allocates nothing).
class CommandCounter {
 public:
  // Returns how many commands `data` completed.
  int feed(const char* data, std::size_t size) {
    int completed = 0;
    for (std::size_t i = 0; i < size; ++i) {
      const char c = data[i];
      switch (state_) {
        case State::array_mark:
          state_ = c == '*' ? State::array_count : State::array_mark;
          number_ = 0;
          break;
        case State::array_count:
        case State::bulk_length:
          if (c >= '0' && c <= '9') {
            number_ = number_ * 10 + (c - '0');
          } else if (c == '\n') {
            if (state_ == State::array_count) {
              left_ = number_;
              if (left_ == 0) ++completed;
              state_ = left_ == 0 ? State::array_mark : State::bulk_mark;
            } else {
              body_ = number_ + 2;  // the string and its CRLF
              state_ = State::bulk_body;
            }
          }
          break;
        case State::bulk_mark:
          state_ = c == '$' ? State::bulk_length : State::bulk_mark;
          number_ = 0;
          break;
        case State::bulk_body:
          if (--body_ == 0) {
            if (--left_ == 0) {
              ++completed;
              state_ = State::array_mark;
            } else {
              state_ = State::bulk_mark;
            }
          }
          break;
      }
    }
    return completed;
  }

 private:
  enum class State { array_mark, array_count, bulk_mark, bulk_length, bulk_body };
  State state_ = State::array_mark;
  long long number_ = 0;
  long long left_ = 0;
  long long body_ = 0;
};

struct Client {
  int fd = -1;
  bool started = false;  // has sent something: the node answers now
  std::size_t preamble_at = 0;
  std::size_t stream_at = 0;
  CommandCounter commands;
  long long replies_owed = 0;  // error_reply
  std::size_t reply_at = 0;    // of the reply being written
};

[[noreturn]] void serve(int listener, const Script& script) {
  std::array<Client, kMaxClients> clients{};
  std::array<pollfd, kMaxClients + 1> fds{};
  std::array<char, 65536> sink{};
  timespec last_tick{};
  ::clock_gettime(CLOCK_MONOTONIC, &last_tick);
  for (;;) {
    std::size_t count = 0;
    fds[count++] = pollfd{listener, POLLIN, 0};
    for (Client& client : clients) {
      if (client.fd < 0) continue;
      short events = POLLIN;
      if (client.started && !script.trickle &&
          (client.preamble_at < script.preamble.size() || !script.stream.empty() ||
           client.replies_owed > 0)) {
        events |= POLLOUT;
      }
      fds[count++] = pollfd{client.fd, events, 0};
    }
    ::poll(fds.data(), count, script.trickle ? 20 : 200);
    if ((fds[0].revents & POLLIN) != 0) {
      const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK);
      bool placed = false;
      for (Client& client : clients) {
        if (fd >= 0 && client.fd < 0) {
          client = Client{};
          client.fd = fd;
          placed = true;
          break;
        }
      }
      if (fd >= 0 && !placed) ::close(fd);
    }
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    const long since_tick_ms =
        (now.tv_sec - last_tick.tv_sec) * 1000 + (now.tv_nsec - last_tick.tv_nsec) / 1000000;
    const bool tick = since_tick_ms >= 250;
    if (tick) last_tick = now;
    for (Client& client : clients) {
      if (client.fd < 0) continue;
      const ssize_t got = ::recv(client.fd, sink.data(), sink.size(), MSG_DONTWAIT);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
        ::close(client.fd);
        client = Client{};
        continue;
      }
      if (got > 0) {
        client.started = true;
        client.replies_owed += client.commands.feed(sink.data(), static_cast<std::size_t>(got));
      }
      if (!client.started) continue;
      ssize_t sent = 0;
      if (!script.reply.empty()) {
        if (client.replies_owed > 0) {
          sent = ::send(client.fd, script.reply.data() + client.reply_at,
                        script.reply.size() - client.reply_at, MSG_NOSIGNAL | MSG_DONTWAIT);
          if (sent > 0) client.reply_at += static_cast<std::size_t>(sent);
          if (client.reply_at == script.reply.size()) {
            client.reply_at = 0;
            --client.replies_owed;
          }
        }
      } else if (client.preamble_at < script.preamble.size()) {
        sent = ::send(client.fd, script.preamble.data() + client.preamble_at,
                      script.preamble.size() - client.preamble_at, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent > 0) client.preamble_at += static_cast<std::size_t>(sent);
      } else if (!script.stream.empty() && (!script.trickle || tick)) {
        const std::size_t want = script.trickle ? 1 : script.stream.size() - client.stream_at;
        sent = ::send(client.fd, script.stream.data() + client.stream_at, want,
                      MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent > 0) {
          client.stream_at =
              (client.stream_at + static_cast<std::size_t>(sent)) % script.stream.size();
        }
      }
      if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        ::close(client.fd);
        client = Client{};
      }
    }
  }
}

}  // namespace

std::string_view hostile_mode_name(HostileMode mode) {
  switch (mode) {
    case HostileMode::huge_array:
      return "huge_array";
    case HostileMode::giant_array:
      return "giant_array";
    case HostileMode::endless_error:
      return "endless_error";
    case HostileMode::endless_bulk:
      return "endless_bulk";
    case HostileMode::silent:
      return "silent";
    case HostileMode::slow:
      return "slow";
    case HostileMode::error_reply:
      return "error_reply";
  }
  return "unknown";
}

HostileNode::HostileNode(HostileMode mode) { start(mode, "ERR hostile"); }

HostileNode::HostileNode(std::string error_text) { start(HostileMode::error_reply, error_text); }

std::string HostileNode::address() const { return "127.0.0.1:" + std::to_string(port_); }

void HostileNode::start(HostileMode mode, const std::string& error_text) {
  const Script script = script_for(mode, error_text);
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) throw std::runtime_error("hostile node: socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener, 64) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(listener);
    throw std::runtime_error("hostile node: cannot listen on 127.0.0.1");
  }
  port_ = ntohs(address.sin_port);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(126);
    ::fcntl(listener, F_SETFL, O_NONBLOCK);
    serve(listener, script);
  }
  ::close(listener);
  if (pid_ < 0) throw std::runtime_error("hostile node: fork failed");
}

HostileNode::~HostileNode() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

long resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string word;
  while (status >> word) {
    if (word == "VmRSS:") {
      long kib = 0;
      status >> kib;
      return kib;
    }
  }
  return -1;
}

}  // namespace redlock::test
