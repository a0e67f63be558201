// The rules the scripts enforce on the node itself, pinned on real
// redis-server processes by calling the scripts as the library sends them
// (docs/algorithm.md, "Keys and scripts"): the fence's compare-and-set, the
// recovery delay binding every request, and a release that publishes only
// what it deleted.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"
#include "scripts/scripts.hpp"

namespace redlock::test {
namespace {

using detail::ReplyCode;
using detail::ScriptId;

const std::string kMarker = "redlock:node";
const std::string kRecovering = "redlock:recovering";
const std::string kFence = "redlock:fence";

std::string body(ScriptId id) { return std::string(detail::script(id).body); }

// The code of one request's answer in a batched script's reply: the first
// element of {code, value}, or of the flag itself; -1 when malformed.
long long answer_code(const Reply& answer) {
  if (answer.kind == Reply::Kind::integer) return answer.integer;
  if (answer.kind != Reply::Kind::array || answer.elements.size() != 2) return -1;
  return answer.elements[0].integer;
}

// One fence proposal of `token` for `resource`, alone in its call (a batch
// of one), with the amnesia defence off so the marker is not asked for.
Reply propose(RedisProbe& node, const std::string& resource, const std::string& token) {
  return node.command(
      {"EVAL", body(ScriptId::fence), "3", kMarker, kRecovering, kFence, resource, token, "0"});
}

long long proposal_code(const Reply& reply) {
  if (reply.kind != Reply::Kind::array || reply.elements.size() != 1) return -1;
  return answer_code(reply.elements[0]);
}

TEST(NodeRules, TwoProposersOfOneTokenAreNeverBothAcceptedByAMajority) {
  RedisCluster cluster{3};
  // Two proposers of token 5, their requests reaching the nodes in every
  // order concurrent proposers can produce.
  const std::array<std::array<std::size_t, 2>, 3> orders{{{0, 1}, {1, 0}, {0, 1}}};
  std::array<int, 2> accepted{};
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    RedisProbe node(cluster.node(i).port());
    for (std::size_t proposer : orders[i]) {
      const Reply reply = propose(node, "ledger", "5");
      ASSERT_NE(proposal_code(reply), -1) << reply.text;
      if (proposal_code(reply) == detail::code(ReplyCode::done)) ++accepted[proposer];
    }
  }
  // Each node takes the token once, so the two majorities cannot both form.
  EXPECT_EQ(accepted[0] + accepted[1], 3);
  EXPECT_FALSE(accepted[0] >= 2 && accepted[1] >= 2)
      << "both proposers of token 5 were accepted by a majority";
}

TEST(NodeRules, OneBatchNeverStoresOneTokenTwice) {
  RedisCluster cluster{1};
  RedisProbe node(cluster.node(0).port());
  const Reply reply = node.command({"EVAL", body(ScriptId::fence), "4", kMarker, kRecovering,
                                    kFence, kFence, "ledger", "5", "0", "ledger", "5", "0"});
  ASSERT_EQ(reply.kind, Reply::Kind::array) << reply.text;
  ASSERT_EQ(reply.elements.size(), 2U);
  EXPECT_EQ(answer_code(reply.elements[0]), detail::code(ReplyCode::done));
  EXPECT_EQ(answer_code(reply.elements[1]), detail::code(ReplyCode::refused));
  // A smaller token after a larger one is refused too, and the counter kept.
  EXPECT_EQ(proposal_code(propose(node, "ledger", "4")), detail::code(ReplyCode::refused));
  EXPECT_EQ(node.command({"HGET", kFence, "ledger"}).text, "5");
}

TEST(NodeRules, AFenceIsNotStoredWhileTheNodeIsRecovering) {
  RedisCluster cluster{1};
  RedisProbe node(cluster.node(0).port());
  ASSERT_TRUE(node.set(kMarker, "marked"));
  ASSERT_TRUE(node.set(kRecovering, "recovering", std::chrono::milliseconds(60000)));
  for (const char* defence : {"1", "0"}) {
    const Reply reply = node.command(
        {"EVAL", body(ScriptId::fence), "3", kMarker, kRecovering, kFence, "ledger", "7", defence});
    EXPECT_EQ(proposal_code(reply), detail::code(ReplyCode::recovering)) << "defence " << defence;
  }
  EXPECT_FALSE(node.exists(kFence));
}

TEST(NodeRules, TheRecoveryDelayBindsAClientWithoutTheDefence) {
  RedisCluster cluster{1};
  RedisProbe node(cluster.node(0).port());
  ASSERT_TRUE(node.set(kMarker, "marked"));
  ASSERT_TRUE(node.set(kRecovering, "recovering", std::chrono::milliseconds(60000)));
  const Reply reply = node.command({"EVAL", body(ScriptId::acquire), "4", kMarker, kRecovering,
                                    kFence, "redlock:lock:r", "value", "10000", "", "0", ""});
  EXPECT_EQ(proposal_code(reply), detail::code(ReplyCode::recovering)) << reply.text;
  EXPECT_FALSE(node.exists("redlock:lock:r"));

  // Through the library: a client configured without the defence is refused
  // by that node as well.
  QuorumConfig config = config_for(cluster);
  config.lock.amnesia_defence = false;
  LoopRun run(config);
  const AcquireResult result = acquire_once(run, Resource("r"));
  EXPECT_FALSE(result.ok());
  ASSERT_EQ(result.nodes.size(), 1U);
  EXPECT_EQ(result.nodes[0].status, NodeStatus::recovering) << result.nodes[0].detail;
}

// A subscriber on its own connection: the first message it receives.
class Subscriber {
 public:
  Subscriber(std::uint16_t port, const std::string& channel) {
    const timeval timeout{5, 0};
    context_.reset(redisConnectWithTimeout("127.0.0.1", port, timeout));
    if (context_ == nullptr || context_->err != 0) return;
    redisSetTimeout(context_.get(), timeout);
    auto* reply = static_cast<redisReply*>(
        redisCommand(context_.get(), "SUBSCRIBE %b", channel.data(), channel.size()));
    if (reply != nullptr) freeReplyObject(reply);
  }
  // The payload of the next message, or empty when none came in 5 s.
  std::string next_message() {
    if (context_ == nullptr || context_->err != 0) return {};
    void* raw = nullptr;
    if (redisGetReply(context_.get(), &raw) != REDIS_OK || raw == nullptr) return {};
    auto* reply = static_cast<redisReply*>(raw);
    std::string payload;
    if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 3) {
      payload.assign(reply->element[2]->str, reply->element[2]->len);
    }
    freeReplyObject(reply);
    return payload;
  }

