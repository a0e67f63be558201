// The link to a cluster member (lib/transport/cluster_link.hpp) against real
// Redis Clusters (the ShardedMember fixture): each request reaches the
// master of its slot, batched calls stay within one slot, a failover's
// MOVED and a migration's ASK are followed within the request, a request
// whose keys span slots never leaves, and a member none of whose seeds
// answers fails its requests, naming why.
#include "transport/cluster_link.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster_member.hpp"
#include "harness.hpp"
#include "protocol/hash_slot.hpp"
#include "scripts/script_calls.hpp"
#include "scripts/scripts.hpp"
#include "scripts/sha1.hpp"
#include "transport/loop_context.hpp"
#include "transport/node_connection.hpp"

namespace redlock::test {
namespace {

using detail::ClusterLink;
using detail::hash_slot;
using detail::NodeResponse;
using std::chrono::milliseconds;

// A script of the test's own: SET KEYS[1] ARGV[1] (and touch KEYS[2] when
// given), answering +OK. Its number is one the library's table leaves free.
const detail::Script& set_script() {
  static const detail::Script script = [] {
    detail::Script made{};
    made.number = detail::kMaxScripts - 1;
    made.name = "test_set";
    made.body =
        "if KEYS[2] then redis.call('EXISTS', KEYS[2]) end "
        "return redis.call('SET', KEYS[1], ARGV[1])";
    made.sha1 = detail::sha1_hex(made.body);
    made.batched = false;
    made.shared_keys = 0;
    made.args_per_request = 0;
    made.max_reply_bytes = detail::kDefaultReplyBytes;
    return made;
  }();
  return script;
}

// A request of set_script() with `keys` and `args`.
void send_set(detail::NodeLink& link, std::initializer_list<std::string_view> keys,
              std::initializer_list<std::string_view> args,
              std::shared_ptr<detail::ResponseSink> sink, std::uint32_t tag) {
  detail::Request request;
  request.script = &set_script();
  request.keys = {keys.begin(), keys.size()};
  request.args = {args.begin(), args.size()};
  request.sent_at = steady_clock_source().now();
  request.sink = std::move(sink);
  request.tag = tag;
  link.send(std::move(request));
}

// An extend of `key`'s value "v" for a minute.
void send_extend(detail::NodeLink& link, std::string_view key,
                 std::shared_ptr<detail::ResponseSink> sink, std::uint32_t tag) {
  detail::send_to(link, detail::ExtendCall{.lock_key = key, .value = "v", .ttl_ms = "60000"}, false,
                  steady_clock_source().now(), std::move(sink), tag);
}

// Every answer a request got, by tag.
class Answers final : public detail::ResponseSink {
 public:
  struct Answer {
    NodeResponse::Kind kind = NodeResponse::Kind::reply;
    int type = 0;
    long long integer = 0;
    std::string text;
    std::string detail;
    bool may_have_run = true;
  };
  void on_response(std::size_t, std::uint32_t tag, const NodeResponse& response) override {
    ++count[tag];
    if (response.late) {
      ++late[tag];
      return;
    }
    Answer answer;
    answer.kind = response.kind;
    answer.detail = std::string(response.detail);
    answer.may_have_run = response.may_have_run;
    if (response.kind == NodeResponse::Kind::reply && response.reply_count > 0) {
      const redisReply* reply = response.replies[0];
      answer.type = reply->type;
      answer.integer = reply->integer;
      if (reply->str != nullptr) answer.text.assign(reply->str, reply->len);
    }
    answers[tag] = answer;
  }
  std::map<std::uint32_t, Answer> answers;
  // Every response by tag, late ones too: a request answered twice shows.
  std::map<std::uint32_t, int> count;
  std::map<std::uint32_t, int> late;
  [[nodiscard]] bool each_once() const {
    for (const auto& [tag, n] : count) {
      if (n - (late.count(tag) != 0 ? late.at(tag) : 0) != 1) return false;
    }
    return true;
  }
};

// A ClusterLink on a private loop, closed (and the loop checked for leaks)
// at the end.
class LinkRun {
 public:
  explicit LinkRun(const std::vector<std::string>& seeds) {
    std::string address = "redis+cluster://";
    for (std::size_t i = 0; i < seeds.size(); ++i) address += (i == 0 ? "" : ",") + seeds[i];
    const ConfigResult parsed = config_from_addresses({address});
    if (!parsed.ok()) throw std::runtime_error(parsed.error.to_string());
    member_ = parsed.config->nodes.front();
    lock_.node_timeout = milliseconds(1000);
    uv_loop_init(&loop_);
    context_ = std::make_unique<detail::LoopContext>(&loop_, steady_clock_source());
    detail::SessionSetup setup;
    setup.scripts.push_back(&detail::script(detail::ScriptId::extend));
    link_ = std::make_unique<ClusterLink>(*context_, metrics_, 0, member_, lock_, setup);
    link_->start();
  }
  ~LinkRun() { close(); }
  // Closes the link (its waiting requests are answered) and the loop, and
  // checks that no handle leaked.
  void close() {
    if (!context_) return;
    bool closed = false;
    context_->close([&] { link_->close(); }, [&] { closed = true; });
    while (!closed) uv_run(&loop_, UV_RUN_ONCE);
    link_.reset();
    context_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }
  LinkRun(const LinkRun&) = delete;
  LinkRun& operator=(const LinkRun&) = delete;

