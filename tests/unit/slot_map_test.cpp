// A cluster member's routing, pure: the hash slot of a key (CRC16/XMODEM
// with hash tags, as the Redis Cluster specification gives it), the slot
// map built from CLUSTER SLOTS' ranges, and the redirects a cluster sends.
// tests/integration/cluster_member_test.cpp checks the same against a real
// cluster.
#include "protocol/slot_map.hpp"

#include <gtest/gtest.h>

#include "protocol/hash_slot.hpp"

namespace redlock::detail {
namespace {

TEST(HashSlot, Crc16IsXmodem) {
  // The specification's check value, and the empty input.
  EXPECT_EQ(crc16_xmodem("123456789"), 0x31C3);
  EXPECT_EQ(crc16_xmodem(""), 0);
}

TEST(HashSlot, TheHashTagIsTheTextBetweenTheFirstBraces) {
  EXPECT_EQ(hashed_part("{user1000}.following"), "user1000");
  EXPECT_EQ(hashed_part("foo{}{bar}"), "foo{}{bar}");  // empty tag: the whole key
  EXPECT_EQ(hashed_part("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(hashed_part("foo{bar}{zap}"), "bar");
  EXPECT_EQ(hashed_part("no braces"), "no braces");
  EXPECT_EQ(hashed_part("open{only"), "open{only");
  EXPECT_EQ(hash_slot("{user1000}.following"), hash_slot("{user1000}.followers"));
}

TEST(HashSlot, SlotsAreInRange) {
  EXPECT_EQ(hash_slot("123456789"), 0x31C3 % kClusterSlots);
  for (const char* key : {"", "a", "redlock:lock:job", "\xff\xfe"}) {
    EXPECT_LT(hash_slot(key), kClusterSlots) << key;
  }
}

TEST(HashSlot, EverySlotHasAShortTagOfItsOwn) {
  for (std::uint32_t slot = 0; slot < kClusterSlots; ++slot) {
    const std::string_view tag = slot_tag(static_cast<std::uint16_t>(slot));
    ASSERT_FALSE(tag.empty()) << slot;
    EXPECT_LE(tag.size(), 4U) << slot;
    EXPECT_EQ(hash_slot(tag), slot);
    EXPECT_EQ(tag.find_first_of("{}"), std::string_view::npos);
  }
}

TEST(HashSlot, AKeyIsPlacedInASlotByATagOrNotAtAll) {
  const std::uint16_t slot = hash_slot("redlock:lock:job");
  // Already there: unchanged.
  EXPECT_EQ(key_in_slot("redlock:lock:job", slot), "redlock:lock:job");
  // Elsewhere and without braces: the slot's tag appended.
  const std::string placed = key_in_slot("redlock:fence", slot);
  EXPECT_EQ(placed, "redlock:fence{" + std::string(slot_tag(slot)) + "}");
  EXPECT_EQ(hash_slot(placed), slot);
  // Its own braces decide, and they say another slot: it cannot be placed.
  const std::string tagged = "redlock:lock:{user1}";
  if (hash_slot(tagged) != slot) {
    EXPECT_EQ(key_in_slot(tagged, slot), "");
  }
  // Its own braces say this slot: unchanged.
  EXPECT_EQ(key_in_slot(tagged, hash_slot(tagged)), tagged);
}

ShardEndpoint at(std::uint16_t port) { return ShardEndpoint{"127.0.0.1", port, ""}; }

TEST(SlotMap, EachSlotGoesToTheMasterOfItsRange) {
  std::string error;
  const auto map = SlotMap::from_ranges(
      {{0, 5460, at(7000), {at(7003)}}, {5461, 10922, at(7001), {}}, {10923, 16383, at(7002), {}}},
      error);
  ASSERT_TRUE(map.has_value()) << error;
  EXPECT_EQ(map->covered(), kClusterSlots);
  EXPECT_EQ(map->masters().size(), 3U);
  EXPECT_EQ(map->master_of(0)->port, 7000);
  EXPECT_EQ(map->master_of(5460)->port, 7000);
  EXPECT_EQ(map->master_of(5461)->port, 7001);
  EXPECT_EQ(map->master_of(16383)->port, 7002);
  EXPECT_EQ(map->master_of(kClusterSlots), nullptr);
}

TEST(SlotMap, OneMasterMayServeSeveralRanges) {
  std::string error;
  const auto map = SlotMap::from_ranges({{0, 99, at(7000), {}}, {200, 299, at(7000), {}}}, error);
  ASSERT_TRUE(map.has_value()) << error;
  EXPECT_EQ(map->masters().size(), 1U);
  EXPECT_EQ(map->covered(), 200U);
  EXPECT_EQ(map->master_of(150), nullptr) << "an unassigned slot has no master";
  EXPECT_EQ(map->master_of(250)->port, 7000);
}

TEST(SlotMap, AMapNoClusterAnswersIsRefusedWithItsReason) {
  std::string error;
  EXPECT_FALSE(SlotMap::from_ranges({{0, 10, at(7000), {}}, {10, 20, at(7001), {}}}, error));
  EXPECT_EQ(error, "slot 10 is served by two masters");
  EXPECT_FALSE(SlotMap::from_ranges({{5, 4, at(7000), {}}}, error));
  EXPECT_EQ(error, "slot range 5-4 is out of bounds");
  EXPECT_FALSE(SlotMap::from_ranges({{0, 16384, at(7000), {}}}, error));
  EXPECT_EQ(error, "slot range 0-16384 is out of bounds");
  EXPECT_FALSE(SlotMap::from_ranges({{0, 1, ShardEndpoint{}, {}}}, error));
  EXPECT_EQ(error, "slot range 0-1 names no master");
}

TEST(SlotMap, AMovedSlotGoesToItsNewMasterAlone) {
  std::string error;
  auto map = SlotMap::from_ranges({{0, 16383, at(7000), {at(7001)}}}, error);
  ASSERT_TRUE(map.has_value()) << error;
  map->move_slot(42, at(7001));
  EXPECT_EQ(map->master_of(42)->port, 7001);
  EXPECT_EQ(map->master_of(41)->port, 7000);
  EXPECT_EQ(map->master_of(43)->port, 7000);
  EXPECT_EQ(map->masters().size(), 2U);
}

TEST(Redirect, MovedAndAskAreRead) {
  const auto moved = parse_redirect("MOVED 3999 127.0.0.1:6381");
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->kind, Redirect::Kind::moved);
  EXPECT_EQ(moved->slot, 3999);
  EXPECT_EQ(moved->host, "127.0.0.1");
  EXPECT_EQ(moved->port, 6381);
  const auto ask = parse_redirect("ASK 0 ::1:7002");
  ASSERT_TRUE(ask.has_value());
  EXPECT_EQ(ask->kind, Redirect::Kind::ask);
  EXPECT_EQ(ask->host, "::1");
  EXPECT_EQ(ask->port, 7002);
  // A cluster that does not know its endpoint's name: the answering host.
  const auto unnamed = parse_redirect("MOVED 1 :7000");
  ASSERT_TRUE(unnamed.has_value());
  EXPECT_EQ(unnamed->host, "");
  const auto unknown = parse_redirect("ASK 1 ?:7000");
  ASSERT_TRUE(unknown.has_value());
  EXPECT_EQ(unknown->host, "");
  EXPECT_EQ(unknown->port, 7000);
}

TEST(Redirect, AnythingElseIsNoRedirect) {
  for (const char* error :
       {"CROSSSLOT Keys in request don't hash to the same slot", "TRYAGAIN Multiple keys request",
        "CLUSTERDOWN The cluster is down", "MOVED", "MOVED 16384 127.0.0.1:7000",
        "MOVED -1 127.0.0.1:7000", "MOVED 1 127.0.0.1", "MOVED 1 127.0.0.1:0",
        "MOVED 1 127.0.0.1:70000", "MOVED x 127.0.0.1:7000", "ASK 1 a b:7000", "moved 1 h:1"}) {
    EXPECT_FALSE(parse_redirect(error).has_value()) << error;
  }
}

}  // namespace
}  // namespace redlock::detail
