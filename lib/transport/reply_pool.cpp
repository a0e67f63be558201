#include "transport/reply_pool.hpp"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <cstdlib>
#include <vector>

namespace redlock::detail {

namespace {

// Set once this thread's IntegerReplyPool is destroyed (trivially
// destructible, so it stays readable until the thread ends): a reply freed
// later goes straight back to the allocator.
thread_local bool integer_reply_pool_gone = false;

// Integer replies (the answer to every extend and release, alone or as an
// element of a batched call's answer) are kept for reuse instead of going
// back to the allocator: with thousands of guards renewing, they were five
// allocations and frees per renewal. They
// are plain malloc'd redisReply objects, so hiredis may still free one
// itself (on a protocol error). Nested replies and every other type are
// hiredis's own. One pool per thread: replies live on the loop thread.
class IntegerReplyPool {
 public:
  IntegerReplyPool() = default;
  IntegerReplyPool(const IntegerReplyPool&) = delete;
  IntegerReplyPool& operator=(const IntegerReplyPool&) = delete;
  ~IntegerReplyPool() {
    integer_reply_pool_gone = true;
    for (redisReply* reply : free_) std::free(reply);
  }
  [[nodiscard]] redisReply* take() noexcept {
    if (free_.empty()) return static_cast<redisReply*>(std::calloc(1, sizeof(redisReply)));
    redisReply* reply = free_.back();
    free_.pop_back();
    *reply = redisReply{};
    return reply;
  }
  void give_back(redisReply* reply) noexcept {
    if (free_.size() >= kMaxKept) {
      std::free(reply);
      return;
    }
    try {
      free_.push_back(reply);
    } catch (...) {
      std::free(reply);
    }
  }

 private:
  // A batched answer's elements come back all at once: room for the
  // batches of a node's turn at 100 000 held locks.
  static constexpr std::size_t kMaxKept = 16384;
  std::vector<redisReply*> free_;
};

thread_local IntegerReplyPool integer_reply_pool;

redisReply* take_integer_reply() noexcept {
  if (integer_reply_pool_gone) return static_cast<redisReply*>(std::calloc(1, sizeof(redisReply)));
  return integer_reply_pool.take();
}

void give_back_integer_reply(redisReply* reply) noexcept {
  if (integer_reply_pool_gone) {
    std::free(reply);
  } else {
    integer_reply_pool.give_back(reply);
  }
}

// hiredis's own reply constructors, as a reader is created with them.
const redisReplyObjectFunctions& hiredis_reply_functions() {
  static const redisReplyObjectFunctions functions = [] {
    redisReader* reader = redisReaderCreate();
    const redisReplyObjectFunctions copy = *reader->fn;
    redisReaderFree(reader);
    return copy;
  }();
  return functions;
}

void* create_integer_reply(const redisReadTask* task, long long value) {
  redisReply* reply = take_integer_reply();
  if (reply == nullptr) return nullptr;
  reply->type = REDIS_REPLY_INTEGER;
  reply->integer = value;
  // An element of an aggregate (a batched call's answer: an integer per
  // request) goes into its parent's slot, as hiredis's own constructor does.
  if (task->parent != nullptr) {
    auto* parent = static_cast<redisReply*>(task->parent->obj);
    parent->element[task->idx] = reply;
  }
  return reply;
}

}  // namespace

redisReplyObjectFunctions* pooled_reply_functions() {
  static redisReplyObjectFunctions functions = [] {
    redisReplyObjectFunctions copy = hiredis_reply_functions();
    copy.createInteger = &create_integer_reply;
    return copy;
  }();
  return &functions;
}

void free_reply(redisReply* reply) noexcept {
  // An integer, at the top or as an element of the top level, always comes
  // from create_integer_reply. Deeper ones go back to the allocator with
  // their parent (freeReplyObject frees them; they are plain calloc'd
  // objects).
  if (reply->type == REDIS_REPLY_INTEGER) {
    give_back_integer_reply(reply);
    return;
  }
  if (reply->type == REDIS_REPLY_ARRAY && reply->element != nullptr) {
    for (std::size_t i = 0; i < reply->elements; ++i) {
      redisReply* element = reply->element[i];
      if (element != nullptr && element->type == REDIS_REPLY_INTEGER) {
        give_back_integer_reply(element);
        reply->element[i] = nullptr;  // freeReplyObject skips it
      }
    }
  }
  freeReplyObject(reply);
}

}  // namespace redlock::detail