  ClusterLink& link() { return *link_; }
  [[nodiscard]] const NodeMetrics& metrics() const { return metrics_; }
  bool run_until(const std::function<bool()>& condition,
                 std::chrono::seconds limit = std::chrono::seconds(10)) {
    const auto give_up = SteadyClock::now() + limit;
    while (!condition() && SteadyClock::now() < give_up) uv_run(&loop_, UV_RUN_NOWAIT);
    return condition();
  }
  void set(const std::string& key, const std::string& value, std::uint32_t tag,
           const std::shared_ptr<Answers>& answers) {
    send_set(*link_, {key}, {value}, answers, tag);
  }

 private:
  uv_loop_t loop_{};
  NodeConfig member_;
  LockConfig lock_;
  NodeMetrics metrics_{"member"};
  std::unique_ptr<detail::LoopContext> context_;
  std::unique_ptr<ClusterLink> link_;
};

// The shard whose slots hold `key`.
std::size_t shard_of(ShardedMember& cluster, const std::string& key) {
  const int slot = hash_slot(key);
  for (std::size_t shard = 0; shard < cluster.shards(); ++shard) {
    const auto [first, last] = cluster.slots_of(shard);
    if (first <= slot && slot <= last) return shard;
  }
  return cluster.shards();
}

// The first key "prefix<n>" whose slot is in `shard`.
std::string key_in_shard(ShardedMember& cluster, std::size_t shard, const std::string& prefix) {
  for (int i = 0;; ++i) {
    const std::string key = prefix + std::to_string(i);
    if (shard_of(cluster, key) == shard) return key;
  }
}

// A loopback port bound and not listening, for as long as it lives.
struct BoundPort {
  BoundPort() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), length) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      port = ntohs(address.sin_port);
    }
  }
  ~BoundPort() {
    if (fd >= 0) ::close(fd);
  }
  BoundPort(const BoundPort&) = delete;
  BoundPort& operator=(const BoundPort&) = delete;
  int fd = -1;
  std::uint16_t port = 0;
};

// Two keys of one slot of shard 0 (one hash tag): `present` stored there,
// `absent` not; then the slot starts moving to shard 1 (IMPORTING there,
// MIGRATING here), so a call naming both is answered TRYAGAIN. Both empty
// when a step failed.
struct MovingSlot {
  std::string present;
  std::string absent;
};
MovingSlot start_moving_a_slot(ShardedMember& cluster) {
  std::string tag;
  for (int i = 0; tag.empty(); ++i) {
    const std::string candidate = "t" + std::to_string(i);
    if (shard_of(cluster, candidate) == 0) tag = candidate;
  }
  MovingSlot moving{"redlock:lock:{" + tag + "}:a", "redlock:lock:{" + tag + "}:b"};
  const std::string slot = std::to_string(hash_slot(moving.present));
  const std::string from = cluster.master(0).probe().command({"CLUSTER", "MYID"}).text;
  const std::string to = cluster.master(1).probe().command({"CLUSTER", "MYID"}).text;
  if (!cluster.master(0).probe().command({"SET", moving.present, "v"}).is_ok() ||
      !cluster.master(1).probe().command({"CLUSTER", "SETSLOT", slot, "IMPORTING", from}).is_ok() ||
      !cluster.master(0).probe().command({"CLUSTER", "SETSLOT", slot, "MIGRATING", to}).is_ok()) {
    return {};
  }
  return moving;
}

