#include "redlock/fence_gate.hpp"

#include <hiredis/hiredis.h>

#include <charconv>
#include <chrono>
#include <cstring>
#include <string>

#include "scripts/sha1.hpp"
#include "text/escape.hpp"
#include "transport/blocking_session.hpp"

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

using ReplyPtr = detail::BlockingReply;
using detail::escape_text;

std::uint64_t to_token(const redisReply* reply) {
  std::uint64_t value = 0;
  if (reply != nullptr && reply->type == REDIS_REPLY_STRING) {
    std::from_chars(reply->str, reply->str + reply->len, value);
  }
  return value;
}

}  // namespace

// The store's session, opened on first use and again after a failure;
// each command is bounded by the gate's timeout.
class FenceGate::Connection {
 public:
  Connection(NodeConfig store, Milliseconds timeout)
      : store_(std::move(store)), timeout_(timeout), sha_(detail::sha1_hex(kGateScript)) {}

  // Runs a command; nullptr (with `error`) on failure, which also drops the
  // session so the next call reconnects.
  ReplyPtr command(const std::vector<std::string>& argv, std::string& error) {
    if (!session_) {
      session_ = std::make_unique<detail::BlockingSession>(store_);
      session_->set_deadline(SteadyClock::now() + timeout_, timeout_);
      if (!session_->open()) return drop(error);
    }
    session_->set_deadline(SteadyClock::now() + timeout_, timeout_);
    ReplyPtr reply = session_->command(argv);
    if (!reply) return drop(error);
    return reply;
  }

  const std::string& sha() const noexcept { return sha_; }

 private:
  ReplyPtr drop(std::string& error) {
    error = "resource store " + escape_text(store_.name) + ": " + session_->failure();
    session_.reset();
    return nullptr;
  }

  NodeConfig store_;
  Milliseconds timeout_;
  std::string sha_;
  std::unique_ptr<detail::BlockingSession> session_;
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
  std::vector<std::string> argv{"EVALSHA",  connection_->sha(), "2", std::string(key), mark_key,
                                token_text, std::string(op)};
  if (!argument.empty() || op == "set" || op == "rpush") argv.emplace_back(argument);
  ReplyPtr reply = connection_->command(argv, result.detail);
  if (reply && reply->type == REDIS_REPLY_ERROR && std::strncmp(reply->str, "NOSCRIPT", 8) == 0) {
    argv[0] = "EVAL";
    argv[1] = std::string(kGateScript);
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
