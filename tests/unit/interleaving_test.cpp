// AcquireOperation and the lock kinds driven over fake links
// (tests/support/fake_link.hpp) through exact interleavings: each node's
// answer, its order, a timeout, a late reply and a session reset are chosen
// here, not left to a loaded machine. The same rules have real-node tests
// (tests/integration); these pin the order-dependent parts.
#include <gtest/gtest.h>
#include <uv.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fake_link.hpp"
#include "manual_clock.hpp"
#include "operations/acquire_operation.hpp"
#include "operations/client_core.hpp"
#include "operations/launch.hpp"
#include "redlock/error.hpp"
#include "scripts/scripts.hpp"

namespace redlock::test {
namespace {

using detail::AcquireOperation;
using detail::ClientCore;
using detail::ScriptId;
using std::chrono::milliseconds;

constexpr long long kGranted = 1;
constexpr long long kRefused = 0;
constexpr long long kUnmarked = 2;
constexpr long long kRecovering = 3;

class Interleaving : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(uv_loop_init(&loop_), 0); }

  void TearDown() override {
    if (core_) {
      bool closed = false;
      core_->close([&] { closed = true; });
      core_.reset();
      for (int i = 0; i < 100 && !closed; ++i) uv_run(&loop_, UV_RUN_NOWAIT);
      EXPECT_TRUE(closed);
    }
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }

  // `clusters`: every member a Redis Cluster, so that keys are named per
  // slot (scripts/key_space.hpp); the fake links stand in for them alike.
  void start(std::size_t nodes, bool clusters = false) {
    QuorumConfig config;
    for (std::size_t i = 0; i < nodes; ++i) {
      NodeConfig node;
      node.name = "n" + std::to_string(i);
      node.host = "fake";
      node.port = static_cast<std::uint16_t>(7000 + i);
      if (clusters)
        node.cluster.push_back(ClusterSeed{.host = "fake", .port = node.port, .unix_path = {}});
      config.nodes.push_back(node);
    }
    ClientOptions options;
    options.clock = &clock_;
    core_ = ClientCore::create(&loop_, config, options, fake_.factory());
  }

  // Runs what the loop has ready (posted tasks, the turn's flush, timers
  // due on the manual clock), without waiting.
  void turn() {
    for (int i = 0; i < 4; ++i) uv_run(&loop_, UV_RUN_NOWAIT);
  }

  // Runs the loop until `done` holds: for what waits on a timer (the
  // timer queue runs on the process's steady clock). Bounded: false after
  // `limit` (a generous bound against a hang, not a timing claim).
  template <typename Done>
  bool run_until(Done done, milliseconds limit = milliseconds(5000)) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) return false;
      if (uv_run(&loop_, UV_RUN_ONCE) == 0) turn();
    }
    return true;
  }

  std::shared_ptr<AcquireOperation> acquire(Resource resource, AcquireOptions options) {
    auto op = detail::launch<AcquireOperation>(
        *core_, std::move(resource), options,
        [this](AcquireResult result) { result_ = std::move(result); });
    turn();
    return op;
  }

  // The attempt pending on `node`: the acquire script, or the same
  // acquire as a transaction (acquire_set).
  SentRequest* attempt(std::size_t node) {
    std::vector<SentRequest*> found = fake_.pending(node, ScriptId::acquire);
    for (SentRequest* each : fake_.pending(node, ScriptId::acquire_set)) found.push_back(each);
    EXPECT_EQ(found.size(), 1U) << "attempts pending on node " << node;
    return found.size() == 1 ? found.front() : nullptr;
  }

  // An acquire of the set {a, c} (two slots when keys are named per slot).
  std::shared_ptr<AcquireOperation> launch_set(const AcquireOptions& options) {
    auto op = detail::launch<AcquireOperation>(
        *core_, std::vector<Resource>{Resource("a"), Resource("c")}, options,
        [this](AcquireResult result) { result_ = std::move(result); });
    turn();
    return op;
  }

  // Every acquire_all call pending on `node` answered: granted.
  void grant_every_part(std::size_t node) {
    for (SentRequest* part : fake_.pending(node, ScriptId::acquire_all)) {
      fake_.reply(*part, resp_integers({kGranted, 0}));
    }
  }

  // The cleanups sent to `node` that release `value`.
  std::size_t releases_of(std::size_t node, const std::string& value) {
    std::size_t count = 0;
    for (SentRequest* cleanup : fake_.cleanups(node)) {
      if (!cleanup->args.empty() && cleanup->args[0] == value) ++count;
    }
    return count;
  }

  uv_loop_t loop_{};
  ManualClock clock_;
  FakeNodes fake_;
  std::shared_ptr<ClientCore> core_;
  std::optional<AcquireResult> result_;
};