ShardedMemberOptions masters_only() {
  ShardedMemberOptions options;
  options.replicas_per_shard = 0;
  return options;
}

TEST(ClusterLink, EachRequestReachesTheMasterOfItsSlot) {
  ShardedMember cluster(masters_only());
  LinkRun run(cluster.seeds());
  auto answers = std::make_shared<Answers>();
  constexpr std::uint32_t kKeys = 60;
  for (std::uint32_t i = 0; i < kKeys; ++i) {
    run.set("redlock:lock:r" + std::to_string(i), "v" + std::to_string(i), i, answers);
  }
  ASSERT_TRUE(run.run_until([&] { return answers->answers.size() == kKeys; }));
  for (std::uint32_t i = 0; i < kKeys; ++i) {
    const Answers::Answer& answer = answers->answers[i];
    ASSERT_EQ(answer.kind, NodeResponse::Kind::reply) << answer.detail;
    EXPECT_EQ(answer.text, "OK") << i;
    const std::string key = "redlock:lock:r" + std::to_string(i);
    EXPECT_EQ(cluster.master(shard_of(cluster, key)).probe().get(key), "v" + std::to_string(i));
  }
  EXPECT_EQ(run.link().maps_read(), 1U) << "one map, read before the first request left";
  EXPECT_TRUE(run.link().ready());
}

// The mutex's extend is a batched script: requests queued in one loop turn
// go as one call, which a cluster refuses (CROSSSLOT) when their keys span
// slots. Half the keys here share a slot (one hash tag), the others are
// spread over the slots: each extend must find its key and answer 1, and
// the shared slot's requests share calls.
TEST(ClusterLink, BatchedRequestsShareACallOnlyWithinASlot) {
  ShardedMember cluster(masters_only());
  LinkRun run(cluster.seeds());
  auto answers = std::make_shared<Answers>();
  constexpr std::uint32_t kKeys = 48;
  const auto key = [](std::uint32_t i) {
    return i % 2 == 0 ? "redlock:lock:{together}" + std::to_string(i)
                      : "redlock:lock:apart" + std::to_string(i);
  };
  for (std::uint32_t i = 0; i < kKeys; ++i) run.set(key(i), "v", i, answers);
  ASSERT_TRUE(run.run_until([&] { return answers->answers.size() == kKeys; }));
  RedisServer& together = cluster.master(shard_of(cluster, key(0)));
  const long long calls_before = command_calls(together, {"evalsha", "eval"});
  auto extended = std::make_shared<Answers>();
  for (std::uint32_t i = 0; i < kKeys; ++i) {
    send_extend(run.link(), key(i), extended, i);
  }
  ASSERT_TRUE(run.run_until([&] { return extended->answers.size() == kKeys; }));
  std::uint32_t on_together = 0;
  for (std::uint32_t i = 0; i < kKeys; ++i) {
    const Answers::Answer& answer = extended->answers[i];
    ASSERT_EQ(answer.kind, NodeResponse::Kind::reply) << answer.detail;
    EXPECT_EQ(answer.type, REDIS_REPLY_INTEGER) << i << ": " << answer.text;
    EXPECT_EQ(answer.integer, 1) << i;
    EXPECT_GT(cluster.master(shard_of(cluster, key(i))).probe().pttl(key(i)), 1000) << key(i);
    if (&cluster.master(shard_of(cluster, key(i))) == &together) ++on_together;
  }
  EXPECT_TRUE(extended->each_once());
  // The 24 requests of the shared slot went in fewer calls than that.
  EXPECT_LT(command_calls(together, {"evalsha", "eval"}) - calls_before, on_together - 12);
}

