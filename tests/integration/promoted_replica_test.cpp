// A member whose server was replaced under its address by a promoted
// replica (docs/safety.md, "A server replaced under its address"): the
// replica holds a copy of its master's identity marker but not the grants
// replication had not carried yet, so it is a node that lost data; each
// session's first word (check_marker) takes the copied marker away and the
// node rules refuse the replica until the amnesia defence recovered it. A
// server restarted with its own data (a new run_id, no promotion) is left
// alone. Member 0 is reached by one path, a symlink to a server's Unix
// socket, renamed over to the replica's socket at the "failover": one
// address, two servers, as a virtual IP or a DNS name moved by a failover
// manager would give.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

const std::string kMarkerKey = "redlock:node";

std::string run_id_of(RedisServer& server) {
  const Reply info = RedisProbe(server.port()).command({"INFO", "server"});
  const std::size_t at = info.text.find("run_id:");
  return at == std::string::npos ? std::string() : info.text.substr(at + 7, 40);
}

class PromotedReplica : public ::testing::Test {
 protected:
  PromotedReplica() {
    RedisServerOptions options;
    options.unix_socket = true;
    master_ = std::make_unique<RedisServer>(options);
    options.master_port = master_->port();
    replica_ = std::make_unique<RedisServer>(options);
    std::filesystem::create_symlink(master_->unix_path(), link_);
  }
  ~PromotedReplica() override { std::filesystem::remove(link_); }

  QuorumConfig config() {
    QuorumConfig quorum = config_for(others_, std::chrono::seconds(20));
    NodeConfig member;
    member.unix_path = link_.string();
    member.name = "member-0";
    quorum.nodes.insert(quorum.nodes.begin(), member);
    quorum.lock.reconnect_min = milliseconds(20);
    quorum.lock.reconnect_max = milliseconds(100);
    return quorum;
  }

  // The failover: the master gone, the path names the replica's socket.
  void fail_over() {
    master_->kill9();
    const std::filesystem::path moved = link_.string() + ".new";
    std::filesystem::create_symlink(replica_->unix_path(), moved);
    std::filesystem::rename(moved, link_);
  }

  RedisCluster others_{2};
  std::unique_ptr<RedisServer> master_;
  std::unique_ptr<RedisServer> replica_;
  const std::filesystem::path link_ =
      std::filesystem::temp_directory_path() /
      ("redlock-member-" + std::to_string(::getpid()) + "-" +
       std::to_string(reinterpret_cast<std::uintptr_t>(this)) + ".sock");
};

TEST_F(PromotedReplica, AReplicaPromotedUnderItsMastersAddressGrantsNothingUntilRecovered) {
  BlockingClient a(config());
  {
    // A first use marks every node; the marker names its server.
    const AcquireResult warm = a.acquire(Resource("warm-up"));
    ASSERT_TRUE(warm.ok()) << warm.error.message();
    (void)a.release(*warm.lock);
  }
  const std::optional<std::string> marker = RedisProbe(master_->port()).get(kMarkerKey);
  ASSERT_TRUE(marker.has_value());
  EXPECT_NE(marker->find(" run_id=" + run_id_of(*master_)), std::string::npos) << *marker;
  ASSERT_TRUE(eventually([&] { return RedisProbe(replica_->port()).get(kMarkerKey) == marker; }))
      << "the replica never copied the marker";

  // Replication stops here (the replica takes no more of the master's
  // writes): every grant from now on is one the replica lacks.
  ASSERT_EQ(RedisProbe(replica_->port()).command({"REPLICAOF", "NO", "ONE"}).text, "OK");
  // Node 2 is held by a stranger for a moment, so A's lock rests on the
  // master and node 1 alone.
  RedisProbe third(others_.node(1).port());
  ASSERT_EQ(third.command({"SET", "redlock:lock:job", "stranger", "PX", "300"}).text, "OK");
  const AcquireResult held = a.acquire(Resource("job"));
  ASSERT_TRUE(held.ok()) << held.error.message();
  ASSERT_EQ(third.get("redlock:lock:job"), "stranger");
  ASSERT_TRUE(eventually([&] { return third.pttl("redlock:lock:job") == -2; }));

  fail_over();
  // B reaches member 0's address and finds the replica: it lacks A's key,
  // and node 2 is free now. Granting there would give B a majority while A
  // holds the lock.
  BlockingClient b(config());
  const AcquireResult second = b.acquire(Resource("job"));
  EXPECT_FALSE(second.ok()) << "two holders: the promoted replica granted A's lock again";
  EXPECT_NE(second.nodes[0].status, NodeStatus::granted);
  // The replica is a node that lost data: recovered with a delay, and
  // marked again in its own name.
  RedisProbe promoted(replica_->port());
  ASSERT_TRUE(eventually([&] { return promoted.pttl("redlock:recovering") > 0; }))
      << "no recovery delay on the promoted replica";
  const std::optional<std::string> remarked = promoted.get(kMarkerKey);
  ASSERT_TRUE(remarked.has_value());
  EXPECT_NE(remarked->find(" run_id=" + run_id_of(*replica_)), std::string::npos) << *remarked;
}

