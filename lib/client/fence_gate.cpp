#include "redlock/fence_gate.hpp"

#include <hiredis/hiredis.h>

#include <charconv>
#include <chrono>
#include <cstring>
#include <string>

#include "scripts/sha1.hpp"
#include "text/escape.hpp"
#include "transport/sigpipe_guard.hpp"

namespace redlock {

namespace {

constexpr std::string_view kGateScript = R"lua(
local token = tonumber(ARGV[1])
local raw = redis.call('GET', KEYS[2])
local mark = tonumber(raw or '0')
if token < mark then
  return {0, raw}
end
if token > mark then
  redis.call('SET', KEYS[2], ARGV[1])
  raw = ARGV[1]
end
local op = ARGV[2]
local result
if op == 'get' then
  result = redis.call('GET', KEYS[1])
elseif op == 'set' then
  result = redis.call('SET', KEYS[1], ARGV[3]).ok
elseif op == 'incrby' then
  result = redis.call('INCRBY', KEYS[1], ARGV[3])
elseif op == 'rpush' then
  result = redis.call('RPUSH', KEYS[1], ARGV[3])
elseif op == 'lrange' then
  result = redis.call('LRANGE', KEYS[1], 0, -1)
else
  return redis.error_reply('fence gate: unknown operation ' .. tostring(op))
end
return {1, result, raw or '0'}
)lua";

struct ReplyDeleter {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;
using detail::escape_text;
using detail::ScopedSigpipeBlock;

std::uint64_t to_token(const redisReply* reply) {
  std::uint64_t value = 0;
  if (reply != nullptr && reply->type == REDIS_REPLY_STRING) {
    std::from_chars(reply->str, reply->str + reply->len, value);
  }
  return value;
}

}  // namespace

class FenceGate::Connection {
 public:
  Connection(NodeConfig store, Milliseconds timeout)
      : store_(std::move(store)), timeout_(timeout), sha_(detail::sha1_hex(kGateScript)) {}
  ~Connection() { drop(); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs a command; nullptr (with `error`) on I/O failure, which also drops
  // the connection so the next call reconnects.
  ReplyPtr command(const std::vector<std::string_view>& argv, std::string& error) {
    const ScopedSigpipeBlock no_sigpipe;
    if (context_ == nullptr && !connect(error)) return nullptr;
    std::vector<const char*> pointers;
    std::vector<std::size_t> lengths;
    for (std::string_view arg : argv) {
      pointers.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    void* raw =
        redisCommandArgv(context_, static_cast<int>(argv.size()), pointers.data(), lengths.data());
    if (raw == nullptr) {
      error = std::string("resource store ") + store_.name + ": " +
              (context_->errstr[0] != '\0' ? escape_text(context_->errstr) : "no reply");
      drop();
      return nullptr;
    }
    return ReplyPtr(static_cast<redisReply*>(raw));
  }

  const std::string& sha() const noexcept { return sha_; }

 private:
  bool connect(std::string& error) {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout_);
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(seconds.count());
    tv.tv_usec = static_cast<suseconds_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(timeout_ - seconds).count());
    context_ = redisConnectWithTimeout(store_.host.c_str(), store_.port, tv);
    if (context_ == nullptr || context_->err != 0) {
      error = "resource store " + store_.name + ": " +
              (context_ != nullptr ? escape_text(context_->errstr) : std::string("out of memory"));
      drop();
      return false;
    }
    redisSetTimeout(context_, tv);
    if (!store_.password.empty()) {
      const std::vector<std::string_view> auth =
          store_.username.empty()
              ? std::vector<std::string_view>{"AUTH", store_.password}
              : std::vector<std::string_view>{"AUTH", store_.username, store_.password};
      if (!expect_ok(auth, "AUTH", error)) return false;
    }
    if (store_.db != 0) {
      const std::string db = std::to_string(store_.db);
      if (!expect_ok({"SELECT", db}, "SELECT", error)) return false;
    }
    return true;
  }