TEST(ClusterLink, APromotedReplicasMovedIsFollowedWithinTheRequest) {
  ShardedMember cluster;
  LinkRun run(cluster.seeds());
  auto answers = std::make_shared<Answers>();
  const std::string key = key_in_shard(cluster, 0, "redlock:lock:m");
  run.set(key, "before", 1, answers);
  ASSERT_TRUE(run.run_until([&] { return answers->answers.count(1) == 1; }));
  ASSERT_EQ(answers->answers[1].text, "OK") << answers->answers[1].detail;
  const std::uint16_t promoted = cluster.replicas(0).front()->port();
  const std::uint16_t deposed = cluster.master(0).port();
  ASSERT_TRUE(cluster.fail_over(0));
  ASSERT_EQ(run.link().slot_map()->master_of(hash_slot(key))->port,
            cluster.replicas(0).front()->port())
      << "the link's map still names the old master";

  run.set(key, "after", 2, answers);
  ASSERT_TRUE(run.run_until([&] { return answers->answers.count(2) == 1; }));
  const Answers::Answer& answer = answers->answers[2];
  ASSERT_EQ(answer.kind, NodeResponse::Kind::reply) << answer.detail;
  EXPECT_EQ(answer.text, "OK") << "the MOVED was followed, not handed to the caller";
  EXPECT_EQ(cluster.master(0).port(), promoted);
  EXPECT_EQ(cluster.master(0).probe().get(key), "after");
  ASSERT_TRUE(run.run_until([&] { return run.link().maps_read() >= 2; }))
      << "a MOVED has the map read again";
  EXPECT_EQ(run.link().slot_map()->master_of(hash_slot(key))->port, promoted);
  // The member's metrics name the shard: the deposed master's MOVED, and
  // the promoted one taking the rest of its slots in the map read again.
  EXPECT_GE(run.metrics().map_reads.load(), 2U);
  const std::vector<ShardMetricsSnapshot> shards = run.metrics().shards();
  const auto shard = [&](std::uint16_t port) -> const ShardMetricsSnapshot* {
    for (const ShardMetricsSnapshot& each : shards) {
      if (each.shard == "127.0.0.1:" + std::to_string(port)) return &each;
    }
    return nullptr;
  };
  ASSERT_NE(shard(deposed), nullptr);
  EXPECT_EQ(shard(deposed)->moved, 1U);
  ASSERT_NE(shard(promoted), nullptr);
  EXPECT_EQ(shard(promoted)->took_over, 1U);
}

// A master that stops answering may have been replaced with no MOVED to
// say so: it is down, or back as a replica that refuses the session's first
// word. Its unreachable answer has the link read the map again, so the
// next request reaches the promoted master.
TEST(ClusterLink, AMasterThatNoLongerAnswersHasTheMapReadAgain) {
  ShardedMember cluster;
  LinkRun run(cluster.seeds());
  auto answers = std::make_shared<Answers>();
  const std::string key = key_in_shard(cluster, 0, "redlock:lock:gone");
  run.set(key, "before", 1, answers);
  ASSERT_TRUE(run.run_until([&] { return answers->answers.count(1) == 1; }));
  ASSERT_EQ(answers->answers[1].text, "OK") << answers->answers[1].detail;
  const std::uint16_t promoted = cluster.replicas(0).front()->port();
  cluster.master(0).kill9();
  ASSERT_TRUE(cluster.fail_over(0, ShardedMember::Failover::force));

  run.set(key, "lost", 2, answers);
  ASSERT_TRUE(run.run_until([&] { return answers->answers.count(2) == 1; }));
  EXPECT_EQ(answers->answers[2].kind, NodeResponse::Kind::unreachable)
      << "the old master is down: " << answers->answers[2].text;
  ASSERT_TRUE(run.run_until([&] {
    const detail::ShardEndpoint* master = run.link().slot_map()->master_of(hash_slot(key));
    return master != nullptr && master->port == promoted;
  })) << "the link's map still names the master that stopped answering";
  run.set(key, "after", 3, answers);
  ASSERT_TRUE(run.run_until([&] { return answers->answers.count(3) == 1; }));
  EXPECT_EQ(answers->answers[3].text, "OK") << answers->answers[3].detail;
  EXPECT_EQ(cluster.master(0).port(), promoted);
  EXPECT_EQ(cluster.master(0).probe().get(key), "after");
}