// The address may move before the replica is promoted: a session opened
// then finds a replica and is refused (a replica grants nothing, and a
// session checked before the promotion must not serve after it); the
// session opened once it is promoted takes the copied marker away.
TEST_F(PromotedReplica, ASessionToAReplicaIsRefusedAndTheOneAfterItsPromotionTakesTheMarker) {
  {
    BlockingClient a(config());
    const AcquireResult warm = a.acquire(Resource("warm-up"));
    ASSERT_TRUE(warm.ok()) << warm.error.message();
    (void)a.release(*warm.lock);
  }
  RedisProbe replica(replica_->port());
  ASSERT_TRUE(eventually([&] { return replica.get(kMarkerKey).has_value(); }));
  const std::filesystem::path moved = link_.string() + ".new";
  std::filesystem::create_symlink(replica_->unix_path(), moved);
  std::filesystem::rename(moved, link_);

  BlockingClient b(config());
  const AcquireResult early = b.acquire(Resource("early"));
  EXPECT_NE(early.nodes[0].status, NodeStatus::granted);
  ASSERT_TRUE(eventually([&] {
    const std::vector<NodeHealth> health = b.node_health();
    return health[0].last_error.find("this server is a replica") != std::string::npos;
  })) << b.node_health()[0].last_error;

  master_->kill9();
  ASSERT_EQ(replica.command({"REPLICAOF", "NO", "ONE"}).text, "OK");
  // B's connection comes back on its own (backoff), its new session first.
  ASSERT_TRUE(eventually([&] { return !replica.get(kMarkerKey).has_value(); }))
      << "the session after the promotion kept the copied marker";
  const AcquireResult after = b.acquire(Resource("after"));
  EXPECT_NE(after.nodes[0].status, NodeStatus::granted);
  ASSERT_TRUE(eventually([&] { return replica.pttl("redlock:recovering") > 0; }));
}

TEST_F(PromotedReplica, AServerRestartedWithItsOwnDataKeepsItsMarkerAndGrantsAtOnce) {
  // The same server restarted (a new run_id, no promotion): its data is
  // its own, and a node that keeps what it acknowledged need not wait.
  RedisServerOptions options;
  options.persistence = Persistence::aof_always;
  RedisServer durable(options);
  QuorumConfig quorum = config_for(others_);
  quorum.nodes.insert(quorum.nodes.begin(), node_at(durable.port()));
  quorum.lock.reconnect_min = milliseconds(20);
  quorum.lock.reconnect_max = milliseconds(100);
  BlockingClient client(quorum);
  const AcquireResult warm = client.acquire(Resource("warm-up"));
  ASSERT_TRUE(warm.ok()) << warm.error.message();
  (void)client.release(*warm.lock);
  const std::string before = run_id_of(durable);
  durable.kill9();
  durable.restart();
  ASSERT_NE(run_id_of(durable), before);
  BlockingClient fresh(quorum);
  const AcquireResult after = fresh.acquire(Resource("after-restart"));
  ASSERT_TRUE(after.ok()) << after.error.message();
  RedisProbe probe(durable.port());
  EXPECT_TRUE(eventually([&] {
    return probe.get("redlock:lock:after-restart") == after.lock->value.str();
  })) << "the restarted node did not grant";
  EXPECT_TRUE(probe.get(kMarkerKey).has_value());
  EXPECT_EQ(probe.pttl("redlock:recovering"), -2);
}