AcquireOptions try_once() {
  AcquireOptions options;
  options.retry_count = 0;
  options.fair = false;
  return options;
}

// A failed attempt undoes its value on exactly the nodes that may have
// stored it: the grants, not the refusals (busy, recovering), which
// provably stored nothing.
TEST_F(Interleaving, AFailedAttemptUndoesOnlyWhereItMayHaveStoredItsValue) {
  start(5);
  acquire(Resource("job"), try_once());
  std::vector<SentRequest*> sent;
  for (std::size_t n = 0; n < 5; ++n) sent.push_back(attempt(n));
  ASSERT_TRUE(sent[0] && sent[1] && sent[2] && sent[3] && sent[4]);
  const std::string value = sent[0]->args[0];
  fake_.reply(*sent[0], resp_integers({kGranted, 0}));
  fake_.reply(*sent[1], resp_integers({kGranted, 0}));
  fake_.reply(*sent[2], resp_integers({kRefused, 5000}));
  fake_.reply(*sent[3], resp_integers({kRefused, 5000}));
  EXPECT_FALSE(result_) << "decided before a majority could be ruled out";
  fake_.reply(*sent[4], resp_integers({kRecovering, 1000}));
  turn();
  ASSERT_TRUE(result_);
  // Two busy nodes alone do not explain the failure.
  EXPECT_EQ(result_->error, make_error_code(errc::no_quorum));
  EXPECT_EQ(releases_of(0, value), 1U);
  EXPECT_EQ(releases_of(1, value), 1U);
  for (std::size_t n = 2; n < 5; ++n) EXPECT_EQ(releases_of(n, value), 0U) << "node " << n;
}

// A grant that arrives after its attempt was decided never votes in a later
// attempt, and is undone where it landed. Attempt 1: two grants, two
// refusals, the fifth node times out (lost); attempt 2: the same two
// grants and two refusals, while the fifth node's late grant of attempt 1
// arrives. Counted, it would make three of five.
TEST_F(Interleaving, ALateGrantOfAnEarlierAttemptNeverVotesAndIsUndone) {
  start(5);
  AcquireOptions options = try_once();
  options.retry_count = 1;
  options.retry_delay = milliseconds(50);
  acquire(Resource("job"), options);
  std::vector<SentRequest*> first;
  for (std::size_t n = 0; n < 5; ++n) first.push_back(attempt(n));
  ASSERT_TRUE(first[4]);
  const std::string first_value = first[0]->args[0];
  fake_.reply(*first[0], resp_integers({kGranted, 0}));
  fake_.reply(*first[1], resp_integers({kGranted, 0}));
  fake_.reply(*first[2], resp_integers({kRefused, 5000}));
  fake_.reply(*first[3], resp_integers({kRefused, 5000}));
  fake_.time_out(*first[4]);
  turn();
  ASSERT_FALSE(result_);
  // The timed-out node may have stored the value: undone there too.
  EXPECT_EQ(releases_of(4, first_value), 1U);
  ASSERT_TRUE(run_until([&] {
    return !fake_.pending(0, ScriptId::acquire).empty() ||
           !fake_.pending(0, ScriptId::acquire_set).empty();
  }));
  std::vector<SentRequest*> second;
  for (std::size_t n = 0; n < 4; ++n) second.push_back(attempt(n));
  ASSERT_TRUE(second[0] && second[1] && second[2] && second[3]);
  const std::string second_value = second[0]->args[0];
  ASSERT_NE(second_value, first_value) << "each attempt has a fresh value";
  fake_.reply(*second[0], resp_integers({kGranted, 0}));
  fake_.reply(*second[1], resp_integers({kGranted, 0}));
  fake_.reply(*first[4], resp_integers({kGranted, 0}), true);
  fake_.reply(*second[2], resp_integers({kRefused, 5000}));
  fake_.reply(*second[3], resp_integers({kRefused, 5000}));
  SentRequest* fifth = attempt(4);
  ASSERT_TRUE(fifth);
  fake_.reply(*fifth, resp_integers({kRefused, 5000}));
  turn();
  ASSERT_TRUE(result_);
  EXPECT_EQ(result_->error, make_error_code(errc::not_acquired));
  EXPECT_EQ(result_->attempts, 2);
  EXPECT_GE(releases_of(4, first_value), 1U);
}