// A cluster that does not know the names its servers are reached by
// announces no host (empty, or "?") in its map and its redirects: each is
// the host of the server that answered.
TEST(ClusterLink, AClusterThatDoesNotNameItsHostsIsReachedAtTheAnsweringHost) {
  ShardedMemberOptions options;
  options.server.extra_arguments = {"--cluster-preferred-endpoint-type", "unknown-endpoint"};
  ShardedMember cluster(options);
  const Reply slots = cluster.master(0).probe().command({"CLUSTER", "SLOTS"});
  ASSERT_FALSE(slots.elements.empty());
  const std::string announced = slots.elements[0].elements[2].elements[0].text;
  ASSERT_TRUE(announced.empty() || announced == "?") << "the map names host " << announced;
  LinkRun run(cluster.seeds());
  auto answers = std::make_shared<Answers>();
  const std::string key = key_in_shard(cluster, 0, "redlock:lock:q");
  run.set(key, "before", 1, answers);
  ASSERT_TRUE(run.run_until([&] { return answers->answers.count(1) == 1; }));
  ASSERT_EQ(answers->answers[1].text, "OK") << answers->answers[1].detail;
  ASSERT_TRUE(cluster.fail_over(0));
  run.set(key, "after", 2, answers);
  ASSERT_TRUE(run.run_until([&] { return answers->answers.count(2) == 1; }));
  EXPECT_EQ(answers->answers[2].text, "OK") << answers->answers[2].detail;
  EXPECT_EQ(cluster.master(0).probe().get(key), "after");
}

TEST(ClusterLink, AnAskIsFollowedOnceToTheImportingMaster) {
  ShardedMember cluster(masters_only());
  LinkRun run(cluster.seeds());
  auto answers = std::make_shared<Answers>();
  const std::string key = key_in_shard(cluster, 0, "redlock:lock:a");
  const std::string slot = std::to_string(hash_slot(key));
  // The slot starts moving from shard 0 to shard 1: the key is not on
  // shard 0, which therefore answers ASK.
  const std::string from = cluster.master(0).probe().command({"CLUSTER", "MYID"}).text;
  const std::string to = cluster.master(1).probe().command({"CLUSTER", "MYID"}).text;
  ASSERT_TRUE(
      cluster.master(1).probe().command({"CLUSTER", "SETSLOT", slot, "IMPORTING", from}).is_ok());
  ASSERT_TRUE(
      cluster.master(0).probe().command({"CLUSTER", "SETSLOT", slot, "MIGRATING", to}).is_ok());

  run.set(key, "asked", 1, answers);
  ASSERT_TRUE(run.run_until([&] { return answers->answers.count(1) == 1; }));
  const Answers::Answer& answer = answers->answers[1];
  ASSERT_EQ(answer.kind, NodeResponse::Kind::reply) << answer.detail;
  EXPECT_EQ(answer.text, "OK") << "the ASK was followed, not handed to the caller";
  EXPECT_EQ(cluster.master(1).probe().command({"CLUSTER", "COUNTKEYSINSLOT", slot}).integer, 1);
  EXPECT_EQ(cluster.master(0).probe().command({"CLUSTER", "COUNTKEYSINSLOT", slot}).integer, 0);
  EXPECT_EQ(run.link().slot_map()->master_of(hash_slot(key))->port, cluster.master(0).port())
      << "an ASK moves nothing in the map";
}

TEST(ClusterLink, ARequestWhoseKeysSpanSlotsNeverLeaves) {
  ShardedMember cluster(masters_only());
  LinkRun run(cluster.seeds());
  auto answers = std::make_shared<Answers>();
  const std::string first = key_in_shard(cluster, 0, "redlock:lock:x");
  const std::string second = key_in_shard(cluster, 1, "redlock:lock:y");
  const long long calls = command_calls(cluster.master(0), {"evalsha", "eval"});
  send_set(run.link(), {first, second}, {"v"}, answers, 7);
  ASSERT_TRUE(run.run_until([&] { return answers->answers.count(7) == 1; }));
  const Answers::Answer& answer = answers->answers[7];
  EXPECT_EQ(answer.kind, NodeResponse::Kind::unreachable);
  EXPECT_NE(answer.detail.find("span hash slots"), std::string::npos) << answer.detail;
  EXPECT_FALSE(answer.may_have_run);
  EXPECT_EQ(command_calls(cluster.master(0), {"evalsha", "eval"}), calls);
  EXPECT_FALSE(cluster.master(0).probe().exists(first));
}

