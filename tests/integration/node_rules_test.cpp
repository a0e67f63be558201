// The rules the scripts enforce on the node itself, pinned on real
// redis-server processes by calling the scripts as the library sends them
// (docs/algorithm.md, "Keys and scripts"): the fence's compare-and-set, the
// recovery delay binding every request, and a release that publishes only
// what it deleted.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "harness.hpp"
#include "redis_subscriber.hpp"
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
  RedisSubscriber subscriber(cluster.node(0).port(), {channel});
  ASSERT_TRUE(subscriber.ok());
  RedisProbe user(cluster.node(0).port());
  ASSERT_TRUE(user.command({"AUTH", "nodel", "secret"}).is_ok());
  const Reply reply = user.command({"EVAL", body(ScriptId::release), "3", "redlock:node",
                                    "redlock:recovering", key, "the-live-value", channel, "", ""});
  ASSERT_EQ(reply.kind, Reply::Kind::array) << reply.text;
  ASSERT_EQ(reply.elements.size(), 1U);
  EXPECT_EQ(reply.elements[0].kind, Reply::Kind::error) << "the failed DEL is its answer";
  EXPECT_TRUE(admin.exists(key));
  // The first message on the channel is the one published after the
  // release: the release itself published nothing.
  ASSERT_EQ(admin.command({"PUBLISH", channel, "after"}).integer, 1);
  EXPECT_EQ(subscriber.next().payload, "after");
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
  RedisSubscriber named(cluster.node(0).port(), {wake});
  ASSERT_TRUE(named.ok());
  // The waiters' client keeps the resource's listening mark (a key of the
  // channel's name) while they wait in line.
  const auto fill_line = [&] {
    ASSERT_TRUE(admin.set(key, "the-live-value"));
    ASSERT_TRUE(admin.set(channel, "1"));
    (void)admin.command({"ZADD", line, "1", wake + " 6", "2", wake + " 7"});
  };

  fill_line();
  Reply reply = admin.command({"EVAL", body(ScriptId::release), "3", "redlock:node",
                               "redlock:recovering", key, "the-live-value", channel, line, ""});
  ASSERT_EQ(reply.kind, Reply::Kind::array) << reply.text;
  EXPECT_EQ(reply.elements.at(0).integer, 1);
  EXPECT_EQ(named.next().payload, "6 the-live-value");
  const Reply left = admin.command({"ZRANGE", line, "0", "-1"});
  ASSERT_EQ(left.elements.size(), 1U) << "the named place stays";
  EXPECT_EQ(left.elements[0].text, wake + " 7");

  ASSERT_TRUE(
      admin.command({"ACL", "SETUSER", "nopop", "on", ">secret", "~*", "&*", "+@all", "-zpopmin"})
          .is_ok());
  RedisProbe user(cluster.node(0).port());
  ASSERT_TRUE(user.command({"AUTH", "nopop", "secret"}).is_ok());
  fill_line();
  RedisSubscriber released(cluster.node(0).port(), {channel});
  ASSERT_TRUE(released.ok());
  reply = user.command({"EVAL", body(ScriptId::release), "3", "redlock:node", "redlock:recovering",
                        key, "the-live-value", channel, line, ""});
  ASSERT_EQ(reply.kind, Reply::Kind::array) << reply.text;
  EXPECT_EQ(reply.elements.at(0).integer, 1) << "released all the same";
  EXPECT_FALSE(admin.exists(key));
  EXPECT_EQ(released.next().payload, "the-live-value");
  EXPECT_EQ(admin.command({"ZCARD", line}).integer, 2) << "the line is left alone";

  // Without the mark no one listens: the release deletes, names no one and
  // publishes nothing.
  fill_line();
  ASSERT_EQ(admin.command({"DEL", channel}).integer, 1);
  ASSERT_TRUE(admin.command({"CONFIG", "RESETSTAT"}).is_ok());
  reply = admin.command({"EVAL", body(ScriptId::release), "3", "redlock:node", "redlock:recovering",
                         key, "the-live-value", channel, line, ""});
  ASSERT_EQ(reply.kind, Reply::Kind::array) << reply.text;
  EXPECT_EQ(reply.elements.at(0).integer, 1);
  EXPECT_FALSE(admin.exists(key));
  EXPECT_EQ(admin.command({"ZCARD", line}).integer, 2) << "no one was named";
  EXPECT_EQ(admin.command({"INFO", "commandstats"}).text.find("cmdstat_publish"),
            std::string::npos);
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