TEST_F(PromotedReplica, AMarkerThatNamesNoServerIsNamedByItsMasterAndTakenFromAPromotedReplica) {
  // Markers written before markers named their server: the master that
  // holds one is given its name at a session's start; a promoted replica
  // that holds one cannot tell whose it is, and loses it.
  const std::string old_marker = "redlock-node-0123456789abcdef max_ttl_ms=20000";
  RedisProbe master(master_->port());
  ASSERT_EQ(master.command({"SET", kMarkerKey, old_marker}).text, "OK");
  for (std::size_t i = 0; i < others_.size(); ++i) {
    ASSERT_EQ(RedisProbe(others_.node(i).port()).command({"SET", kMarkerKey, old_marker}).text,
              "OK");
  }
  ASSERT_TRUE(
      eventually([&] { return RedisProbe(replica_->port()).get(kMarkerKey) == old_marker; }));
  {
    BlockingClient client(config());
    const AcquireResult first = client.acquire(Resource("first"));
    ASSERT_TRUE(first.ok()) << first.error.message();
  }
  // Named as the scripts name markers: the server's history, then its run_id.
  const std::string replication = master.command({"INFO", "replication"}).text;
  const std::size_t replid_at = replication.find("master_replid:");
  ASSERT_NE(replid_at, std::string::npos);
  EXPECT_EQ(master.get(kMarkerKey), old_marker +
                                        " replid=" + replication.substr(replid_at + 14, 40) +
                                        " run_id=" + run_id_of(*master_));

  RedisProbe replica(replica_->port());
  ASSERT_EQ(replica.command({"REPLICAOF", "NO", "ONE"}).text, "OK");
  ASSERT_EQ(replica.command({"SET", kMarkerKey, old_marker}).text, "OK");
  fail_over();
  BlockingClient after(config());
  const AcquireResult second = after.acquire(Resource("second"));
  EXPECT_NE(second.nodes[0].status, NodeStatus::granted);
  ASSERT_TRUE(eventually([&] { return replica.pttl("redlock:recovering") > 0; }))
      << "the promoted replica was not recovered with a delay";
}

// The per-slot check (check_slot_markers) of a promoted server scans its
// keyspace for copies of another server's markers once per promotion: it
// notes the promotion, by the server's run_id and replication id, and
// skips the scan while the note matches. A server promoted a second time
// has a new replication id, so a note of its first promotion, come back to
// it by replication, does not spare it the scan.
TEST(SlotMarkersCheck, APromotedServerScansOncePerPromotion) {
  RedisServer master;
  RedisServerOptions options;
  options.master_port = master.port();
  RedisServer server(options);
  RedisProbe m(master.port());
  RedisProbe s(server.port());
  const std::string marker = "redlock:{0th}node";
  const std::string note = "redlock:{0th}checked";
  const std::string by_master = "x run_id=" + run_id_of(master);
  ASSERT_TRUE(m.command({"SET", marker, by_master}).is_ok());
  ASSERT_TRUE(eventually([&] { return s.get(marker) == by_master; }));
  const detail::ScriptCall check =
      detail::encode(detail::CheckSlotMarkersCall{.key_prefix = "redlock:", .slot_tag = "0th"});
  const auto run_check = [&](RedisProbe& on) { return on.command(eval_words(check)); };

  ASSERT_TRUE(s.command({"REPLICAOF", "NO", "ONE"}).is_ok());
  const long long before = calls_of(s, "scan");
  EXPECT_EQ(run_check(s).integer, 1) << "the copied marker was kept";
  EXPECT_GT(calls_of(s, "scan"), before);
  const std::string noted = s.get(note).value_or("");
  EXPECT_EQ(noted.substr(0, 40), run_id_of(server)) << noted;
  // Checked for this promotion: the next session's check scans nothing.
  const long long after_first = calls_of(s, "scan");
  EXPECT_EQ(run_check(s).integer, 0);
  EXPECT_EQ(calls_of(s, "scan"), after_first);

  // The server a replica again, of a master that holds its note (as a
  // copy made by replication would) and a marker of its own; then
  // promoted again.
  ASSERT_TRUE(m.command({"SET", note, noted}).is_ok());
  ASSERT_TRUE(m.command({"SET", marker, by_master}).is_ok());
  ASSERT_TRUE(s.command({"REPLICAOF", "127.0.0.1", std::to_string(master.port())}).is_ok());
  ASSERT_TRUE(eventually([&] { return s.get(marker) == by_master && s.get(note) == noted; }))
      << "the server never copied its master's keys";
  ASSERT_TRUE(s.command({"REPLICAOF", "NO", "ONE"}).is_ok());
  EXPECT_EQ(run_check(s).integer, 1) << "a note of an earlier promotion spared the scan";
  EXPECT_NE(s.get(note), noted);
}