// The first attempt of an unfenced lock goes as a transaction only on a
// node whose current session has shown its identity marker: not before
// a counted answer showed it, not after a session reset, not after an
// answer that says the marker is gone (even one after the decision).
TEST_F(Interleaving, TheTransactionIsUsedOnlyWhereThisSessionHasSeenTheMarker) {
  start(3);
  const auto sent_as = [&](std::size_t node) {
    SentRequest* request = attempt(node);
    return request ? request->id() : ScriptId::probe;
  };
  // Answers the attempts on `order`'s nodes in that order. The first two
  // grants decide; the third comes after the decision and marks nothing
  // (only a counted answer does).
  const auto grant_in = [&](std::vector<std::size_t> order) {
    for (std::size_t n : order) {
      if (SentRequest* request = attempt(n)) fake_.reply(*request, resp_integers({kGranted, 0}));
    }
    turn();
    ASSERT_TRUE(result_ && result_->ok());
    result_.reset();
  };
  acquire(Resource("a"), try_once());
  for (std::size_t n = 0; n < 3; ++n) EXPECT_EQ(sent_as(n), ScriptId::acquire) << n;
  grant_in({0, 1, 2});
  acquire(Resource("b"), try_once());
  EXPECT_EQ(sent_as(0), ScriptId::acquire_set);
  EXPECT_EQ(sent_as(1), ScriptId::acquire_set);
  EXPECT_EQ(sent_as(2), ScriptId::acquire);
  grant_in({2, 0, 1});
  acquire(Resource("b2"), try_once());
  for (std::size_t n = 0; n < 3; ++n) EXPECT_EQ(sent_as(n), ScriptId::acquire_set) << n;
  grant_in({0, 1, 2});
  fake_.lock(1).new_session();
  acquire(Resource("c"), try_once());
  EXPECT_EQ(sent_as(0), ScriptId::acquire_set);
  EXPECT_EQ(sent_as(1), ScriptId::acquire);
  EXPECT_EQ(sent_as(2), ScriptId::acquire_set);
  fake_.reply(*attempt(0), resp_integers({kGranted, 0}));
  fake_.reply(*attempt(1), resp_integers({kGranted, 0}));
  fake_.reply(*attempt(2), resp_integers({kUnmarked, 0}));
  turn();
  ASSERT_TRUE(result_ && result_->ok());
  result_.reset();
  acquire(Resource("d"), try_once());
  EXPECT_EQ(sent_as(0), ScriptId::acquire_set);
  EXPECT_EQ(sent_as(1), ScriptId::acquire_set);
  EXPECT_EQ(sent_as(2), ScriptId::acquire);
}

// A semaphore's attempt wins the permit a majority granted; a node that
// granted another permit has that permit, and only that one, undone.
TEST_F(Interleaving, ASemaphoreWinsThePermitAMajorityGrantedAndUndoesTheOther) {
  start(3);
  auto op = detail::launch<AcquireOperation>(
      *core_, Semaphore("keys", 2), try_once(),
      [this](AcquireResult result) { result_ = std::move(result); });
  turn();
  std::vector<SentRequest*> sent;
  for (std::size_t n = 0; n < 3; ++n)
    sent.push_back(fake_.one_pending(n, ScriptId::permit_acquire));
  ASSERT_TRUE(sent[0] && sent[1] && sent[2]);
  const std::string value = sent[0]->args[0];
  fake_.reply(*sent[0], resp_integers({kGranted, 0, 0}));
  fake_.reply(*sent[1], resp_integers({kGranted, 0, 1}));
  fake_.reply(*sent[2], resp_integers({kGranted, 0, 1}));
  turn();
  ASSERT_TRUE(result_ && result_->ok()) << (result_ ? result_->error.message() : "no result");
  ASSERT_TRUE(result_->lock->permit.has_value());
  EXPECT_EQ(*result_->lock->permit, 1U);
  std::vector<SentRequest*> undone = fake_.cleanups(0);
  ASSERT_EQ(undone.size(), 1U);
  EXPECT_EQ(undone[0]->args[0], value);
  ASSERT_FALSE(undone[0]->keys.empty());
  EXPECT_EQ(undone[0]->keys[0], detail::permit_key("redlock:", "keys", 0));
  EXPECT_TRUE(fake_.cleanups(1).empty());
  EXPECT_TRUE(fake_.cleanups(2).empty());
}