// A fair release names the first live waiter of the queue on its wake
// channel ("<number> <value>"), drops the places past their deadline on the
// way, leaves the named place where it is (its ticket stays first until it
// wins), and publishes nothing on the release channel, which every fair
// waiter of every client listens on. With no one listening on the first
// waiter's wake channel, it publishes there instead.
TEST(NodeRules, AFairReleaseNamesTheFirstLiveWaiterInTheQueueAndNoOneElse) {
  RedisCluster cluster{1};
  RedisProbe admin(cluster.node(0).port());
  const std::string key = "redlock:lock:doc";
  const std::string queue = "redlock:queue:doc";
  const std::string due = "redlock:queue-due:doc";
  const std::string channel = "redlock:released:doc";
  const std::string wake = "redlock:released:@client";
  const auto fill_queue = [&](const std::string& head_wake) {
    ASSERT_TRUE(admin.set(key, "the-live-value"));
    const long long ms = node_clock_ms(admin);
    ASSERT_GE(ms, 0);
    (void)admin.command(
        {"ZADD", queue, "1", wake + " 5", "2", head_wake + " 6", "3", wake + " 7", "4", "holder"});
    (void)admin.command({"ZADD", due, std::to_string(ms - 1), wake + " 5",
                         std::to_string(ms + 60000), head_wake + " 6", std::to_string(ms + 60000),
                         wake + " 7", std::to_string(ms + 60000), "holder"});
  };
  const auto release = [&] {
    return admin.command({"EVAL", body(ScriptId::fair_release), "7", key, queue, due,
                          "redlock:queue-claim:doc", kMarker, kRecovering, kFence, "the-live-value",
                          channel, "holder", "", "", "0", "holder", "", ""});
  };

  RedisSubscriber heard(cluster.node(0).port(), {wake, channel});
  ASSERT_TRUE(heard.ok());
  fill_queue(wake);
  Reply reply = release();
  EXPECT_EQ(reply.integer, 1) << reply.text;
  EXPECT_FALSE(admin.exists(key));
  ASSERT_EQ(admin.command({"PUBLISH", channel, "marker"}).integer, 1);
  const std::vector<RedisSubscriber::Message> messages = heard.until("marker");
  ASSERT_EQ(messages.size(), 1U) << "the release published on the release channel as well";
  EXPECT_EQ(messages[0].channel, wake);
  EXPECT_EQ(messages[0].payload, "6 the-live-value");
  const Reply left = admin.command({"ZRANGE", queue, "0", "-1"});
  ASSERT_EQ(left.elements.size(), 2U) << "the expired place goes, the holder's goes";
  EXPECT_EQ(left.elements[0].text, wake + " 6") << "the named place stays first";

  (void)admin.command({"DEL", queue, due});
  fill_queue("redlock:released:@nobody-listens");
  reply = release();
  EXPECT_EQ(reply.integer, 1) << reply.text;
  ASSERT_EQ(admin.command({"PUBLISH", channel, "marker"}).integer, 1);
  const std::vector<RedisSubscriber::Message> unheard = heard.until("marker");
  ASSERT_EQ(unheard.size(), 1U);
  EXPECT_EQ(unheard[0].channel, channel) << "a name no one hears stands for no release";
  EXPECT_EQ(unheard[0].payload, "the-live-value");
}

