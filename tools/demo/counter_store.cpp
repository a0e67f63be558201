#include "counter_store.hpp"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <charconv>
#include <string_view>

namespace redlock::demo {

namespace {

// Bounds every connect and command, so a stuck store cannot hang a worker.
constexpr timeval kStoreTimeout{2, 0};

struct ReplyDeleter {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

}  // namespace

void CounterStore::ContextDeleter::operator()(redisContext* context) const noexcept {
  redisFree(context);
}

CounterStore::CounterStore(const StoreAddress& address, std::string key)
    : key_(std::move(key)), where_(address.host + ":" + std::to_string(address.port)) {
  context_.reset(redisConnectWithTimeout(address.host.c_str(), address.port, kStoreTimeout));
  if (!context_) {
    error_ = where_ + ": cannot allocate a hiredis context";
  } else if (context_->err != 0) {
    error_ = where_ + ": " + context_->errstr;
  } else if (redisSetTimeout(context_.get(), kStoreTimeout) != REDIS_OK) {
    error_ = where_ + ": cannot set the command timeout";
  }
}

CounterStore::~CounterStore() = default;

std::optional<std::int64_t> CounterStore::read() {
  if (!ok()) return std::nullopt;
  ReplyPtr reply(
      static_cast<redisReply*>(redisCommand(context_.get(), "GET %b", key_.data(), key_.size())));
  if (!reply) {
    error_ = where_ + ": GET failed: " + context_->errstr;
    return std::nullopt;
  }
  if (reply->type == REDIS_REPLY_NIL) return 0;
  std::int64_t value = 0;
  if (reply->type == REDIS_REPLY_STRING) {
    const char* end = reply->str + reply->len;
    auto [ptr, ec] = std::from_chars(reply->str, end, value);
    if (ec == std::errc() && ptr == end) return value;
  }
  error_ = where_ + ": GET " + key_ + " did not return an integer";
  return std::nullopt;
}

bool CounterStore::write(std::int64_t value) {
  if (!ok()) return false;
  const std::string text = std::to_string(value);
  ReplyPtr reply(static_cast<redisReply*>(redisCommand(context_.get(), "SET %b %b", key_.data(),
                                                       key_.size(), text.data(), text.size())));
  if (!reply) {
    error_ = where_ + ": SET failed: " + context_->errstr;
    return false;
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    error_ = where_ + ": SET " + key_ + ": " + std::string(reply->str, reply->len);
    return false;
  }
  if (reply->type != REDIS_REPLY_STATUS) {
    error_ = where_ + ": SET " + key_ + ": unexpected reply type " + std::to_string(reply->type);
    return false;
  }
  return true;
}

}  // namespace redlock::demo