 private:
  struct Free {
    void operator()(redisContext* context) const { redisFree(context); }
  };
  std::unique_ptr<redisContext, Free> context_;
};

TEST(NodeRules, AReleaseThatCannotDeletePublishesNothing) {
  RedisCluster cluster{1};
  RedisProbe admin(cluster.node(0).port());
  const std::string key = "redlock:lock:doc";
  const std::string channel = "redlock:released:doc";
  ASSERT_TRUE(admin.set(key, "the-live-value"));
  // A user that may run the script, read and publish, but not delete.
  ASSERT_TRUE(
      admin.command({"ACL", "SETUSER", "nodel", "on", ">secret", "~*", "&*", "+@all", "-del"})
          .is_ok());
  Subscriber subscriber(cluster.node(0).port(), channel);
  RedisProbe user(cluster.node(0).port());
  ASSERT_TRUE(user.command({"AUTH", "nodel", "secret"}).is_ok());
  const Reply reply =
      user.command({"EVAL", body(ScriptId::release), "1", key, "the-live-value", channel, ""});
  ASSERT_EQ(reply.kind, Reply::Kind::array) << reply.text;
  ASSERT_EQ(reply.elements.size(), 1U);
  EXPECT_EQ(reply.elements[0].kind, Reply::Kind::error) << "the failed DEL is its answer";
  EXPECT_TRUE(admin.exists(key));
  // The first message on the channel is the one published after the
  // release: the release itself published nothing.
  ASSERT_EQ(admin.command({"PUBLISH", channel, "after"}).integer, 1);
  EXPECT_EQ(subscriber.next_message(), "after");
}