// A fair attempt refused with a counter field draws the waiter's ticket in
// the same round: {0, PTTL, the counter after HINCRBY 1}. Without the field
// (a try-lock), or granted, it draws nothing.
TEST(NodeRules, AFairRefusalDrawsTheWaitersTicket) {
  RedisCluster cluster{1};
  RedisProbe node(cluster.node(0).port());
  const std::string key = "redlock:lock:job";
  const std::string queue = "redlock:queue:job";
  const std::string due = "redlock:queue-due:job";
  const auto attempt = [&](const std::string& value, const std::string& field) {
    return node.command({"EVAL", body(ScriptId::fair_acquire), "7", kMarker, kRecovering, kFence,
                         key, queue, due, "redlock:queue-claim:job", value, "10000", "", "0",
                         "waiter-" + value, "", "400", field});
  };
  Reply reply = attempt("first", "queue:job");
  ASSERT_EQ(reply.elements.size(), 2U) << "granted: " << reply.text;
  EXPECT_EQ(reply.elements[0].integer, 1);
  EXPECT_EQ(node.command({"HGET", kFence, "queue:job"}).kind, Reply::Kind::nil);
  for (long long drawn = 1; drawn <= 2; ++drawn) {
    reply = attempt("second", "queue:job");
    ASSERT_EQ(reply.elements.size(), 3U) << reply.text;
    EXPECT_EQ(reply.elements[0].integer, 0);
    EXPECT_GT(reply.elements[1].integer, 0) << "the holder's PTTL";
    EXPECT_EQ(reply.elements[2].integer, drawn);
  }
  reply = attempt("third", "");
  ASSERT_EQ(reply.elements.size(), 2U) << "a try-lock draws nothing: " << reply.text;
  EXPECT_EQ(node.command({"HGET", kFence, "queue:job"}).text, "2");
}

// A ticket's record says whether the waiter is now first in the queue and
// the lock free ({1, T, 1}): a release that came before the record named
// someone else or no one, and the waiter must not sleep until its retry;
// first with the lock held is 3, behind another waiter 0. A place past its
// deadline ahead of it does not count.
TEST(NodeRules, ATicketsRecordSaysWhetherTheWaiterIsFirstAndTheLockFree) {
  RedisCluster cluster{1};
  RedisProbe node(cluster.node(0).port());
  const std::string key = "redlock:lock:job";
  const std::string queue = "redlock:queue:job";
  const std::string due = "redlock:queue-due:job";
  const auto record = [&](const std::string& ticket, const std::string& id) {
    const Reply reply = node.command(
        {"EVAL", body(ScriptId::ticket_enqueue), "7", kMarker, kRecovering, kFence, queue, due, key,
         "redlock:queue-claim:job", "queue:job", ticket, id, "400", "0", ""});
    EXPECT_EQ(reply.elements.size(), 3U) << reply.text;
    return reply.elements.size() == 3 ? reply.elements[2].integer : -1;
  };
  ASSERT_TRUE(node.set(key, "the-holder"));
  EXPECT_EQ(record("5", "first"), 3) << "first, but the lock is held";
  (void)node.command({"DEL", key});
  EXPECT_EQ(record("5", "first"), 1);
  EXPECT_EQ(record("6", "second"), 0) << "another waiter is first";
  // The first waiter's place lapses: the second is first now.
  (void)node.command({"ZADD", due, "1", "first"});
  EXPECT_EQ(record("6", "second"), 1);
  EXPECT_EQ(node.command({"ZCARD", queue}).integer, 1) << "the lapsed place is dropped";
}