TEST(ClusterLink, AMemberNoSeedOfWhichAnswersFailsItsRequestsSayingWhy) {
  // Two ports this test holds bound and never listens on: a connection is
  // refused there, and no other test's server can take them meanwhile.
  std::vector<BoundPort> ports(2);
  std::vector<std::string> seeds;
  for (const BoundPort& port : ports) seeds.push_back("127.0.0.1:" + std::to_string(port.port));
  LinkRun run(seeds);
  auto answers = std::make_shared<Answers>();
  run.set("redlock:lock:none", "v", 1, answers);
  ASSERT_TRUE(run.run_until([&] { return answers->answers.count(1) == 1; }));
  const Answers::Answer& answer = answers->answers[1];
  EXPECT_EQ(answer.kind, NodeResponse::Kind::unreachable);
  EXPECT_NE(answer.detail.find("no seed of the cluster gave its slot map"), std::string::npos)
      << answer.detail;
  EXPECT_FALSE(answer.may_have_run);
  EXPECT_EQ(run.link().slot_map(), nullptr);
}

// Subscribe mode goes to the first seed's connection: a cluster carries a
// PUBLISH to every server, so a subscription there hears a release
// published on any master.
TEST(ClusterLink, ASubscriptionHearsWhatAnyMasterPublishes) {
  ShardedMember cluster(masters_only());
  LinkRun run(cluster.seeds());
  std::vector<std::string> heard;
  run.link().set_push_handler([&](std::string_view channel, std::string_view payload) {
    heard.push_back(std::string(channel) + " " + std::string(payload));
  });
  ASSERT_TRUE(run.run_until([&] { return run.link().ready(); }));
  run.link().send_command({"SUBSCRIBE", "redlock:released:job"});
  ASSERT_TRUE(
      run.run_until([&] { return subscribers(cluster.master(0), "redlock:released:job") == 1; }));
  for (std::size_t shard = 0; shard < cluster.shards(); ++shard) {
    (void)cluster.master(shard).probe().command(
        {"PUBLISH", "redlock:released:job", "from-" + std::to_string(shard)});
  }
  ASSERT_TRUE(run.run_until([&] { return heard.size() == cluster.shards(); }));
  for (std::size_t shard = 0; shard < cluster.shards(); ++shard) {
    EXPECT_NE(
        std::find(heard.begin(), heard.end(), "redlock:released:job from-" + std::to_string(shard)),
        heard.end())
        << shard;
  }
}

