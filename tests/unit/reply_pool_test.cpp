// The node connections' reply constructors (transport/reply_pool.hpp), fed
// with RESP bytes through a hiredis reader as a connection does.
#include "transport/reply_pool.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {
namespace {

// What a reader made with pooled_reply_functions() gives for `bytes`: the
// replies before the first error, and whether there was one.
struct ReadResult {
  std::vector<redisReply*> replies;
  bool failed = false;
  std::string error;
  ReadResult() = default;
  ReadResult(const ReadResult&) = delete;
  ReadResult& operator=(const ReadResult&) = delete;
  ~ReadResult() {
    for (redisReply* reply : replies) free_reply(reply);
  }
};

void read_all(std::string_view bytes, ReadResult& out) {
  redisReader* reader = redisReaderCreateWithFunctions(pooled_reply_functions());
  ASSERT_NE(reader, nullptr);
  ASSERT_EQ(redisReaderFeed(reader, bytes.data(), bytes.size()), REDIS_OK);
  for (;;) {
    void* reply = nullptr;
    if (redisReaderGetReply(reader, &reply) != REDIS_OK) {
      out.failed = true;
      out.error = reader->errstr;
      break;
    }
    if (reply == nullptr) break;
    out.replies.push_back(static_cast<redisReply*>(reply));
  }
  redisReaderFree(reader);
}

TEST(ReplyPool, ReadsIntegersArraysAndNestedReplies) {
  ReadResult read;
  read_all(":1\r\n*2\r\n:0\r\n*1\r\n$2\r\n41\r\n:7\r\n", read);
  ASSERT_FALSE(read.failed) << read.error;
  ASSERT_EQ(read.replies.size(), 3U);
  EXPECT_EQ(read.replies[0]->type, REDIS_REPLY_INTEGER);
  EXPECT_EQ(read.replies[0]->integer, 1);
  ASSERT_EQ(read.replies[1]->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(read.replies[1]->elements, 2U);
  EXPECT_EQ(read.replies[1]->element[0]->integer, 0);
  ASSERT_EQ(read.replies[1]->element[1]->elements, 1U);
  EXPECT_EQ(std::string(read.replies[1]->element[1]->element[0]->str), "41");
  EXPECT_EQ(read.replies[2]->integer, 7);
}

// Found by fuzz/fuzz_reply (corpus entry regress-huge-array-header): the
// header alone made hiredis allocate the element pointers of 285 million
// elements, 2.2 GB, before any element had arrived.
TEST(ReplyPool, RefusesAnArrayHeaderBeyondTheBound) {
  const std::vector<std::string> headers{"*285477508\r\n", "*2147483647\r\n",
                                         "*" + std::to_string(kMaxReplyArrayElements + 1) + "\r\n",
                                         "*2\r\n:1\r\n*2147483647\r\n"};  // nested
  for (const std::string& header : headers) {
    ReadResult read;
    read_all(header, read);
    EXPECT_TRUE(read.failed) << header;
    EXPECT_TRUE(read.replies.empty()) << header;
  }
}

TEST(ReplyPool, ReadsWhatCameBeforeARefusedHeader) {
  ReadResult read;
  read_all(":1\r\n*2\r\n:0\r\n:5\r\n*2147483647\r\n", read);
  EXPECT_TRUE(read.failed);
  ASSERT_EQ(read.replies.size(), 2U);
  EXPECT_EQ(read.replies[1]->elements, 2U);
}

}  // namespace
}  // namespace redlock::detail