// A set is all or nothing on every node: an attempt that lost releases the
// whole set where it was granted, with one call naming every member.
TEST_F(Interleaving, ALostSetAttemptReleasesEveryMemberWhereItWasGranted) {
  start(3);
  auto op = launch_set(try_once());
  std::vector<SentRequest*> sent;
  for (std::size_t n = 0; n < 3; ++n) sent.push_back(fake_.one_pending(n, ScriptId::acquire_all));
  ASSERT_TRUE(sent[0] && sent[1] && sent[2]);
  const std::string value = sent[0]->args[0];
  fake_.reply(*sent[0], resp_integers({kGranted, 0}));
  fake_.reply(*sent[1], resp_integers({kRefused, 500}));
  fake_.reply(*sent[2], resp_integers({kRefused, 500}));
  turn();
  ASSERT_TRUE(result_);
  EXPECT_EQ(result_->error, make_error_code(errc::not_acquired));
  std::vector<SentRequest*> undone = fake_.cleanups(0);
  ASSERT_EQ(undone.size(), 1U);
  EXPECT_EQ(undone[0]->id(), ScriptId::release_all);
  EXPECT_EQ(undone[0]->args[0], value);
  const std::vector<std::string>& keys = undone[0]->keys;
  EXPECT_NE(std::find(keys.begin(), keys.end(), "redlock:lock:a"), keys.end());
  EXPECT_NE(std::find(keys.begin(), keys.end(), "redlock:lock:c"), keys.end());
  EXPECT_TRUE(fake_.cleanups(1).empty());
  EXPECT_TRUE(fake_.cleanups(2).empty());
}

// A set across hash slots is one call per slot on each node; a node that
// grants it in one slot and refuses it in the other holds none of it: the
// slot it granted is undone before the refusal counts (before the other
// nodes have answered), and the set is won by the nodes that granted it
// whole (operations/slot_parts.hpp).
TEST_F(Interleaving, ASetAcrossSlotsRefusedInOneSlotOfANodeIsUndoneThereBeforeItsRefusalCounts) {
  start(3, true);
  auto op = launch_set(try_once());
  for (std::size_t n = 0; n < 3; ++n) {
    ASSERT_EQ(fake_.pending(n, ScriptId::acquire_all).size(), 2U) << "one call per slot";
  }
  std::vector<SentRequest*> zero = fake_.pending(0, ScriptId::acquire_all);
  const std::string value = zero[0]->args[0];
  fake_.reply(*zero[0], resp_integers({kGranted, 0}));
  turn();
  EXPECT_TRUE(fake_.cleanups(0).empty()) << "undone before its other slot answered";
  fake_.reply(*zero[1], resp_integers({kRefused, 500}));
  turn();
  EXPECT_FALSE(result_);
  EXPECT_EQ(releases_of(0, value), 2U) << "node 0's release of the set, one call per slot";
  grant_every_part(1);
  grant_every_part(2);
  turn();
  ASSERT_TRUE(result_);
  ASSERT_TRUE(result_->ok()) << result_->error.message();
  EXPECT_EQ(result_->lock->resources.size(), 2U);
  EXPECT_EQ(releases_of(1, value) + releases_of(2, value), 0U);
}

// The same refusal in one slot coming after the set was won: the node's
// other slot, granted before or after, is undone as its answer comes.
TEST_F(Interleaving, ASetAcrossSlotsWonBeforeANodeRefusedOneSlotIsUndoneThereAsTheRefusalComes) {
  start(3, true);
  auto op = launch_set(try_once());
  std::vector<SentRequest*> zero = fake_.pending(0, ScriptId::acquire_all);
  ASSERT_EQ(zero.size(), 2U);
  const std::string value = zero[0]->args[0];
  fake_.reply(*zero[0], resp_integers({kRefused, 500}));
  grant_every_part(1);
  grant_every_part(2);
  turn();
  ASSERT_TRUE(result_);
  ASSERT_TRUE(result_->ok()) << result_->error.message();
  EXPECT_EQ(releases_of(0, value), 0U);
  fake_.reply(*zero[1], resp_integers({kGranted, 0}));
  turn();
  EXPECT_EQ(releases_of(0, value), 2U) << "its late grant in the other slot is undone";
  EXPECT_EQ(releases_of(1, value) + releases_of(2, value), 0U);
}