// A release names the first waiter in line on its wake channel and takes
// it out of the line. A node whose ACL refuses the line's commands still
// releases and publishes: only the name is missing.
TEST(NodeRules, AReleaseNamesTheFirstWaiterAndWorksWithoutTheLinesCommands) {
  RedisCluster cluster{1};
  RedisProbe admin(cluster.node(0).port());
  const std::string key = "redlock:lock:doc";
  const std::string channel = "redlock:released:doc";
  const std::string line = "redlock:waiting:doc";
  const std::string wake = "redlock:released:@client";
  Subscriber named(cluster.node(0).port(), wake);
  const auto fill_line = [&] {
    ASSERT_TRUE(admin.set(key, "the-live-value"));
    (void)admin.command({"ZADD", line, "1", wake + " 6", "2", wake + " 7"});
  };

  fill_line();
  Reply reply =
      admin.command({"EVAL", body(ScriptId::release), "1", key, "the-live-value", channel, line});
  ASSERT_EQ(reply.kind, Reply::Kind::array) << reply.text;
  EXPECT_EQ(reply.elements.at(0).integer, 1);
  EXPECT_EQ(named.next_message(), "6 the-live-value");
  const Reply left = admin.command({"ZRANGE", line, "0", "-1"});
  ASSERT_EQ(left.elements.size(), 1U) << "the named place stays";
  EXPECT_EQ(left.elements[0].text, wake + " 7");

  ASSERT_TRUE(
      admin.command({"ACL", "SETUSER", "nopop", "on", ">secret", "~*", "&*", "+@all", "-zpopmin"})
          .is_ok());
  RedisProbe user(cluster.node(0).port());
  ASSERT_TRUE(user.command({"AUTH", "nopop", "secret"}).is_ok());
  fill_line();
  Subscriber released(cluster.node(0).port(), channel);
  reply =
      user.command({"EVAL", body(ScriptId::release), "1", key, "the-live-value", channel, line});
  ASSERT_EQ(reply.kind, Reply::Kind::array) << reply.text;
  EXPECT_EQ(reply.elements.at(0).integer, 1) << "released all the same";
  EXPECT_FALSE(admin.exists(key));
  EXPECT_EQ(released.next_message(), "the-live-value");
  EXPECT_EQ(admin.command({"ZCARD", line}).integer, 2) << "the line is left alone";
}

// Waiters refused one after another take their places in that order, even
// within one millisecond of each other (a later id that sorts first does
// not jump ahead).
TEST(NodeRules, RefusedWaitersLineUpInTheOrderTheyCame) {
  RedisCluster cluster{1};
  RedisProbe node(cluster.node(0).port());
  const std::string key = "redlock:lock:busy";
  const std::string line = "redlock:waiting:busy";
  ASSERT_TRUE(node.set(key, "the-holder"));
  const auto refuse = [&](const std::string& id) {
    const std::string place = "0500:" + std::to_string(line.size()) + ":" + line + id;
    (void)node.command({"EVAL", body(ScriptId::acquire), "4", kMarker, kRecovering, kFence, key,
                        "value", "10000", "", "0", place});
  };
  for (int round = 0; round < 20; ++round) {
    (void)node.command({"DEL", line});
    refuse("ch 9-later-id-sorting-last");
    refuse("ch 1-earlier-id-sorting-first");
    const Reply order = node.command({"ZRANGE", line, "0", "-1"});
    ASSERT_EQ(order.elements.size(), 2U) << order.text;
    EXPECT_EQ(order.elements[0].text, "ch 9-later-id-sorting-last") << "round " << round;
  }
}

}  // namespace
}  // namespace redlock::test