  bool expect_ok(const std::vector<std::string_view>& argv, const char* what, std::string& error) {
    ReplyPtr reply = command(argv, error);
    if (!reply) return false;
    if (reply->type == REDIS_REPLY_ERROR) {
      error = "resource store " + store_.name + ": " + what +
              " failed: " + escape_text(std::string_view(reply->str, reply->len));
      drop();
      return false;
    }
    return true;
  }

  void drop() {
    if (context_ != nullptr) redisFree(context_);
    context_ = nullptr;
  }

  NodeConfig store_;
  Milliseconds timeout_;
  std::string sha_;
  redisContext* context_ = nullptr;
};

FenceGate::FenceGate(NodeConfig store, Milliseconds timeout, std::shared_ptr<Metrics> metrics)
    : connection_(std::make_unique<Connection>(std::move(store), timeout)),
      metrics_(std::move(metrics)) {}
FenceGate::~FenceGate() = default;
FenceGate::FenceGate(FenceGate&&) noexcept = default;
FenceGate& FenceGate::operator=(FenceGate&&) noexcept = default;

std::string_view FenceGate::script() noexcept { return kGateScript; }

FencedResult FenceGate::run(std::string_view key, std::uint64_t token, std::string_view op,
                            std::string_view argument, std::vector<std::string>* entries) {
  FencedResult result;
  const std::string mark_key = std::string(key) + ":fence";
  const std::string token_text = std::to_string(token);
  std::vector<std::string_view> argv{"EVALSHA", connection_->sha(), "2", key,
                                     mark_key,  token_text,         op};
  if (!argument.empty() || op == "set" || op == "rpush") argv.push_back(argument);
  ReplyPtr reply = connection_->command(argv, result.detail);
  if (reply && reply->type == REDIS_REPLY_ERROR && std::strncmp(reply->str, "NOSCRIPT", 8) == 0) {
    argv[0] = "EVAL";
    argv[1] = kGateScript;
    reply = connection_->command(argv, result.detail);
  }
  if (!reply) {
    result.error = make_error_code(errc::node_error);
    return result;
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    result.error = make_error_code(errc::node_error);
    result.detail = escape_text(std::string_view(reply->str, reply->len));
    return result;
  }
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 ||
      reply->element[0]->type != REDIS_REPLY_INTEGER) {
    result.error = make_error_code(errc::node_error);
    result.detail = "fence gate: unexpected reply";
    return result;
  }
  if (reply->element[0]->integer == 0) {
    result.error = make_error_code(errc::fenced_out);
    if (metrics_) metrics_->fenced_out.fetch_add(1, std::memory_order_relaxed);
    result.high_water_mark = to_token(reply->element[1]);
    result.detail = "token " + token_text + " is below the resource's mark " +
                    std::to_string(result.high_water_mark);
    return result;
  }
  const redisReply* value = reply->element[1];
  if (reply->elements >= 3) result.high_water_mark = to_token(reply->element[2]);
  switch (value->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      result.value = std::string(value->str, value->len);
      break;
    case REDIS_REPLY_INTEGER:
      result.integer = value->integer;
      break;
    case REDIS_REPLY_ARRAY:
      if (entries != nullptr) {
        entries->clear();
        for (std::size_t i = 0; i < value->elements; ++i) {
          entries->emplace_back(value->element[i]->str, value->element[i]->len);
        }
      }
      break;
    default:
      break;
  }
  return result;
}

FencedResult FenceGate::get(std::string_view key, std::uint64_t token) {
  return run(key, token, "get", {}, nullptr);
}

FencedResult FenceGate::set(std::string_view key, std::uint64_t token, std::string_view value) {
  return run(key, token, "set", value, nullptr);
}

FencedResult FenceGate::incr_by(std::string_view key, std::uint64_t token, long long delta) {
  const std::string text = std::to_string(delta);
  return run(key, token, "incrby", text, nullptr);
}

FencedResult FenceGate::append(std::string_view key, std::uint64_t token, std::string_view entry) {
  return run(key, token, "rpush", entry, nullptr);
}

FencedResult FenceGate::read_log(std::string_view key, std::uint64_t token,
                                 std::vector<std::string>& entries) {
  return run(key, token, "lrange", {}, &entries);
}

}  // namespace redlock