// The server follows a master it never reaches (its data stays as it
// was), then takes over again: a promotion, with a new replication history.
void follow_no_one_then_take_over(RedisProbe& server) {
  ASSERT_TRUE(server.command({"REPLICAOF", "127.0.0.1", "1"}).is_ok());
  ASSERT_TRUE(server.command({"REPLICAOF", "NO", "ONE"}).is_ok());
}

// Marks the server (`mark`), then runs a session's check (`check`): the
// marker, written in the server's current history, stands.
void expect_a_new_marker_stands(RedisProbe& server, const detail::ScriptCall& mark,
                                const detail::ScriptCall& check, const std::string& key) {
  ASSERT_EQ(server.command(eval_words(mark)).elements.at(0).integer, 1);
  EXPECT_EQ(server.command(eval_words(check)).integer, 0);
  EXPECT_TRUE(server.exists(key)) << "a marker of the current history was deleted";
}

// A server promoted again after it followed a master it never caught up
// with (a failback to a lagging server): the marker it wrote before it was
// a replica may lack the grants of the master it followed, so its check
// deletes it as a copy of another server's would be. A marker it writes
// after the promotion, in its new replication history, stands.
TEST(MarkerHistory, AServerPromotedBackWithoutCatchingUpDropsItsEarlierMarker) {
  RedisServer server;
  RedisProbe s(server.port());
  const std::vector<std::string> patterns{"redlock:lock:*"};
  const detail::ScriptCall mark =
      detail::encode(detail::DeclareNewCall{.marker_key = kMarkerKey,
                                            .recovering_key = "redlock:recovering",
                                            .fence_key = "redlock:fence",
                                            .marker_value = "m",
                                            .first_init_prefix = detail::kFirstInitMarkerPrefix,
                                            .lock_patterns = patterns});
  const detail::ScriptCall check =
      detail::encode(detail::CheckMarkerCall{.marker_key = kMarkerKey});
  ASSERT_EQ(s.command(eval_words(mark)).elements.at(0).integer, 1);
  // Named by the script: the server and its replication history.
  EXPECT_NE(s.get(kMarkerKey).value_or("").find(" replid="), std::string::npos);
  EXPECT_EQ(s.command(eval_words(check)).integer, 0);

  follow_no_one_then_take_over(s);
  EXPECT_EQ(s.command(eval_words(check)).integer, 1) << "its earlier marker was kept";
  EXPECT_FALSE(s.exists(kMarkerKey));
  expect_a_new_marker_stands(s, mark, check, kMarkerKey);
}

// The same per slot (check_slot_markers), the record of the first check
// made before the server followed another master.
TEST(MarkerHistory, AServerPromotedBackWithoutCatchingUpDropsItsEarlierSlotMarkers) {
  RedisServer server;
  RedisProbe s(server.port());
  const std::array<std::string_view, 1> tags{"0th"};
  const detail::ScriptCall mark = detail::encode(
      detail::DeclareNewSlotsCall{.key_prefix = "redlock:",
                                  .marker_value = "m",
                                  .first_init_prefix = detail::kFirstInitMarkerPrefix,
                                  .mark = true,
                                  .lock_pattern = "redlock:{*}lock:*",
                                  .permit_pattern = "redlock:{*}sem:*",
                                  .slot_tags = tags});
  const detail::ScriptCall check =
      detail::encode(detail::CheckSlotMarkersCall{.key_prefix = "redlock:", .slot_tag = "0th"});
  const std::string marker = "redlock:{0th}node";
  // Promoted once: marked and checked in that history.
  follow_no_one_then_take_over(s);
  expect_a_new_marker_stands(s, mark, check, marker);

  // A replica again that never catches up, then promoted again.
  follow_no_one_then_take_over(s);
  EXPECT_EQ(s.command(eval_words(check)).integer, 1) << "its earlier slot marker was kept";
  EXPECT_FALSE(s.exists(marker));
  expect_a_new_marker_stands(s, mark, check, marker);
}

}  // namespace
}  // namespace redlock::test
