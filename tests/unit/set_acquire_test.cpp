// The acquire sent as one transaction (scripts.hpp, acquire_set): each
// request's answer, read from EXEC's answer, fed as real RESP bytes through
// hiredis's reader.
#include "scripts/set_acquire.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "resp_reply.hpp"

namespace redlock::detail {
namespace {

using test::reply_from_resp;
using Owned = test::OwnedReply;

// EXISTS marker, PTTL recovering, then the SETs' answers.
std::string exec_of(const std::string& marker, const std::string& recovering,
                    const std::string& sets, int set_count) {
  return "*" + std::to_string(2 + set_count) + "\r\n" + marker + recovering + sets;
}

const std::string kMarked = ":1\r\n";
const std::string kUnmarked = ":0\r\n";
const std::string kNotRecovering = ":-2\r\n";
const std::string kTaken = "+OK\r\n";
const std::string kHeld = "$-1\r\n";

TEST(SetAcquireAnswer, ATakenKeyIsAGrantAndAnExistingOneARefusalWithoutItsTtl) {
  const Owned exec = reply_from_resp(exec_of(kMarked, kNotRecovering, kTaken + kHeld, 2));
  ASSERT_TRUE(exec);
  ASSERT_TRUE(answers_set_acquire(*exec, 2));
  const SetAcquireAnswer taken = set_acquire_answer(*exec, 0, true);
  EXPECT_EQ(taken.passed, nullptr);
  EXPECT_EQ(taken.code, ReplyCode::done);
  EXPECT_EQ(taken.number, 0);
  EXPECT_FALSE(taken.undo);
  const SetAcquireAnswer held = set_acquire_answer(*exec, 1, true);
  EXPECT_EQ(held.code, ReplyCode::refused);
  EXPECT_EQ(held.number, -1);
  EXPECT_FALSE(held.undo);
}

TEST(SetAcquireAnswer, WithoutTheMarkerAKeyTakenIsNoGrantAndIsReleasedAgain) {
  const Owned exec = reply_from_resp(exec_of(kUnmarked, kNotRecovering, kTaken + kHeld, 2));
  ASSERT_TRUE(exec);
  const SetAcquireAnswer taken = set_acquire_answer(*exec, 0, true);
  EXPECT_EQ(taken.code, ReplyCode::unmarked);
  EXPECT_TRUE(taken.undo);
  const SetAcquireAnswer held = set_acquire_answer(*exec, 1, true);
  EXPECT_EQ(held.code, ReplyCode::unmarked);
  EXPECT_FALSE(held.undo) << "a SET that took nothing leaves nothing to release";
  // With the defence off the marker is not asked for.
  EXPECT_EQ(set_acquire_answer(*exec, 0, false).code, ReplyCode::done);
}

TEST(SetAcquireAnswer, WhileRecoveringNothingIsGrantedWhateverTheDefence) {
  const Owned exec = reply_from_resp(exec_of(kMarked, ":1500\r\n", kTaken, 1));
  ASSERT_TRUE(exec);
  for (const bool defence : {true, false}) {
    const SetAcquireAnswer answer = set_acquire_answer(*exec, 0, defence);
    EXPECT_EQ(answer.code, ReplyCode::recovering);
    EXPECT_EQ(answer.number, 1500);
    EXPECT_TRUE(answer.undo);
  }
  // A recovering key without an expiry refuses too, as the script does.
  const Owned forever = reply_from_resp(exec_of(kMarked, ":-1\r\n", kTaken, 1));
  ASSERT_TRUE(forever);
  EXPECT_EQ(set_acquire_answer(*forever, 0, true).code, ReplyCode::recovering);
}

TEST(SetAcquireAnswer, ACommandErrorIsPassedOnAndAnOddAnswerIsReleasedAgain) {
  const Owned exec =
      reply_from_resp(exec_of(kMarked, kNotRecovering, "-OOM no memory\r\n:7\r\n", 2));
  ASSERT_TRUE(exec);
  const SetAcquireAnswer failed = set_acquire_answer(*exec, 0, true);
  ASSERT_NE(failed.passed, nullptr);
  EXPECT_EQ(failed.passed->type, REDIS_REPLY_ERROR);
  EXPECT_FALSE(failed.undo) << "a SET that failed took nothing";
  const SetAcquireAnswer odd = set_acquire_answer(*exec, 1, true);
  ASSERT_NE(odd.passed, nullptr);
  EXPECT_EQ(odd.passed->type, REDIS_REPLY_INTEGER);
  EXPECT_TRUE(odd.undo) << "an answer SET never gives may hide a taken key";

  const Owned denied = reply_from_resp(exec_of("-NOPERM exists\r\n", kNotRecovering, kTaken, 1));
  ASSERT_TRUE(denied);
  const SetAcquireAnswer rule_failed = set_acquire_answer(*denied, 0, true);
  ASSERT_NE(rule_failed.passed, nullptr);
  EXPECT_EQ(rule_failed.passed->type, REDIS_REPLY_ERROR);
  EXPECT_TRUE(rule_failed.undo);
}

TEST(SetAcquireAnswer, OnlyAnArrayOfTheRightLengthAnswersTheTransaction) {
  const Owned exec = reply_from_resp(exec_of(kMarked, kNotRecovering, kTaken, 1));
  ASSERT_TRUE(exec);
  EXPECT_TRUE(answers_set_acquire(*exec, 1));
  EXPECT_FALSE(answers_set_acquire(*exec, 2));
  const Owned aborted = reply_from_resp("-EXECABORT Transaction discarded\r\n");
  ASSERT_TRUE(aborted);
  EXPECT_FALSE(answers_set_acquire(*aborted, 1));
}

}  // namespace
}  // namespace redlock::detail
