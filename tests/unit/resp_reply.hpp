// One hiredis reply read from its RESP bytes, for unit tests of what reads
// replies (tests/unit/set_acquire_test.cpp, server_facts_test.cpp).
#pragma once

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <memory>
#include <string>

namespace redlock::test {

struct FreeReply {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using OwnedReply = std::unique_ptr<redisReply, FreeReply>;

// The first reply `bytes` hold; null when they hold none whole.
inline OwnedReply reply_from_resp(const std::string& bytes) {
  redisReader* reader = redisReaderCreate();
  void* reply = nullptr;
  if (redisReaderFeed(reader, bytes.data(), bytes.size()) != REDIS_OK ||
      redisReaderGetReply(reader, &reply) != REDIS_OK) {
    reply = nullptr;
  }
  redisReaderFree(reader);
  return OwnedReply(static_cast<redisReply*>(reply));
}

}  // namespace redlock::test
