#include "redis_subscriber.hpp"

#include <hiredis/hiredis.h>
#include <sys/time.h>

namespace redlock::test {

namespace {
constexpr timeval kTimeout{5, 0};
}  // namespace

void RedisSubscriber::Free::operator()(redisContext* context) const { redisFree(context); }

RedisSubscriber::RedisSubscriber(std::uint16_t port, const std::vector<std::string>& channels) {
  context_.reset(redisConnectWithTimeout("127.0.0.1", port, kTimeout));
  if (context_ == nullptr || context_->err != 0) return;
  redisSetTimeout(context_.get(), kTimeout);
  std::vector<const char*> argv{"SUBSCRIBE"};
  std::vector<std::size_t> lengths{9};
  for (const std::string& channel : channels) {
    argv.push_back(channel.data());
    lengths.push_back(channel.size());
  }
  if (redisAppendCommandArgv(context_.get(), static_cast<int>(argv.size()), argv.data(),
                             lengths.data()) != REDIS_OK) {
    return;
  }
  // One confirmation per channel.
  for (std::size_t i = 0; i < channels.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(context_.get(), &raw) != REDIS_OK || raw == nullptr) return;
    auto* reply = static_cast<redisReply*>(raw);
    const bool confirmed = reply->type == REDIS_REPLY_ARRAY && reply->elements == 3;
    freeReplyObject(reply);
    if (!confirmed) return;
  }
  ok_ = true;
}

RedisSubscriber::~RedisSubscriber() = default;

RedisSubscriber::Message RedisSubscriber::next() {
  if (!ok_ || context_->err != 0) return {};
  void* raw = nullptr;
  if (redisGetReply(context_.get(), &raw) != REDIS_OK || raw == nullptr) return {};
  auto* reply = static_cast<redisReply*>(raw);
  Message message;
  if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 3 &&
      reply->element[1]->type == REDIS_REPLY_STRING &&
      reply->element[2]->type == REDIS_REPLY_STRING) {
    message.channel.assign(reply->element[1]->str, reply->element[1]->len);
    message.payload.assign(reply->element[2]->str, reply->element[2]->len);
  }
  freeReplyObject(reply);
  return message;
}

std::vector<RedisSubscriber::Message> RedisSubscriber::until(const std::string& marker) {
  std::vector<Message> before;
  for (;;) {
    Message message = next();
    if (message.channel.empty()) {
      before.push_back(std::move(message));
      return before;
    }
    if (message.payload == marker) return before;
    before.push_back(std::move(message));
  }
}

}  // namespace redlock::test