// A shard channel (SSUBSCRIBE) is subscribed through the master of its
// slot, and what is published there (SPUBLISH) is heard. When the slot
// moves to another shard, its old master ends the subscription of its own
// accord (sunsubscribe); the link reads the map again — on a session of
// its own, since every session to a master is in subscribe mode here (a
// channel in each shard), where a server answers no CLUSTER SLOTS — and
// its ready handler subscribes the channel at the new master. The answer
// to the link's own SUNSUBSCRIBE is that command's: the next request on
// the session gets its own.
TEST(ClusterLink, AShardSubscriptionFollowsItsSlotToItsNewMaster) {
  ShardedMember cluster(masters_only());
  LinkRun run(cluster.seeds());
  // One channel in each shard's slots, "redlock:{<n>}released:job", and a
  // second one in shard 0's that stays there (its session stays in
  // subscribe mode when the first one's slot moves).
  std::vector<std::string> channels(cluster.shards() + 1);
  for (int i = 0; std::any_of(channels.begin(), channels.end(),
                              [](const std::string& each) { return each.empty(); });
       ++i) {
    const std::string candidate = "redlock:{" + std::to_string(i) + "}released:job";
    const std::size_t shard = cluster.shard_of(hash_slot(candidate));
    std::string& place = channels[channels[shard].empty() || shard != 0 ? shard : cluster.shards()];
    if (place.empty()) place = candidate;
  }
  const std::string& moved = channels[0];
  const std::uint16_t slot = hash_slot(moved);
  std::vector<std::string> heard;
  run.link().set_push_handler([&](std::string_view on, std::string_view payload) {
    if (on == moved) heard.emplace_back(payload);
  });
  const auto subscribe_all = [&] {
    for (const std::string& channel : channels) {
      run.link().send_keyed_command(channel, {"SSUBSCRIBE", channel});
    }
  };
  run.link().set_ready_handler(subscribe_all);
  ASSERT_TRUE(run.run_until([&] { return run.link().ready(); }));
  subscribe_all();
  for (std::size_t i = 0; i < channels.size(); ++i) {
    RedisServer& master = cluster.master(i % cluster.shards());
    ASSERT_TRUE(run.run_until([&] { return shard_subscribers(master, channels[i]) == 1; })) << i;
  }
  (void)cluster.master(0).probe().command({"SPUBLISH", moved, "before"});
  ASSERT_TRUE(run.run_until([&] { return heard.size() == 1; }));
  EXPECT_EQ(heard.front(), "before");

  const std::uint64_t maps_before = run.link().maps_read();
  ASSERT_TRUE(cluster.move_slot(slot, 1));
  ASSERT_TRUE(run.run_until([&] { return shard_subscribers(cluster.master(1), moved) == 1; }))
      << "the channel was not subscribed again at its slot's new master";
  EXPECT_GT(run.link().maps_read(), maps_before);
  EXPECT_EQ(shard_subscribers(cluster.master(0), moved), 0);
  (void)cluster.master(1).probe().command({"SPUBLISH", moved, "after"});
  ASSERT_TRUE(run.run_until([&] { return heard.size() == 2; }));
  EXPECT_EQ(heard.back(), "after");

  // Out of subscribe mode on master 1 (its two channels gone), a request
  // there is answered as its own.
  run.link().set_ready_handler({});
  for (const std::string& channel : {moved, channels[1]}) {
    run.link().send_keyed_command(channel, {"SUNSUBSCRIBE", channel});
  }
  ASSERT_TRUE(run.run_until([&] { return shard_subscribers(cluster.master(1), moved) == 0; }));
  auto answers = std::make_shared<Answers>();
  const std::string key = "redlock:{" + moved.substr(9, moved.find('}') - 9) + "}lock:job";
  ASSERT_EQ(hash_slot(key), slot);
  run.set(key, "v", 7, answers);
  ASSERT_TRUE(run.run_until([&] { return answers->answers.count(7) == 1; }));
  EXPECT_EQ(answers->answers[7].text, "OK") << answers->answers[7].detail;
  EXPECT_EQ(RedisProbe(cluster.master(1).port()).get(key), "v");
}

