// The fence gate on a real Redis store: stale holders are refused, and
// read-modify-write under fencing loses no update.
#include <gtest/gtest.h>

#include <thread>

#include "harness.hpp"

namespace redlock::test {
namespace {

using std::chrono::milliseconds;

class FenceGateTest : public ::testing::Test {
 protected:
  RedisServer store;
  FenceGate gate{node_at(store.port())};
};

TEST_F(FenceGateTest, StaleWriteAfterANewerOneIsFencedOut) {
  ASSERT_TRUE(gate.set("doc", 34, "newer").ok());
  const FencedResult stale = gate.set("doc", 33, "older");
  EXPECT_EQ(stale.error, errc::fenced_out);
  EXPECT_EQ(stale.high_water_mark, 34u);
  EXPECT_EQ(store.probe().get("doc"), "newer");
  EXPECT_EQ(store.probe().get("doc:fence"), "34");
}

TEST_F(FenceGateTest, EqualTokenIsTheSameHolderAndPasses) {
  ASSERT_TRUE(gate.set("doc", 7, "a").ok());
  EXPECT_TRUE(gate.set("doc", 7, "b").ok());
  EXPECT_EQ(gate.get("doc", 7).value, "b");
}

TEST_F(FenceGateTest, ReadModifyWriteByTwoHoldersLosesNoUpdate) {
  // Holder A (token 5) reads, pauses; holder B (token 6) reads and writes;
  // A wakes and writes back its stale result: refused, because B's read
  // already raised the mark.
  ASSERT_TRUE(gate.set("counter", 4, "10").ok());
  const FencedResult a_read = gate.get("counter", 5);
  ASSERT_TRUE(a_read.ok());
  const FencedResult b_read = gate.get("counter", 6);
  ASSERT_TRUE(b_read.ok());
  ASSERT_TRUE(gate.set("counter", 6, std::to_string(std::stoi(*b_read.value) + 1)).ok());
  const FencedResult a_write = gate.set("counter", 5, std::to_string(std::stoi(*a_read.value) + 1));
  EXPECT_EQ(a_write.error, errc::fenced_out);
  EXPECT_EQ(store.probe().get("counter"), "11");
  // A reads again: also fenced out — it must not act on the resource at all.
  EXPECT_EQ(gate.get("counter", 5).error, errc::fenced_out);
}

TEST_F(FenceGateTest, CounterAndLog) {
  EXPECT_EQ(gate.incr_by("hits", 1, 5).integer, 5);
  EXPECT_EQ(gate.incr_by("hits", 2, 3).integer, 8);
  EXPECT_EQ(gate.append("log", 2, "first").integer, 1);
  EXPECT_EQ(gate.append("log", 3, "second").integer, 2);
  EXPECT_EQ(gate.append("log", 2, "stale").error, errc::fenced_out);
  std::vector<std::string> entries;
  ASSERT_TRUE(gate.read_log("log", 3, entries).ok());
  EXPECT_EQ(entries, (std::vector<std::string>{"first", "second"}));
}

TEST_F(FenceGateTest, StoreDownIsAnErrorNotAHang) {
  store.stop();
  const FencedResult result = gate.set("doc", 1, "x");
  EXPECT_EQ(result.error, errc::node_error);
  EXPECT_NE(result.detail.find("resource store"), std::string::npos) << result.detail;
}

TEST(FenceGateWithLocks, PausedHolderIsStoppedByTheGate) {
  // Kleppmann's pause: A holds a fenced lock, stalls past its validity; B
  // acquires with a larger token and writes; A's late write is refused.
  RedisCluster cluster{3};
  RedisServer store;
  BlockingClient client(config_for(cluster, milliseconds(200)));
  AcquireOptions fenced;
  fenced.fenced = true;
  AcquireResult a = client.acquire(Resource("doc"), fenced);
  ASSERT_TRUE(a.ok());
  // A "pauses": no renewal, and its lock expires on the nodes.
  ASSERT_TRUE(eventually([&] { return nodes_holding(cluster, "doc") == 0; }));
  fenced.wait = milliseconds(5000);
  AcquireResult b = client.acquire(Resource("doc"), fenced);
  ASSERT_TRUE(b.ok());
  ASSERT_GT(*b.lock->fence, *a.lock->fence);

  FenceGate gate_b(node_at(store.port()));
  FenceGate gate_a(node_at(store.port()));
  ASSERT_TRUE(gate_b.set("doc", *b.lock->fence, "from B").ok());
  EXPECT_EQ(gate_a.set("doc", *a.lock->fence, "from A (stale)").error, errc::fenced_out);
  EXPECT_EQ(store.probe().get("doc"), "from B");
  (void)client.release(*b.lock);
}

}  // namespace
}  // namespace redlock::test
