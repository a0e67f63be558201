#include "redis_probe.hpp"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <sys/time.h>

#include <cerrno>
#include <csignal>
#include <memory>
#include <utility>

namespace redlock::test {
namespace {

// hiredis writes with write(2), so a node that died under a test would kill
// the whole test binary with SIGPIPE. Ignoring SIGPIPE process-wide would
// change the behaviour of the code under test, so instead the signal is
// blocked on this thread for the duration of one call, and a SIGPIPE that the
// call raised is consumed before the mask is restored.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&sigpipe_);
    sigaddset(&sigpipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &sigpipe_, &previous_mask_);
  }
  ~ScopedSigpipeBlock() {
    if (!was_pending_) {
      sigset_t pending;
      sigemptyset(&pending);
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec no_wait{};
        while (sigtimedwait(&sigpipe_, nullptr, &no_wait) == -1 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t sigpipe_{};
  sigset_t previous_mask_{};
  bool was_pending_ = false;
};

timeval to_timeval(std::chrono::milliseconds duration) {
  const auto count = duration.count();
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(count / 1000);
  tv.tv_usec = static_cast<suseconds_t>((count % 1000) * 1000);
  return tv;
}

Reply convert(const redisReply& raw) {
  Reply reply;
  switch (raw.type) {
    case REDIS_REPLY_STATUS:
      reply.kind = Reply::Kind::status;
      reply.text.assign(raw.str, raw.len);
      break;
    case REDIS_REPLY_ERROR:
      reply.kind = Reply::Kind::error;
      reply.text.assign(raw.str, raw.len);
      break;
    case REDIS_REPLY_INTEGER:
      reply.kind = Reply::Kind::integer;
      reply.integer = raw.integer;
      break;
    case REDIS_REPLY_STRING:
      reply.kind = Reply::Kind::bulk_string;
      reply.text.assign(raw.str, raw.len);
      break;
    case REDIS_REPLY_NIL:
      reply.kind = Reply::Kind::nil;
      break;
    case REDIS_REPLY_ARRAY:
      reply.kind = Reply::Kind::array;
      reply.elements.reserve(raw.elements);
      for (size_t i = 0; i < raw.elements; ++i) {
        reply.elements.push_back(convert(*raw.element[i]));
      }
      break;
    default:
      reply.kind = Reply::Kind::io_error;
      reply.text = "unexpected reply type " + std::to_string(raw.type);
      break;
  }
  return reply;
}

}  // namespace

RedisProbe::RedisProbe(std::uint16_t port, std::chrono::milliseconds timeout)
    : RedisProbe("127.0.0.1", port, timeout) {}

RedisProbe::RedisProbe(std::string host, std::uint16_t port, std::chrono::milliseconds timeout)
    : host_(std::move(host)), port_(port), timeout_(timeout) {}

RedisProbe::~RedisProbe() { disconnect(); }

RedisProbe::RedisProbe(RedisProbe&& other) noexcept
    : host_(std::move(other.host_)),
      port_(other.port_),
      timeout_(other.timeout_),
      context_(std::exchange(other.context_, nullptr)),
      last_error_(std::move(other.last_error_)) {}

RedisProbe& RedisProbe::operator=(RedisProbe&& other) noexcept {
  if (this != &other) {
    disconnect();
    host_ = std::move(other.host_);
    port_ = other.port_;
    timeout_ = other.timeout_;
    context_ = std::exchange(other.context_, nullptr);
    last_error_ = std::move(other.last_error_);
  }
  return *this;
}

bool RedisProbe::connect() {
  if (context_ != nullptr) return true;
  const timeval tv = to_timeval(timeout_);
  context_ = redisConnectWithTimeout(host_.c_str(), port_, tv);
  if (context_ == nullptr) {
    last_error_ = "cannot allocate a hiredis context";
    return false;
  }
  if (context_->err != 0) {
    last_error_ = context_->errstr;
    disconnect();
    return false;
  }
  // The connect timeout does not cover commands; this one does.
  if (redisSetTimeout(context_, tv) != REDIS_OK) {
    last_error_ = context_->errstr;
    disconnect();
    return false;
  }
  return true;
}

void RedisProbe::disconnect() {
  if (context_ != nullptr) redisFree(std::exchange(context_, nullptr));
}

Reply RedisProbe::fail(const std::string& why) {
  last_error_ = host_ + ":" + std::to_string(port_) + ": " + why;
  Reply reply;
  reply.kind = Reply::Kind::io_error;
  reply.text = last_error_;
  return reply;
}

Reply RedisProbe::command(const std::vector<std::string>& argv) {
  last_error_.clear();
  if (argv.empty()) return fail("empty command");
  if (!connect()) return fail(last_error_);

  std::vector<const char*> arguments;
  std::vector<size_t> lengths;
  arguments.reserve(argv.size());
  lengths.reserve(argv.size());
  for (const std::string& argument : argv) {
    arguments.push_back(argument.data());
    lengths.push_back(argument.size());
  }

  void* raw = nullptr;
  {
    const ScopedSigpipeBlock no_sigpipe;
    raw =
        redisCommandArgv(context_, static_cast<int>(argv.size()), arguments.data(), lengths.data());
  }
  if (raw == nullptr) {
    // After an I/O error or timeout a late reply may still arrive, so the
    // connection cannot be reused.
    std::string why = context_->errstr;
    disconnect();
    return fail(why);
  }
  const std::unique_ptr<redisReply, decltype(&freeReplyObject)> owned(static_cast<redisReply*>(raw),
                                                                      &freeReplyObject);
  Reply reply = convert(*owned);
  if (reply.kind == Reply::Kind::error) last_error_ = reply.text;
  return reply;
}

bool RedisProbe::ping() {
  const Reply reply = command({"PING"});
  return reply.kind == Reply::Kind::status && reply.text == "PONG";
}

std::optional<std::string> RedisProbe::get(std::string_view key) {
  Reply reply = command({"GET", std::string(key)});
  if (reply.kind != Reply::Kind::bulk_string) return std::nullopt;
  return std::move(reply.text);
}

long long RedisProbe::pttl(std::string_view key) {
  const Reply reply = command({"PTTL", std::string(key)});
  return reply.kind == Reply::Kind::integer ? reply.integer : kError;
}

bool RedisProbe::exists(std::string_view key) {
  const Reply reply = command({"EXISTS", std::string(key)});
  return reply.kind == Reply::Kind::integer && reply.integer > 0;
}

std::vector<std::string> RedisProbe::keys(std::string_view pattern) {
  Reply reply = command({"KEYS", std::string(pattern)});
  std::vector<std::string> names;
  if (reply.kind != Reply::Kind::array) return names;
  names.reserve(reply.elements.size());
  for (Reply& element : reply.elements) names.push_back(std::move(element.text));
  return names;
}

bool RedisProbe::set(std::string_view key, std::string_view value,
                     std::optional<std::chrono::milliseconds> ttl) {
  std::vector<std::string> argv{"SET", std::string(key), std::string(value)};
  if (ttl) {
    argv.emplace_back("PX");
    argv.push_back(std::to_string(ttl->count()));
  }
  return command(argv).is_ok();
}

std::optional<std::string> RedisProbe::info(std::string_view section) {
  Reply reply = command({"INFO", std::string(section)});
  if (reply.kind != Reply::Kind::bulk_string) return std::nullopt;
  return std::move(reply.text);
}

std::optional<std::string> info_field(std::string_view info_text, std::string_view field) {
  size_t line_start = 0;
  while (line_start < info_text.size()) {
    size_t line_end = info_text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = info_text.size();
    std::string_view line = info_text.substr(line_start, line_end - line_start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > field.size() && line.substr(0, field.size()) == field &&
        line[field.size()] == ':') {
      return std::string(line.substr(field.size() + 1));
    }
    line_start = line_end + 1;
  }
  return std::nullopt;
}

}  // namespace redlock::test
