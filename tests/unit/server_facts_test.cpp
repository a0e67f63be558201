// What a node told a session about itself (transport/server_facts.hpp):
// the questions a handshake and a recheck ask, and what their answers make
// of the node's durability and identity.
#include "transport/server_facts.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "resp_reply.hpp"

namespace redlock::detail {
namespace {

using ReplyPtr = test::OwnedReply;
using test::reply_from_resp;

ReplyPtr config_answer(const std::string& name, const std::string& value) {
  return reply_from_resp("*2\r\n$" + std::to_string(name.size()) + "\r\n" + name + "\r\n$" +
                         std::to_string(value.size()) + "\r\n" + value + "\r\n");
}

TEST(ServerFacts, AHandshakeAsksThePersistenceSettingsThenInfoServer) {
  const auto questions = ServerFacts::handshake_questions();
  ASSERT_EQ(questions.size(), 4U);
  EXPECT_EQ(questions[0].fact, ServerFact::appendonly);
  EXPECT_EQ(questions[2].words[2], "no-appendfsync-on-rewrite");
  EXPECT_EQ(questions[3].fact, ServerFact::run_id);
  EXPECT_EQ(questions[3].word_count, 2U);
  const auto recheck = ServerFacts::recheck_questions();
  ASSERT_EQ(recheck.size(), 3U);
  for (const ServerQuestion& question : recheck) EXPECT_NE(question.fact, ServerFact::run_id);
}

TEST(ServerFacts, OnlyAlwaysWithFsyncsDuringRewritesIsAofAlways) {
  ServerFacts facts;
  EXPECT_EQ(facts.persistence(), Persistence::unknown);
  facts.record(ServerFact::appendonly, *config_answer("appendonly", "yes"));
  facts.record(ServerFact::appendfsync, *config_answer("appendfsync", "always"));
  // Not known yet whether fsyncs stop during a rewrite: not shown durable.
  EXPECT_EQ(facts.persistence(), Persistence::aof_always_but_rewrite);
  facts.record(ServerFact::no_fsync_on_rewrite, *config_answer("no-appendfsync-on-rewrite", "no"));
  EXPECT_EQ(facts.persistence(), Persistence::aof_always);
  facts.record(ServerFact::appendfsync, *config_answer("appendfsync", "everysec"));
  EXPECT_EQ(facts.persistence(), Persistence::aof_everysec);
  facts.record(ServerFact::appendonly, *config_answer("appendonly", "no"));
  EXPECT_EQ(facts.persistence(), Persistence::none);
}

TEST(ServerFacts, ADeniedConfigGetLeavesTheSettingUnknown) {
  ServerFacts facts;
  facts.record(ServerFact::appendonly, *config_answer("appendonly", "yes"));
  facts.record(ServerFact::appendonly,
               *reply_from_resp("-NOPERM this user has no permissions\r\n"));
  EXPECT_EQ(facts.persistence(), Persistence::unknown);
}

TEST(ServerFacts, TheRunIdIsReadFromInfoServerAndForgottenWithTheSession) {
  ServerFacts facts;
  const std::string info =
      "# Server\r\nredis_version:7.0.15\r\nrun_id:0123456789abcdef0123456789abcdef01234567\r\n"
      "tcp_port:6379\r\n";
  facts.record(ServerFact::run_id,
               *reply_from_resp("$" + std::to_string(info.size()) + "\r\n" + info + "\r\n"));
  EXPECT_EQ(facts.run_id(), "0123456789abcdef0123456789abcdef01234567");
  facts.forget();
  EXPECT_TRUE(facts.run_id().empty());
  EXPECT_EQ(run_id_in("xrun_id:abc\n"), "") << "only a field at a line's start";
  EXPECT_EQ(run_id_in("a:1\nrun_id:ab12zz\n"), "ab12");
}

}  // namespace
}  // namespace redlock::detail
