#include "transport/reply_reader.hpp"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <limits>

#include "transport/reply_pool.hpp"

namespace redlock::detail {

// The reader whose reply is being built on this thread, and its budget:
// hiredis calls the object constructors only from inside
// redisReaderGetReply, so next() sets these around that call.
struct ReplyCharge {
  ReplyReader* reader = nullptr;
  std::size_t budget = 0;

  // False (and the reader marked over budget) when `cost` does not fit.
  bool take(std::size_t cost) const noexcept {
    ReplyReader& r = *reader;
    if (r.over_budget_ || cost > budget || r.charged_ > budget - cost) {
      r.over_budget_ = true;
      return false;
    }
    r.charged_ += cost;
    return true;
  }
};

namespace {

thread_local ReplyCharge current_charge;

constexpr std::size_t kObjectCost = sizeof(redisReply);

void* create_string(const redisReadTask* task, char* str, std::size_t len) {
  if (!current_charge.take(kObjectCost + len + 1)) return nullptr;
  return pooled_reply_functions()->createString(task, str, len);
}

void* create_array(const redisReadTask* task, int elements) {
  const std::size_t count = elements > 0 ? static_cast<std::size_t>(elements) : 0;
  // An element count no budget could hold fails here, before hiredis
  // allocates its pointer array.
  if (count > std::numeric_limits<std::size_t>::max() / sizeof(redisReply*) / 2 ||
      !current_charge.take(kObjectCost + count * sizeof(redisReply*))) {
    return nullptr;
  }
  return pooled_reply_functions()->createArray(task, elements);
}

void* create_integer(const redisReadTask* task, long long value) {
  if (!current_charge.take(kObjectCost)) return nullptr;
  return pooled_reply_functions()->createInteger(task, value);
}

void* create_nil(const redisReadTask* task) {
  if (!current_charge.take(kObjectCost)) return nullptr;
  return pooled_reply_functions()->createNil(task);
}

redisReplyObjectFunctions* charged_reply_functions() {
  static redisReplyObjectFunctions functions = [] {
    redisReplyObjectFunctions copy = *pooled_reply_functions();
    copy.createString = &create_string;
    copy.createArray = &create_array;
    copy.createInteger = &create_integer;
    copy.createNil = &create_nil;
    return copy;
  }();
  return &functions;
}

}  // namespace

std::string byte_size_text(std::size_t bytes) {
  constexpr std::size_t kKiB = 1024;
  constexpr std::size_t kMiB = kKiB * kKiB;
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes >= kKiB && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
  return std::to_string(bytes) + " bytes";
}

ReplyReader::ReplyReader() : reader_(redisReaderCreateWithFunctions(charged_reply_functions())) {}

ReplyReader::~ReplyReader() {
  if (reader_ != nullptr) redisReaderFree(reader_);
}

bool ReplyReader::feed(const char* data, std::size_t size) {
  if (reader_ == nullptr) {
    error_ = "out of memory";
    return false;
  }
  if (!error_.empty()) return false;
  if (redisReaderFeed(reader_, data, size) != REDIS_OK) {
    error_ = reader_->errstr;
    return false;
  }
  return true;
}

ReplyReader::Next ReplyReader::next(redisReply*& out, std::size_t budget) {
  out = nullptr;
  if (reader_ == nullptr || !error_.empty()) return Next::error;
  const ReplyCharge previous = current_charge;
  current_charge = ReplyCharge{this, budget};
  void* reply = nullptr;
  const int rc = redisReaderGetReply(reader_, &reply);
  current_charge = previous;
  // The error text is built only on the way out: next() runs once per reply.
  const auto over = [budget] { return "reply larger than " + byte_size_text(budget); };
  if (rc != REDIS_OK) {
    error_ = over_budget_ ? over() : std::string(reader_->errstr);
    return Next::error;
  }
  if (reply != nullptr) {
    charged_ = 0;
    out = static_cast<redisReply*>(reply);
    return Next::reply;
  }
  // What is buffered belongs to the item still arriving (a bulk string, an
  // error line without its end yet): it will cost at least its bytes.
  const std::size_t buffered = reader_->len - reader_->pos;
  if (charged_ > budget || buffered > budget - charged_) {
    error_ = over();
    return Next::error;
  }
  return Next::incomplete;
}

}  // namespace redlock::detail