// A claim (a fair waiter's record with a value): the node sets the lock
// key to it at once when the waiter is first and the key free (state 2),
// else keeps it, and the release that frees the key grants it to the first
// waiter: the key holds the claim's value and "<number>+<tag> <released
// value>" goes to that waiter's wake channel (never the granted value). A
// claim the waiter gave back (fair_release naming its claim) is not granted,
// and a grant no one hears is taken back. The node rules bind a grant as
// they bind an acquire: none while the node is recovering.
TEST(NodeRules, AReleaseGrantsTheFirstWaitersClaimAndNoOneElse) {
  RedisCluster cluster{1};
  RedisProbe node(cluster.node(0).port());
  ASSERT_TRUE(node.set(kMarker, "redlock-node-test max_ttl_ms=60000"));
  const std::string key = "redlock:lock:job";
  const std::string queue = "redlock:queue:job";
  const std::string due = "redlock:queue-due:job";
  const std::string claims = "redlock:queue-claim:job";
  const std::string wake = "redlock:released:@c";
  const std::string channel = "redlock:released:job";
  const auto record = [&](const std::string& ticket, const std::string& id,
                          const std::string& claim) {
    const Reply reply =
        node.command({"EVAL", body(ScriptId::ticket_enqueue), "7", kMarker, kRecovering, kFence,
                      queue, due, key, claims, "queue:job", ticket, id, "400", "1", claim});
    EXPECT_EQ(reply.elements.size(), 3U) << reply.text;
    return reply.elements.size() == 3 ? reply.elements[2].integer : -1;
  };
  const auto release = [&](const std::string& value, const std::string& place,
                           const std::string& claim_of) {
    return node.command({"EVAL", body(ScriptId::fair_release), "7", key, queue, due, claims,
                         kMarker, kRecovering, kFence, value, channel, place, "", "", "1", claim_of,
                         "", ""});
  };

  // Free, first: granted at once.
  EXPECT_EQ(record("1", wake + " 1", "10000:t1:1:value-one"), 2);
  EXPECT_EQ(node.command({"GET", key}).text, "value-one");
  EXPECT_EQ(node.command({"HEXISTS", claims, wake + " 1"}).integer, 0) << "a granted claim stays";
  // Held: the next two keep their claims.
  EXPECT_EQ(record("2", wake + " 2", "10000:t2:1:value-two"), 0);
  EXPECT_EQ(record("3", wake + " 3", "10000:t3:1:value-three"), 0);

  RedisSubscriber heard(cluster.node(0).port(), {wake, channel});
  ASSERT_TRUE(heard.ok());
  Reply reply = release("value-one", wake + " 1", wake + " 1");
  EXPECT_EQ(reply.integer, 1) << reply.text;
  EXPECT_EQ(node.command({"GET", key}).text, "value-two") << "the first waiter's claim";
  const long long left = node.command({"PTTL", key}).integer;
  EXPECT_GT(left, 9000);
  EXPECT_LE(left, 10000);
  ASSERT_EQ(node.command({"PUBLISH", channel, "marker"}).integer, 1);
  std::vector<RedisSubscriber::Message> messages = heard.until("marker");
  ASSERT_EQ(messages.size(), 1U) << "the grant alone (the marker ends the list)";
  EXPECT_EQ(messages[0].channel, wake);
  EXPECT_EQ(messages[0].payload, "2+t2:2 value-one") << "the tag and the place's ticket";

  // The third waiter gives its claim back before its turn: the second's
  // release then names it, granting nothing.
  reply = release("value-three", "", wake + " 3");
  EXPECT_EQ(reply.integer, 0) << "its value was not held";
  EXPECT_EQ(node.command({"HEXISTS", claims, wake + " 3"}).integer, 0);
  reply = release("value-two", wake + " 2", wake + " 2");
  EXPECT_EQ(reply.integer, 1) << reply.text;
  EXPECT_EQ(node.command({"EXISTS", key}).integer, 0) << "a claim given back was granted";
  ASSERT_EQ(node.command({"PUBLISH", channel, "marker"}).integer, 1);
  messages = heard.until("marker");
  ASSERT_EQ(messages.size(), 1U);
  EXPECT_EQ(messages[0].payload, "3 value-two") << "named, not granted";

  // Recovering: the claim is not granted.
  ASSERT_TRUE(node.set(key, "an-unfair-holder"));
  EXPECT_EQ(record("3", wake + " 3", "10000:t3b:1:value-three"), 3);
  ASSERT_EQ(node.command({"SET", kRecovering, "1", "PX", "60000"}).kind, Reply::Kind::status);
  reply = release("an-unfair-holder", "", "");
  EXPECT_EQ(reply.integer, 1) << reply.text;
  EXPECT_EQ(node.command({"EXISTS", key}).integer, 0) << "granted while recovering";
  (void)node.command({"DEL", kRecovering});

  // A grant no one hears is taken back.
  (void)node.command({"DEL", queue, due, claims});
  ASSERT_TRUE(node.set(key, "held"));
  EXPECT_EQ(record("4", "redlock:released:@nobody 4", "10000:t4:1:value-four"), 3);
  reply = release("held", "", "");
  EXPECT_EQ(reply.integer, 1) << reply.text;
  EXPECT_EQ(node.command({"EXISTS", key}).integer, 0) << "a grant no one heard stayed";
}

