// Reply interpretation, fed with real RESP bytes through hiredis's reader.
#include "scripts/reply_parse.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace redlock::detail {
namespace {

struct ParsedReplies {
  std::vector<redisReply*> replies;
  ParsedReplies() = default;
  ParsedReplies(const ParsedReplies&) = delete;
  ParsedReplies& operator=(const ParsedReplies&) = delete;
  ~ParsedReplies() {
    for (redisReply* reply : replies) freeReplyObject(reply);
  }
};

void parse(const std::string& bytes, ParsedReplies& out) {
  redisReader* reader = redisReaderCreate();
  ASSERT_EQ(redisReaderFeed(reader, bytes.data(), bytes.size()), REDIS_OK);
  for (;;) {
    void* reply = nullptr;
    ASSERT_EQ(redisReaderGetReply(reader, &reply), REDIS_OK);
    if (reply == nullptr) break;
    out.replies.push_back(static_cast<redisReply*>(reply));
  }
  redisReaderFree(reader);
}

NodeResponse response_of(const ParsedReplies& parsed) {
  NodeResponse response;
  response.replies = parsed.replies.data();
  response.reply_count = parsed.replies.size();
  return response;
}

TEST(ParseInspect, ReadersAreListedWithTheKeysTtlAndCounter) {
  ParsedReplies parsed;
  parse("*8\r\n:2\r\n$0\r\n\r\n:4000\r\n$1\r\n3\r\n$2\r\nr1\r\n:3990\r\n$2\r\nr2\r\n:120\r\n",
        parsed);
  NodeInspection out;
  ASSERT_TRUE(parse_inspect_response(response_of(parsed), false, out)) << out.detail;
  EXPECT_FALSE(out.key.value.has_value());
  EXPECT_EQ(out.key.pttl_ms, 4000);
  EXPECT_EQ(out.key.fence, 3u);
  ASSERT_EQ(out.key.readers.size(), 2u);
  EXPECT_EQ(out.key.readers[0].value, "r1");
  EXPECT_EQ(out.key.readers[1].pttl_ms, 120);
}

TEST(ParseInspect, AMalformedReaderLeavesNoReaders) {
  // The second reader's time left is not a number: not answered, and
  // nothing of the first reader kept.
  ParsedReplies parsed;
  parse("*8\r\n:2\r\n$0\r\n\r\n:4000\r\n$1\r\n3\r\n$2\r\nr1\r\n:3990\r\n$2\r\nr2\r\n$1\r\nx\r\n",
        parsed);
  NodeInspection out;
  EXPECT_FALSE(parse_inspect_response(response_of(parsed), false, out));
  EXPECT_FALSE(out.answered);
  EXPECT_TRUE(out.key.readers.empty());
}

TEST(ParseAcquire, GrantedCarriesTheFenceCounter) {
  ParsedReplies parsed;
  parse("*2\r\n:1\r\n$2\r\n41\r\n", parsed);
  NodeOutcome out;
  parse_acquire_response(response_of(parsed), 0, out);
  EXPECT_EQ(out.status, NodeStatus::granted);
  EXPECT_EQ(out.fence_counter, 41);
}

TEST(ParseAcquire, APermitGrantNamesThePermit) {
  ParsedReplies parsed;
  parse("*3\r\n:1\r\n$1\r\n7\r\n:2\r\n", parsed);
  NodeOutcome out;
  parse_acquire_response(response_of(parsed), 0, out);
  EXPECT_EQ(out.status, NodeStatus::granted);
  EXPECT_EQ(out.fence_counter, 7);
  EXPECT_EQ(out.permit, 2);
}

TEST(ParseAcquire, AThirdElementOnAnythingButAGrantIsMalformed) {
  for (const char* bytes :
       {"*3\r\n:0\r\n:5\r\n:2\r\n", "*3\r\n:1\r\n:5\r\n:-1\r\n", "*3\r\n:1\r\n:5\r\n$1\r\nx\r\n"}) {
    ParsedReplies parsed;
    parse(bytes, parsed);
    NodeOutcome out;
    parse_acquire_response(response_of(parsed), 0, out);
    EXPECT_EQ(out.status, NodeStatus::error) << bytes;
  }
}

TEST(ParseAcquire, AFairRefusalCarriesTheTicketItDrew) {
  ParsedReplies parsed;
  parse("*3\r\n:0\r\n:5\r\n:7\r\n", parsed);
  NodeOutcome out;
  std::int64_t drawn = -1;
  parse_acquire_response(response_of(parsed), 0, out, &drawn);
  EXPECT_EQ(out.status, NodeStatus::busy);
  EXPECT_EQ(out.holder_ttl_ms, 5);
  EXPECT_EQ(drawn, 7);
  // A refusal without a draw, or a grant: nothing drawn.
  for (const char* bytes : {"*2\r\n:0\r\n:5\r\n", "*2\r\n:1\r\n$1\r\n0\r\n"}) {
    ParsedReplies other;
    parse(bytes, other);
    NodeOutcome plain;
    drawn = -1;
    parse_acquire_response(response_of(other), 0, plain, &drawn);
    EXPECT_NE(plain.status, NodeStatus::error) << bytes;
    EXPECT_EQ(drawn, 0) << bytes;
  }
}

TEST(ParseAcquire, ADrawnTicketBelowOneOrNotANumberIsMalformed) {
  for (const char* bytes :
       {"*3\r\n:0\r\n:5\r\n:0\r\n", "*3\r\n:0\r\n:5\r\n:-3\r\n", "*3\r\n:0\r\n:5\r\n$1\r\nx\r\n"}) {
    ParsedReplies parsed;
    parse(bytes, parsed);
    NodeOutcome out;
    std::int64_t drawn = -1;
    parse_acquire_response(response_of(parsed), 0, out, &drawn);
    EXPECT_EQ(out.status, NodeStatus::error) << bytes;
    EXPECT_EQ(drawn, 0) << bytes;
  }
}

TEST(ParseTicket, ARecordSaysWhereItLeftTheWaiter) {
  const struct {
    const char* bytes;
    NodeStatus status;
    QueueState state;
  } cases[] = {
      {"*3\r\n:1\r\n$1\r\n7\r\n:1\r\n", NodeStatus::granted, QueueState::first_and_free},
      {"*3\r\n:1\r\n$1\r\n7\r\n:0\r\n", NodeStatus::granted, QueueState::behind},
      {"*3\r\n:1\r\n$1\r\n7\r\n:2\r\n", NodeStatus::granted, QueueState::granted},
      {"*3\r\n:1\r\n$1\r\n7\r\n:3\r\n", NodeStatus::granted, QueueState::first_and_held},
      {"*2\r\n:1\r\n:7\r\n", NodeStatus::granted, QueueState::behind},  // a draw
      {"*3\r\n:1\r\n$1\r\n7\r\n:4\r\n", NodeStatus::granted, QueueState::held_behind},
      {"*3\r\n:1\r\n$1\r\n7\r\n:5\r\n", NodeStatus::error, QueueState::behind},
      {"*3\r\n:1\r\n$1\r\n7\r\n:-1\r\n", NodeStatus::error, QueueState::behind},
  };
  for (const auto& c : cases) {
    ParsedReplies parsed;
    parse(c.bytes, parsed);
    NodeOutcome out;
    QueueState state = QueueState::granted;
    parse_ticket_response(response_of(parsed), out, state);
    EXPECT_EQ(out.status, c.status) << c.bytes;
    EXPECT_EQ(state, c.state) << c.bytes;
    if (c.status == NodeStatus::granted) {
      EXPECT_EQ(out.fence_counter, 7) << c.bytes;
    }
    EXPECT_EQ(out.permit, -1) << c.bytes;
  }
}

TEST(ParseAcquire, ARecordedCountBelowOneIsMalformed) {
  for (const char* bytes : {"*2\r\n:4\r\n:-1\r\n", "*2\r\n:4\r\n:0\r\n"}) {
    ParsedReplies parsed;
    parse(bytes, parsed);
    NodeOutcome out;
    parse_acquire_response(response_of(parsed), 0, out);
    EXPECT_EQ(out.status, NodeStatus::error) << bytes;
  }
}

TEST(ParseAcquire, AnotherPermitCountNamesTheRecordedCount) {
  ParsedReplies parsed;
  parse("*2\r\n:4\r\n$1\r\n3\r\n", parsed);
  NodeOutcome out;
  parse_acquire_response(response_of(parsed), 0, out);
  EXPECT_EQ(out.status, NodeStatus::permits_differ);
  EXPECT_EQ(out.holder_ttl_ms, 3);
  EXPECT_NE(out.detail.find("3 permits"), std::string::npos) << out.detail;
}

TEST(ParseAcquire, BusyCarriesTheHolderTtl) {
  ParsedReplies parsed;
  parse("*2\r\n:0\r\n:9120\r\n", parsed);
  NodeOutcome out;
  parse_acquire_response(response_of(parsed), 0, out);
  EXPECT_EQ(out.status, NodeStatus::busy);
  EXPECT_EQ(out.holder_ttl_ms, 9120);
}

TEST(ParseAcquire, ErrorReplyIsSurfacedVerbatim) {
  ParsedReplies parsed;
  parse("-OOM command not allowed when used memory > 'maxmemory'\r\n", parsed);
  NodeOutcome out;
  parse_acquire_response(response_of(parsed), 0, out);
  EXPECT_EQ(out.status, NodeStatus::error);
  EXPECT_EQ(out.detail, "OOM command not allowed when used memory > 'maxmemory'");
}

TEST(ParseAcquire, AnEmptyErrorReplyStillSaysItWasAnError) {
  // A bare "-" (a broken or hostile node): the outcome must not read as an
  // error without a reason.
  ParsedReplies parsed;
  parse("-\r\n", parsed);
  NodeOutcome out;
  parse_acquire_response(response_of(parsed), 0, out);
  EXPECT_EQ(out.status, NodeStatus::error);
  EXPECT_EQ(out.detail, "empty error reply");
}

TEST(ParseAcquire, TooFewReplicasVoidTheGrant) {
  ParsedReplies parsed;
  parse("*2\r\n:1\r\n$1\r\n0\r\n:0\r\n", parsed);
  NodeOutcome out;
  parse_acquire_response(response_of(parsed), 1, out);
  EXPECT_EQ(out.status, NodeStatus::replicas_short);
  EXPECT_EQ(out.detail, "0 of 1 replicas acknowledged");
}

TEST(ParseAcquire, EnoughReplicasKeepTheGrant) {
  ParsedReplies parsed;
  parse("*2\r\n:1\r\n$1\r\n7\r\n:2\r\n", parsed);
  NodeOutcome out;
  parse_acquire_response(response_of(parsed), 2, out);
  EXPECT_EQ(out.status, NodeStatus::granted);
  EXPECT_EQ(out.fence_counter, 7);
}

TEST(ParseAcquire, MalformedReplyIsAnError) {
  ParsedReplies parsed;
  parse("+OK\r\n", parsed);
  NodeOutcome out;
  parse_acquire_response(response_of(parsed), 0, out);
  EXPECT_EQ(out.status, NodeStatus::error);
  EXPECT_NE(out.detail.find("unexpected reply"), std::string::npos);
}

TEST(ParseAcquire, TimeoutAndUnreachableKeepTheirReason) {
  NodeResponse response;
  response.kind = NodeResponse::Kind::timeout;
  response.detail = "no answer within 50 ms";
  NodeOutcome out;
  parse_acquire_response(response, 0, out);
  EXPECT_EQ(out.status, NodeStatus::timeout);
  EXPECT_EQ(out.detail, "no answer within 50 ms");

  response.kind = NodeResponse::Kind::unreachable;
  response.detail = "connect: connection refused";
  parse_acquire_response(response, 0, out);
  EXPECT_EQ(out.status, NodeStatus::unreachable);
  EXPECT_EQ(out.detail, "connect: connection refused");
}

TEST(ParseFlag, OneIsYesZeroIsNotHeld) {
  ParsedReplies one;
  parse(":1\r\n", one);
  NodeOutcome out;
  parse_flag_response(response_of(one), NodeStatus::released, out);
  EXPECT_EQ(out.status, NodeStatus::released);

  ParsedReplies zero;
  parse(":0\r\n", zero);
  parse_flag_response(response_of(zero), NodeStatus::extended, out);
  EXPECT_EQ(out.status, NodeStatus::not_held);
}

// A release that comes back: 2 is a rejoined place; {deleted, count[,
// first and free]} a fair release's draw, whether or not it deleted.
TEST(ParseFlag, AComebackSaysWhatTheReleaseDrewOrTook) {
  const struct {
    const char* bytes;
    NodeStatus status;
    bool rejoined;
    std::uint64_t drawn;
    bool first_and_free;
  } cases[] = {
      {":2\r\n", NodeStatus::released, true, 0, false},
      {"*2\r\n:1\r\n:7\r\n", NodeStatus::released, false, 7, false},
      {"*3\r\n:1\r\n:7\r\n:1\r\n", NodeStatus::released, false, 7, true},
      {"*3\r\n:0\r\n:8\r\n:0\r\n", NodeStatus::not_held, false, 8, false},
      {"*3\r\n:1\r\n:7\r\n:2\r\n", NodeStatus::error, false, 0, false},
      {"*2\r\n:1\r\n:0\r\n", NodeStatus::error, false, 0, false},
  };
  for (const auto& c : cases) {
    ParsedReplies parsed;
    parse(c.bytes, parsed);
    NodeOutcome out;
    Comeback comeback;
    parse_flag_response(response_of(parsed), NodeStatus::released, out, &comeback);
    EXPECT_EQ(out.status, c.status) << c.bytes;
    EXPECT_EQ(comeback.rejoined, c.rejoined) << c.bytes;
    EXPECT_EQ(comeback.drawn, c.drawn) << c.bytes;
    EXPECT_EQ(comeback.first_and_free, c.first_and_free) << c.bytes;
  }
}

}  // namespace
}  // namespace redlock::detail