// A set across slots won too late to be valid is given up (undone on every
// node) and tried again with a fresh value; a late refusal of the given-up
// attempt's part, arriving while the new attempt is out, releases nothing
// of the new attempt's value.
TEST_F(Interleaving, ALateRefusalOfAGivenUpSetWinLeavesTheNextAttemptAlone) {
  start(3, true);
  AcquireOptions options = try_once();
  options.retry_count = 1;
  options.retry_delay = milliseconds(1);
  options.ttl = milliseconds(1000);
  auto op = launch_set(options);
  std::vector<SentRequest*> zero = fake_.pending(0, ScriptId::acquire_all);
  ASSERT_EQ(zero.size(), 2U);
  const std::string first_value = zero[0]->args[0];
  // The grants come after the lock's whole TTL: won, and too late.
  clock_.advance(milliseconds(1500));
  grant_every_part(1);
  grant_every_part(2);
  turn();
  ASSERT_FALSE(result_);
  std::string second_value;
  ASSERT_TRUE(run_until([&] {
    for (SentRequest* sent : fake_.pending(0, ScriptId::acquire_all)) {
      if (sent->args[0] != first_value) second_value = sent->args[0];
    }
    return !second_value.empty();
  })) << "no second attempt";
  fake_.reply(*zero[0], resp_integers({kRefused, 500}));
  fake_.reply(*zero[1], resp_integers({kGranted, 0}));
  turn();
  EXPECT_EQ(releases_of(0, second_value), 0U) << "the new attempt's value released";
}

// A fair waiter's grant that it gave back is never counted, whichever
// link brings word of it (docs/safety.md, "Fair"). N = 5: the waiter holds
// ticket 7 and claims the lock; nodes 0 and 1 grant the claim (their
// messages come on the subscriber links); node 2's record answer says it
// holds the claim while another waiter is first there ("held behind"), so
// the waiter gives that grant back; then node 2's own grant message,
// published before the give-back, arrives. Counted, it would make three
// of five with the value held on two.
TEST_F(Interleaving, AFairGrantGivenBackIsNotCountedWhenItsMessageComesLate) {
  start(5);
  AcquireOptions options;
  options.fair = true;
  options.wait = milliseconds(10000);
  acquire(Resource("job"), options);
  for (std::size_t n = 0; n < 5; ++n) {
    SentRequest* first = fake_.one_pending(n, ScriptId::fair_acquire);
    ASSERT_TRUE(first);
    // Refused, drawing ticket 7.
    fake_.reply(*first, resp_integers({kRefused, 5000, 7}));
  }
  turn();
  std::vector<SentRequest*> record;
  for (std::size_t n = 0; n < 5; ++n)
    record.push_back(fake_.one_pending(n, ScriptId::ticket_enqueue));
  ASSERT_TRUE(record[0]);
  // args: ticket field, ticket, place ("<wake channel> <number>"), lease,
  // defence, claim ("<ttl>:<tag>:<defence>:<value>").
  ASSERT_EQ(record[0]->args.size(), 6U);
  const std::string place = record[0]->args[2];
  const std::string claim = record[0]->args[5];
  const std::size_t space = place.rfind(' ');
  ASSERT_NE(space, std::string::npos);
  const std::string wake = place.substr(0, space);
  const std::string number = place.substr(space + 1);
  const std::size_t tag_start = claim.find(':') + 1;
  const std::string tag = claim.substr(tag_start, claim.find(':', tag_start) - tag_start);
  constexpr long long kBehind = 0;
  constexpr long long kHeldBehind = 4;
  for (SentRequest* each : record) {
    ASSERT_TRUE(each);
    fake_.reply(*each, resp_integers({kGranted, 7, kBehind}));
  }
  turn();
  ASSERT_FALSE(result_);
  // The holder's release grants the claim on nodes 0 and 1: their messages.
  const std::string grant = number + "+" + tag + ":7 holders-value";
  for (std::size_t n : {0U, 1U}) {
    ASSERT_TRUE(fake_.subscriber(n));
    fake_.subscriber(n)->push(wake, grant);
  }
  turn();
  ASSERT_FALSE(result_);
  // The next record (about a round trip later): node 2 holds the claim
  // behind another waiter.
  ASSERT_TRUE(run_until([&] { return !fake_.pending(2, ScriptId::ticket_enqueue).empty(); }));
  SentRequest* again = fake_.one_pending(2, ScriptId::ticket_enqueue);
  ASSERT_TRUE(again);
  fake_.reply(*again, resp_integers({kGranted, 7, kHeldBehind}));
  turn();
  const std::vector<SentRequest*> given_back = fake_.cleanups(2);
  ASSERT_EQ(given_back.size(), 1U) << "node 2's grant was not given back";
  EXPECT_EQ(given_back[0]->id(), ScriptId::fair_release);
  // Node 2's message of the grant it made before the give-back, late.
  fake_.subscriber(2)->push(wake, grant);
  turn();
  EXPECT_FALSE(result_) << "the acquire counted a grant it had given back";
  // The rest of the record round changes nothing: nodes 3 and 4 still put
  // the other waiter first.
  for (std::size_t n : {3U, 4U}) {
    if (SentRequest* each = fake_.one_pending(n, ScriptId::ticket_enqueue)) {
      fake_.reply(*each, resp_integers({kGranted, 7, kBehind}));
    }
  }
  turn();
  EXPECT_FALSE(result_) << "won with its claim granted on two of five nodes";
}