// A fair release that draws the releaser's next ticket with a pre-claim
// records the releaser's next place at the count it drew, with that claim
// ({1, count, first and free}); a node that did not hold the value draws
// and records all the same ({0, count, ...}), so the nodes' counters count
// the same draws.
TEST(NodeRules, AFairReleasePreClaimsTheReleasersNextPlaceAtTheCountItDrew) {
  RedisCluster cluster{1};
  RedisProbe node(cluster.node(0).port());
  ASSERT_TRUE(node.set(kMarker, "redlock-node-test max_ttl_ms=60000"));
  const std::string key = "redlock:lock:job";
  const std::string queue = "redlock:queue:job";
  const std::string claims = "redlock:queue-claim:job";
  const auto release = [&](const std::string& value, const std::string& next) {
    return node.command({"EVAL", body(ScriptId::fair_release), "7", key, queue,
                         "redlock:queue-due:job", claims, kMarker, kRecovering, kFence, value,
                         "redlock:released:job", "", "", "queue:job", "1", "",
                         "10000:tag-" + next + ":1:value-" + next, "400:" + next});
  };
  ASSERT_TRUE(node.set(key, "held"));
  Reply reply = release("held", "@c 1");
  ASSERT_EQ(reply.elements.size(), 3U) << reply.text;
  EXPECT_EQ(reply.elements[0].integer, 1) << "deleted";
  EXPECT_EQ(reply.elements[1].integer, 1) << "the count drawn";
  EXPECT_EQ(reply.elements[2].integer, 1) << "its next place is first and the key free";
  EXPECT_EQ(node.command({"ZSCORE", queue, "@c 1"}).text, "1");
  EXPECT_EQ(node.command({"HGET", claims, "@c 1"}).text, "10000:tag-@c 1:1:value-@c 1");
  EXPECT_EQ(node.command({"EXISTS", key}).integer, 0) << "a pre-claim is granted by no one";

  // Not held here (its grant had not come yet): drawn and recorded all
  // the same, behind the first place.
  reply = release("not-here", "@c 2");
  ASSERT_EQ(reply.elements.size(), 3U) << reply.text;
  EXPECT_EQ(reply.elements[0].integer, 0) << "nothing deleted";
  EXPECT_EQ(reply.elements[1].integer, 2);
  EXPECT_EQ(reply.elements[2].integer, 0) << "another place is first";
  EXPECT_EQ(node.command({"ZSCORE", queue, "@c 2"}).text, "2");
  EXPECT_EQ(node.command({"HGET", kFence, "queue:job"}).text, "2");
}

// A record whose waiter is behind another while the key holds its claim's
// value (granted there before the earlier place came) answers 4: the
// waiter gives that grant back instead of counting it.
TEST(NodeRules, ARecordBehindAnotherWaiterWhileHoldingItsClaimSaysSo) {
  RedisCluster cluster{1};
  RedisProbe node(cluster.node(0).port());
  const std::string key = "redlock:lock:job";
  const auto record = [&](const std::string& ticket, const std::string& id,
                          const std::string& claim) {
    const Reply reply =
        node.command({"EVAL", body(ScriptId::ticket_enqueue), "7", kMarker, kRecovering, kFence,
                      "redlock:queue:job", "redlock:queue-due:job", key, "redlock:queue-claim:job",
                      "queue:job", ticket, id, "400", "0", claim});
    EXPECT_EQ(reply.elements.size(), 3U) << reply.text;
    return reply.elements.size() == 3 ? reply.elements[2].integer : -1;
  };
  EXPECT_EQ(record("7", "later", "10000:t:0:later-value"), 2) << "first and free: granted";
  EXPECT_EQ(record("5", "earlier", "10000:u:0:earlier-value"), 3) << "first, the key held";
  EXPECT_EQ(record("7", "later", "10000:t:0:later-value"), 4);
  EXPECT_EQ(record("7", "later", ""), 0) << "without a claim, only behind";
}

}  // namespace
}  // namespace redlock::test