// A plain command (the map's CLUSTER SLOTS, a redirect's ASKING) sent while
// batched requests wait for the turn's flush goes out after them: replies
// are matched to requests by position, so each gets its own.
TEST(ClusterLink, APlainCommandKeepsItsPlaceBehindPendingRequests) {
  RedisServer server;
  ASSERT_TRUE(server.probe().command({"SET", "redlock:lock:p", "v"}).is_ok());
  uv_loop_t loop;
  uv_loop_init(&loop);
  {
    detail::LoopContext context(&loop, steady_clock_source());
    NodeMetrics metrics("node");
    LockConfig lock;
    lock.node_timeout = milliseconds(1000);
    detail::SessionSetup setup;
    setup.scripts.push_back(&detail::script(detail::ScriptId::extend));
    detail::NodeConnection connection(context, metrics, 0, node_at(server.port()), lock, setup);
    connection.start();
    const auto run_until = [&](const std::function<bool()>& condition) {
      const auto give_up = SteadyClock::now() + std::chrono::seconds(10);
      while (!condition() && SteadyClock::now() < give_up) uv_run(&loop, UV_RUN_NOWAIT);
      return condition();
    };
    ASSERT_TRUE(run_until([&] { return connection.ready(); }));
    auto answers = std::make_shared<Answers>();
    // Two extends (batched: pending until the flush), then ECHO, then one
    // more extend.
    for (std::uint32_t tag : {1U, 2U}) {
      send_extend(connection, "redlock:lock:p", answers, tag);
    }
    static constexpr std::array<std::string_view, 2> kEcho{"ECHO", "behind"};
    detail::Request echo;
    echo.command = kEcho;
    echo.sent_at = steady_clock_source().now();
    echo.sink = answers;
    echo.tag = 3;
    connection.send(std::move(echo));
    send_extend(connection, "redlock:lock:p", answers, 4);
    ASSERT_TRUE(run_until([&] { return answers->answers.size() == 4; }));
    for (std::uint32_t tag : {1U, 2U, 4U}) {
      EXPECT_EQ(answers->answers[tag].type, REDIS_REPLY_INTEGER) << tag;
      EXPECT_EQ(answers->answers[tag].integer, 1) << tag;
    }
    EXPECT_EQ(answers->answers[3].text, "behind");
    EXPECT_TRUE(answers->each_once());
    bool closed = false;
    context.close([&] { connection.close(); }, [&] { closed = true; });
    while (!closed) uv_run(&loop, UV_RUN_ONCE);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

// TRYAGAIN (a call whose keys are in a slot that is moving, some moved and
// some not) is sent again after a pause, at most kMaxRedirects times
// within the request's deadline, then handed over as the answer.
TEST(ClusterLink, TryAgainIsSentAgainAfterAPauseThenHandedOver) {
  ShardedMember cluster(masters_only());
  LinkRun run(cluster.seeds());
  auto answers = std::make_shared<Answers>();
  // Two keys of one slot (one hash tag) in shard 0: one there, one not.
  const MovingSlot moving = start_moving_a_slot(cluster);
  ASSERT_FALSE(moving.present.empty()) << "the slot did not start moving";
  const std::string& present = moving.present;
  const std::string& absent = moving.absent;

  send_set(run.link(), {absent, present}, {"v"}, answers, 1);
  ASSERT_TRUE(run.run_until([&] { return answers->answers.count(1) == 1; }));
  const Answers::Answer& answer = answers->answers[1];
  ASSERT_EQ(answer.kind, NodeResponse::Kind::reply) << answer.detail;
  EXPECT_EQ(answer.type, REDIS_REPLY_ERROR);
  EXPECT_TRUE(answer.text.starts_with("TRYAGAIN")) << answer.text;
  EXPECT_TRUE(answers->each_once());
  // Sent at least twice (the deadline is a second, the pause 20 ms), and
  // at most once plus kMaxRedirects times.
  const Reply stats = cluster.master(0).probe().command({"INFO", "commandstats"});
  long long rejected = 0;
  for (const std::string_view command : {"cmdstat_eval:", "cmdstat_evalsha:"}) {
    const std::size_t at = stats.text.find(command);
    if (at == std::string::npos) continue;
    const std::size_t field = stats.text.find("rejected_calls=", at);
    rejected += std::stoll(stats.text.substr(field + 15));
  }
  EXPECT_GE(rejected, 2);
  EXPECT_LE(rejected, 1 + ClusterLink::kMaxRedirects);
}

// A request pausing after TRYAGAIN when the link closes is answered, once.
TEST(ClusterLink, CloseAnswersARequestPausingAfterTryAgain) {
  ShardedMember cluster(masters_only());
  LinkRun run(cluster.seeds());
  const MovingSlot moving = start_moving_a_slot(cluster);
  ASSERT_FALSE(moving.present.empty()) << "the slot did not start moving";
  const std::string& present = moving.present;
  const std::string& absent = moving.absent;
  auto answers = std::make_shared<Answers>();
  send_set(run.link(), {absent, present}, {"v"}, answers, 1);
  // Refused with TRYAGAIN: it pauses 20 ms between tries. The link is
  // closed while the request is pausing (not while a try is in flight,
  // which the connection's own close answers).
  ASSERT_TRUE(run.run_until([&] { return run.link().pausing() == 1; }))
      << "the request never paused after TRYAGAIN";
  run.close();
  EXPECT_EQ(answers->count[1], 1) << "answered exactly once";
}

// close() answers what waits for the map: a seed that never answers (a
// stopped server) holds the map read until the link closes.
TEST(ClusterLink, CloseAnswersTheRequestsWaitingForTheMap) {
  RedisServer stopped;
  stopped.pause();
  LinkRun run({stopped.address()});
  auto answers = std::make_shared<Answers>();
  run.set("redlock:lock:w", "v", 1, answers);
  run.set("redlock:lock:x", "v", 2, answers);
  run.close();
  ASSERT_EQ(answers->answers.size(), 2U);
  for (const auto& [tag, answer] : answers->answers) {
    EXPECT_EQ(answer.kind, NodeResponse::Kind::unreachable) << tag;
    EXPECT_EQ(answer.detail, "connection closed") << tag;
  }
  EXPECT_TRUE(answers->each_once());
  stopped.resume();
}

}  // namespace
}  // namespace redlock::test
