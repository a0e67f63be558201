// A held lock's packed records give back, field for field, the Lock and
// the AcquireResult they were made of: every kind of lock, every kind of
// node outcome, and values at the ends of their ranges.
#include "holding/held_record.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace redlock::detail {
namespace {

const TimePoint kRecordT0 = TimePoint(std::chrono::seconds(1000));

void expect_same_lock(const Lock& a, const Lock& b) {
  EXPECT_EQ(a.resource, b.resource);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.ttl, b.ttl);
  EXPECT_EQ(a.started, b.started);
  EXPECT_EQ(a.valid_until, b.valid_until);
  EXPECT_EQ(a.fence, b.fence);
  EXPECT_EQ(a.resources, b.resources);
  EXPECT_EQ(a.fences, b.fences);
  EXPECT_EQ(a.permit, b.permit);
  EXPECT_EQ(a.permits, b.permits);
  EXPECT_EQ(a.shared, b.shared);
  EXPECT_EQ(a.queue_id, b.queue_id);
}

void expect_same_node(const NodeOutcome& a, const NodeOutcome& b) {
  EXPECT_EQ(a.node, b.node);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.latency, b.latency);
  EXPECT_EQ(a.holder_ttl_ms, b.holder_ttl_ms);
  EXPECT_EQ(a.permit, b.permit);
  EXPECT_EQ(a.fence_counter, b.fence_counter);
  EXPECT_EQ(a.detail, b.detail);
}

Lock plain_lock() {
  return Lock{Resource("orders"),
              LockValue("0123456789abcdef0123456789abcdef"),
              Milliseconds(3000),
              kRecordT0,
              kRecordT0 + Milliseconds(2990),
              std::nullopt};
}

std::shared_ptr<const NodeNames> names(std::size_t count) {
  auto out = std::make_shared<NodeNames>();
  for (std::size_t i = 0; i < count; ++i) out->push_back("127.0.0.1:" + std::to_string(7000 + i));
  return out;
}

NodeOutcome granted(std::size_t node, const NodeNames& names, std::int64_t latency_us) {
  NodeOutcome outcome;
  outcome.node = node;
  outcome.name = names[node];
  outcome.status = NodeStatus::granted;
  outcome.latency = Microseconds(latency_us);
  return outcome;
}

TEST(PackedLock, PlainLockKeepsNoSideAllocation) {
  const PackedLock packed(plain_lock());
  EXPECT_FALSE(packed.has_rare_fields());
  expect_same_lock(packed.unpack(), plain_lock());
  EXPECT_EQ(packed.started(), kRecordT0);
  EXPECT_EQ(packed.ttl(), Milliseconds(3000));
  EXPECT_EQ(packed.fence(), std::nullopt);
}

TEST(PackedLock, EveryFieldComesBack) {
  Lock lock = plain_lock();
  lock.fence = 42;
  lock.resources = {Resource("a"), Resource("b")};
  lock.fences = {42, 7};
  lock.permit = 3;
  lock.permits = 5;
  lock.shared = true;
  lock.queue_id = "q-1";
  const PackedLock packed(lock);
  EXPECT_TRUE(packed.has_rare_fields());
  expect_same_lock(packed.unpack(), lock);
  EXPECT_EQ(packed.fence(), std::optional<std::uint64_t>(42));
}

TEST(PackedLock, EachRareFieldAloneIsKept) {
  for (int field = 0; field < 6; ++field) {
    Lock lock = plain_lock();
    switch (field) {
      case 0:
        lock.resources = {Resource("orders"), Resource("x")};
        break;
      case 1:
        lock.fences = {1};
        break;
      case 2:
        lock.permit = 0;
        break;
      case 3:
        lock.permits = 2;
        break;
      case 4:
        lock.shared = true;
        break;
      default:
        lock.queue_id = "id";
        break;
    }
    const PackedLock packed(lock);
    EXPECT_TRUE(packed.has_rare_fields()) << field;
    expect_same_lock(packed.unpack(), lock);
  }
}

