#include "transport/blocking_session.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <system_error>
#include <utility>

#include "text/escape.hpp"
#include "transport/reply_reader.hpp"
#include "transport/resp_writer.hpp"
#include "transport/tls_session.hpp"

namespace redlock::detail {
namespace {

timeval to_timeval(Milliseconds duration) {
  timeval value{};
  value.tv_sec = static_cast<time_t>(duration.count() / 1000);
  value.tv_usec = static_cast<suseconds_t>((duration.count() % 1000) * 1000);
  return value;
}

// How long to wait before connecting again to a Unix socket whose backlog
// was full.
constexpr Milliseconds kBusyRetryPause{10};

std::string timed_out(Milliseconds budget) {
  return "timed out after " + std::to_string(budget.count()) + " ms";
}

}  // namespace

BlockingSession::BlockingSession(NodeConfig node)
    : node_(std::move(node)), deadline_(SteadyClock::now()) {}

BlockingSession::~BlockingSession() {
  tls_.reset();
  if (context_ != nullptr) redisFree(context_);
}

void BlockingSession::set_deadline(SteadyClock::time_point deadline, Milliseconds budget) noexcept {
  deadline_ = deadline;
  budget_ = budget;
}

int BlockingSession::fd() const noexcept { return context_->fd; }

bool BlockingSession::fail(const std::string& what, const std::string& why) {
  if (failure_.empty()) failure_ = what + ": " + why;
  return false;
}

bool BlockingSession::open() {
  if (failed()) return false;
  if (!connect_until_deadline()) return false;
  if (node_.tls.enabled && !start_tls()) return false;
  if (!node_.password.empty()) {
    std::vector<std::string> auth{"AUTH"};
    if (!node_.username.empty()) auth.push_back(node_.username);
    auth.push_back(node_.password);
    BlockingReply reply = command(auth);
    if (!reply) return false;
    // Redis's AUTH errors never repeat the password.
    if (reply->type == REDIS_REPLY_ERROR) {
      failure_ = "AUTH failed: " + escape_text(std::string_view(reply->str, reply->len));
      return false;
    }
  }
  if (node_.db != 0) {
    BlockingReply reply = command({"SELECT", std::to_string(node_.db)});
    if (!reply) return false;
    if (reply->type == REDIS_REPLY_ERROR) {
      failure_ = "SELECT failed: " + escape_text(std::string_view(reply->str, reply->len));
      return false;
    }
  }
  return true;
}

bool BlockingSession::connect_until_deadline() {
  for (;;) {
    const auto left = std::chrono::ceil<Milliseconds>(deadline_ - SteadyClock::now());
    if (left.count() <= 0) return fail("connect", timed_out(budget_));
    const timeval limit = to_timeval(left);
    context_ = node_.unix_path.empty()
                   ? redisConnectWithTimeout(node_.host.c_str(), node_.port, limit)
                   : redisConnectUnixWithTimeout(node_.unix_path.c_str(), limit);
    if (context_ == nullptr) return fail("connect", "cannot allocate a connection");
    if (context_->err == 0) return true;
    // hiredis reports its own connect timeout as ETIMEDOUT. A Unix socket
    // whose listener has a full backlog (a node that accepts nothing)
    // refuses at once with EAGAIN, where TCP would wait: that too is a
    // node that has not answered yet, so try again until the deadline and
    // then say it timed out, not "Resource temporarily unavailable".
    const int reason = errno;
    const bool busy = !node_.unix_path.empty() && (reason == EAGAIN || reason == EWOULDBLOCK);
    if (!busy) {
      const bool expired = reason == ETIMEDOUT || SteadyClock::now() >= deadline_;
      return fail("connect", expired ? timed_out(budget_) : escape_text(context_->errstr));
    }
    redisFree(context_);
    context_ = nullptr;
    const auto pause =
        std::min(kBusyRetryPause, std::chrono::ceil<Milliseconds>(deadline_ - SteadyClock::now()));
    if (pause.count() > 0) ::poll(nullptr, 0, static_cast<int>(pause.count()));
  }
}

bool BlockingSession::start_tls() {
  std::string hello;
  std::string error;
  tls_ = TlsSession::open(node_, hello, error);
  if (!tls_) return fail("connect", error);
  if (!send_all(std::move(hello), "connect", true)) return false;
  while (!tls_->established()) {
    if (receive("connect") < 0) return false;
  }
  return true;
}

BlockingReply BlockingSession::command(const std::vector<std::string>& words) {
  if (failed() || context_ == nullptr || words.empty()) return nullptr;
  const std::string& what = words.front();
  std::string encoded;
  append_array_header(encoded, words.size());
  for (const std::string& word : words) append_bulk(encoded, word);
  if (!send_all(std::move(encoded), what)) return nullptr;
  std::size_t received = 0;
  for (;;) {
    void* reply = nullptr;
    if (redisGetReplyFromReader(context_, &reply) != REDIS_OK) {
      fail(what, "protocol error: " + escape_text(context_->errstr));
      return nullptr;
    }
    if (reply != nullptr) return BlockingReply(static_cast<redisReply*>(reply));
    // What the reader holds unparsed, and all that this reply has sent:
    // a bulk string or an error line is buffered whole until it ends.
    const redisReader& reader = *context_->reader;
    if (reader.len - reader.pos > kMaxReplyBytes || received > kMaxReplyBytes) {
      fail(what, "protocol error: reply larger than " + byte_size_text(kMaxReplyBytes));
      return nullptr;
    }
    const long got = receive(what);
    if (got < 0) return nullptr;
    received += static_cast<std::size_t>(got);
  }
}

bool BlockingSession::send_all(std::string bytes, const std::string& what, bool encrypted) {
  if (tls_ && !encrypted) {
    std::string ciphertext;
    if (!tls_->encrypt(bytes, ciphertext)) return fail(what, tls_->error());
    bytes.swap(ciphertext);
  }
  std::string_view left = bytes;
  while (!left.empty()) {
    if (!wait_for(POLLOUT, what)) return false;
    const ssize_t sent = ::send(fd(), left.data(), left.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      return fail(what, std::generic_category().message(errno));
    }
    left.remove_prefix(static_cast<std::size_t>(sent));
  }
  return true;
}

long BlockingSession::receive(const std::string& what) {
  if (!wait_for(POLLIN, what)) return -1;
  char buffer[16384];
  const ssize_t count = ::recv(fd(), buffer, sizeof buffer, MSG_DONTWAIT);
  if (count == 0) return fail(what, "the node closed the connection"), -1;
  if (count < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
    return fail(what, std::generic_category().message(errno)), -1;
  }
  const auto size = static_cast<std::size_t>(count);
  if (!tls_) {
    if (redisReaderFeed(context_->reader, buffer, size) != REDIS_OK) {
      return fail(what, "cannot allocate the reply"), -1;
    }
    return count;
  }
  std::string answer;
  if (!tls_->receive(buffer, size, answer)) return fail(what, tls_->error()), -1;
  if (!answer.empty() && !send_all(std::move(answer), what, true)) return -1;
  for (;;) {
    const long plain = tls_->read(buffer, sizeof buffer);
    if (plain < 0) return fail(what, tls_->error()), -1;
    if (plain == 0) return count;
    if (redisReaderFeed(context_->reader, buffer, static_cast<std::size_t>(plain)) != REDIS_OK) {
      return fail(what, "cannot allocate the reply"), -1;
    }
  }
}

bool BlockingSession::wait_for(short events, const std::string& what) {
  for (;;) {
    const auto left = std::chrono::ceil<Milliseconds>(deadline_ - SteadyClock::now());
    if (left.count() <= 0) return fail(what, timed_out(budget_));
    pollfd watched{fd(), events, 0};
    const int ready = ::poll(&watched, 1, static_cast<int>(left.count()));
    if (ready > 0) return true;  // readable, writable, or an error the I/O will report
    if (ready < 0 && errno != EINTR) return fail(what, std::generic_category().message(errno));
  }
}

}  // namespace redlock::detail