// A fenced acquire's token round never counts a node awaiting its second
// merge after a recovery (it answers "unmerged": its counters may be below
// a token won across its crash), and asks for that node's recovery round.
// Three nodes: the attempt is granted everywhere with counter 10; the
// round proposing 11 is stored on node 0, answered "unmerged" by node 1 and
// refused by node 2, whose counter is 20. Counted, node 1 would make 11 a
// majority's token below one node 2 already holds.
TEST_F(Interleaving, AFenceAnswerFromANodeAwaitingItsSecondMergeNeverCounts) {
  start(3);
  AcquireOptions options = try_once();
  options.fenced = true;
  acquire(Resource("job"), options);
  for (std::size_t n = 0; n < 3; ++n) {
    SentRequest* sent = fake_.one_pending(n, ScriptId::acquire);
    ASSERT_TRUE(sent);
    fake_.reply(*sent, resp_integers({kGranted, 10}));
  }
  turn();
  std::vector<SentRequest*> round;
  for (std::size_t n = 0; n < 3; ++n) round.push_back(fake_.one_pending(n, ScriptId::fence));
  ASSERT_TRUE(round[0] && round[1] && round[2]);
  // args: resource, proposed token, defence.
  ASSERT_EQ(round[0]->args.size(), 3U);
  EXPECT_EQ(round[0]->args[1], "11");
  constexpr long long kUnmerged = 5;
  fake_.reply(*round[0], resp_integers({kGranted, 11}));
  fake_.reply(*round[1], resp_integers({kUnmerged, 0}));
  fake_.reply(*round[2], resp_integers({kRefused, 20}));
  turn();
  EXPECT_FALSE(result_) << "a token won with an unmerged node's vote";
  // Node 1's recovery round begins with its probe.
  EXPECT_FALSE(fake_.pending(1, ScriptId::probe).empty()) << "no recovery round for node 1";
  // The next round proposes above the highest counter reported.
  ASSERT_TRUE(run_until([&] { return !fake_.pending(0, ScriptId::fence).empty(); }));
  for (std::size_t n = 0; n < 3; ++n) {
    SentRequest* next = fake_.one_pending(n, ScriptId::fence);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->args[1], "21");
    fake_.reply(*next, resp_integers({kGranted, 21}));
  }
  turn();
  ASSERT_TRUE(result_ && result_->ok()) << (result_ ? result_->error.message() : "no result");
  ASSERT_TRUE(result_->lock->fence.has_value());
  EXPECT_EQ(*result_->lock->fence, 21U);
}

}  // namespace
}  // namespace redlock::test