TEST(AcquireRecord, PlainGrantComesBackWithTheConfiguredNames) {
  const auto configured = names(5);
  AcquireResult result;
  result.lock = plain_lock();
  result.validity = Milliseconds(2990);
  result.attempts = 1;
  for (std::size_t i = 0; i < 5; ++i)
    result.nodes.push_back(granted(i, *configured, 150 + 10 * static_cast<std::int64_t>(i)));
  const AcquireRecord record(result, configured);
  const AcquireResult back = record.unpack(*result.lock);
  EXPECT_FALSE(back.error);
  ASSERT_TRUE(back.lock.has_value());
  expect_same_lock(*back.lock, *result.lock);
  EXPECT_EQ(back.validity, result.validity);
  EXPECT_EQ(back.attempts, result.attempts);
  EXPECT_FALSE(back.ticket.has_value());
  ASSERT_EQ(back.nodes.size(), 5U);
  for (std::size_t i = 0; i < 5; ++i) expect_same_node(back.nodes[i], result.nodes[i]);
}

TEST(AcquireRecord, EveryOutcomeFieldAndTheTicketComeBack) {
  const auto configured = names(6);
  AcquireResult result;
  result.lock = plain_lock();
  result.validity = Milliseconds(-5);
  result.attempts = 123456;
  result.ticket =
      AcquireResult::Ticket{std::numeric_limits<std::uint64_t>::max(),
                            kRecordT0 - std::chrono::hours(1), kRecordT0 + Microseconds(1)};
  NodeOutcome busy = granted(0, *configured, 0);
  busy.status = NodeStatus::busy;
  busy.holder_ttl_ms = 2500;
  NodeOutcome fenced = granted(1, *configured, std::numeric_limits<std::int64_t>::max());
  fenced.fence_counter = std::numeric_limits<std::int64_t>::min();
  fenced.permit = 1023;
  NodeOutcome failed = granted(2, *configured, -1);
  failed.status = NodeStatus::error;
  failed.detail = "ERR something \\x01 went wrong";
  NodeOutcome renamed = granted(3, *configured, 5);
  renamed.name = "not the configured name";
  renamed.status = NodeStatus::not_asked;
  NodeOutcome moved = granted(5, *configured, 9);  // at position 4
  moved.status = NodeStatus::unreachable;
  moved.detail = std::string(300, 'x');
  NodeOutcome beyond = granted(0, *configured, 1);  // an index the names do not cover
  beyond.node = 99;
  beyond.name = "far";
  beyond.status = NodeStatus::pending;
  result.nodes = {busy, fenced, failed, renamed, moved, beyond};
  const AcquireRecord record(result, configured);
  const AcquireResult back = record.unpack(*result.lock);
  EXPECT_EQ(back.validity, result.validity);
  EXPECT_EQ(back.attempts, result.attempts);
  ASSERT_TRUE(back.ticket.has_value());
  EXPECT_EQ(back.ticket->number, result.ticket->number);
  EXPECT_EQ(back.ticket->drawn_at, result.ticket->drawn_at);
  EXPECT_EQ(back.ticket->recorded_at, result.ticket->recorded_at);
  ASSERT_EQ(back.nodes.size(), result.nodes.size());
  for (std::size_t i = 0; i < result.nodes.size(); ++i) {
    SCOPED_TRACE(i);
    expect_same_node(back.nodes[i], result.nodes[i]);
  }
}

TEST(AcquireRecord, WithoutNamesEveryNameIsKept) {
  const auto configured = names(3);
  AcquireResult result;
  result.lock = plain_lock();
  for (std::size_t i = 0; i < 3; ++i) result.nodes.push_back(granted(i, *configured, 100));
  const AcquireRecord record(result, nullptr);
  const AcquireResult back = record.unpack(*result.lock);
  ASSERT_EQ(back.nodes.size(), 3U);
  for (std::size_t i = 0; i < 3; ++i) expect_same_node(back.nodes[i], result.nodes[i]);
}

TEST(AcquireRecord, EmptyRecordIsTheLockAlone) {
  const AcquireResult back = AcquireRecord().unpack(plain_lock());
  ASSERT_TRUE(back.lock.has_value());
  expect_same_lock(*back.lock, plain_lock());
  EXPECT_TRUE(back.nodes.empty());
  EXPECT_EQ(back.attempts, 0);
  EXPECT_EQ(back.validity, Milliseconds(0));
}

}  // namespace
}  // namespace redlock::detail
