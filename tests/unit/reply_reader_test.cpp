// The reply reader's budget (transport/reply_reader.hpp): what a node may
// make the client hold for one reply, whatever it sends.
#include "transport/reply_reader.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <string>

#include "transport/reply_pool.hpp"

namespace redlock::detail {
namespace {

constexpr std::size_t kBudget = 64 * 1024;

struct Read {
  ReplyReader::Next next;
  redisReply* reply = nullptr;
  ~Read() {
    if (reply != nullptr) free_reply(reply);
  }
};

ReplyReader::Next next_of(ReplyReader& reader, std::size_t budget, redisReply** kept = nullptr) {
  redisReply* reply = nullptr;
  const ReplyReader::Next next = reader.next(reply, budget);
  if (kept != nullptr) {
    *kept = reply;
  } else if (reply != nullptr) {
    free_reply(reply);
  }
  return next;
}

TEST(ReplyReader, ReadsWhatTheLockScriptsAnswer) {
  ReplyReader reader;
  const std::string batch = "*2\r\n*2\r\n:1\r\n$2\r\n41\r\n*2\r\n:0\r\n:1500\r\n:1\r\n";
  ASSERT_TRUE(reader.feed(batch.data(), batch.size()));
  redisReply* reply = nullptr;
  ASSERT_EQ(next_of(reader, kBudget, &reply), ReplyReader::Next::reply);
  ASSERT_EQ(reply->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(reply->elements, 2U);
  EXPECT_EQ(std::string(reply->element[0]->element[1]->str), "41");
  EXPECT_EQ(reply->element[1]->element[1]->integer, 1500);
  free_reply(reply);
  ASSERT_EQ(next_of(reader, kBudget, &reply), ReplyReader::Next::reply);
  EXPECT_EQ(reply->integer, 1);
  free_reply(reply);
  EXPECT_EQ(next_of(reader, kBudget), ReplyReader::Next::incomplete);
}

TEST(ReplyReader, IntegersOfABatchedAnswerAreReusedIntact) {
  // A batched extend's answer is an integer per request; they go back to
  // the pool with the array and come out of it as fresh replies, nested
  // ones included (freed with their parent).
  ReplyReader reader;
  const std::string first = "*3\r\n:1\r\n:0\r\n*1\r\n:7\r\n";
  const std::string second = "*4\r\n:10\r\n:11\r\n$1\r\nx\r\n:12\r\n:13\r\n";
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(reader.feed(first.data(), first.size()));
    redisReply* reply = nullptr;
    ASSERT_EQ(next_of(reader, kBudget, &reply), ReplyReader::Next::reply);
    ASSERT_EQ(reply->elements, 3U);
    EXPECT_EQ(reply->element[0]->type, REDIS_REPLY_INTEGER);
    EXPECT_EQ(reply->element[0]->integer, 1);
    EXPECT_EQ(reply->element[1]->integer, 0);
    ASSERT_EQ(reply->element[2]->elements, 1U);
    EXPECT_EQ(reply->element[2]->element[0]->integer, 7);
    free_reply(reply);
    ASSERT_TRUE(reader.feed(second.data(), second.size()));
    ASSERT_EQ(next_of(reader, kBudget, &reply), ReplyReader::Next::reply);
    ASSERT_EQ(reply->elements, 4U);
    EXPECT_EQ(reply->element[0]->integer, 10);
    EXPECT_EQ(reply->element[1]->integer, 11);
    EXPECT_EQ(reply->element[2]->type, REDIS_REPLY_STRING);
    EXPECT_EQ(reply->element[3]->integer, 12);
    free_reply(reply);
    ASSERT_EQ(next_of(reader, kBudget, &reply), ReplyReader::Next::reply);
    EXPECT_EQ(reply->type, REDIS_REPLY_INTEGER);
    EXPECT_EQ(reply->integer, 13);
    free_reply(reply);
  }
  EXPECT_EQ(next_of(reader, kBudget), ReplyReader::Next::incomplete);
}

TEST(ReplyReader, AReplyArrivingInPiecesIsChargedOnce) {
  // Each piece is charged to the same reply; a reply within budget in
  // total is read however it is cut.
  ReplyReader reader;
  std::string bytes = "*200\r\n";
  for (int i = 0; i < 200; ++i) bytes += "$10\r\n0123456789\r\n";
  for (std::size_t at = 0; at < bytes.size(); at += 7) {
    const std::string piece = bytes.substr(at, 7);
    ASSERT_TRUE(reader.feed(piece.data(), piece.size()));
    const ReplyReader::Next next = next_of(reader, kBudget);
    ASSERT_EQ(next,
              at + 7 >= bytes.size() ? ReplyReader::Next::reply : ReplyReader::Next::incomplete)
        << "at byte " << at;
  }
}

TEST(ReplyReader, AnArrayHeaderPastTheBudgetFailsBeforeAnythingIsAllocated) {
  for (const std::string header : {"*2147483647\r\n", "*100000000\r\n", "*9000\r\n"}) {
    ReplyReader reader;
    ASSERT_TRUE(reader.feed(header.data(), header.size()));
    EXPECT_EQ(next_of(reader, kBudget), ReplyReader::Next::error) << header;
    EXPECT_EQ(reader.error(), "reply larger than 64 KiB");
  }
}

TEST(ReplyReader, ANestedReplyIsChargedForEveryPart) {
  // 100 arrays of 100 integers: each level alone is small, the whole is not.
  std::string bytes = "*100\r\n";
  for (int i = 0; i < 100; ++i) {
    bytes += "*100\r\n";
    for (int j = 0; j < 100; ++j) bytes += ":7\r\n";
  }
  ReplyReader small;
  ASSERT_TRUE(small.feed(bytes.data(), bytes.size()));
  EXPECT_EQ(next_of(small, kBudget), ReplyReader::Next::error);
  ReplyReader large;
  ASSERT_TRUE(large.feed(bytes.data(), bytes.size()));
  EXPECT_EQ(next_of(large, 4 * 1024 * 1024), ReplyReader::Next::reply);
}

TEST(ReplyReader, ALineOrBulkThatNeverEndsFailsOnceItOutgrowsTheBudget) {
  for (const std::string head : {"-ERR ", "+", "$1000000000\r\n", ":"}) {
    ReplyReader reader;
    ASSERT_TRUE(reader.feed(head.data(), head.size()));
    const std::string chunk(16 * 1024, 'a');
    int fed = 0;
    ReplyReader::Next next = next_of(reader, kBudget);
    while (next == ReplyReader::Next::incomplete && fed < 100) {
      ASSERT_TRUE(reader.feed(chunk.data(), chunk.size()));
      ++fed;
      next = next_of(reader, kBudget);
    }
    EXPECT_EQ(next, ReplyReader::Next::error) << head;
    // Cut as soon as the budget is passed: four chunks (64 KiB) fit with at
    // most the head beside them, a fifth never does.
    EXPECT_GE(fed, 4) << head;
    EXPECT_LE(fed, 5) << head;
    EXPECT_EQ(reader.error(), "reply larger than 64 KiB");
  }
}

TEST(ReplyReader, AProtocolErrorIsHiredisOwnWords) {
  ReplyReader reader;
  const std::string bytes = "?what\r\n";
  ASSERT_TRUE(reader.feed(bytes.data(), bytes.size()));
  EXPECT_EQ(next_of(reader, kBudget), ReplyReader::Next::error);
  EXPECT_NE(reader.error().find("Protocol error"), std::string_view::npos) << reader.error();
}

TEST(ReplyReader, ByteSizesReadAsPeopleWriteThem) {
  EXPECT_EQ(byte_size_text(1 << 20), "1 MiB");
  EXPECT_EQ(byte_size_text(64 << 20), "64 MiB");
  EXPECT_EQ(byte_size_text(512 * 1024), "512 KiB");
  EXPECT_EQ(byte_size_text(100), "100 bytes");
}

}  // namespace
}  // namespace redlock::detail
