// The majority view of an inspection: a holder only when a majority holds
// one value, its validity the least a majority promises, and the fencing
// counter a majority stores.
#include "protocol/majority_view.hpp"

#include <gtest/gtest.h>

namespace redlock::detail {
namespace {

KeyView held(const char* value, std::int64_t pttl, std::uint64_t fence = 0) {
  return KeyView{std::string(value), pttl, fence};
}

KeyView absent(std::uint64_t fence = 0) { return KeyView{std::nullopt, -2, fence}; }

TEST(MajorityView, AValueOnAMajorityIsTheHolderWithItsSmallestPttlLeft) {
  const std::vector<KeyView> answers{held("v", 9000), held("v", 8000), held("v", 8500), absent(),
                                     held("w", 9999)};
  const auto holder = majority_holder(answers, 3, Microseconds(2000), Milliseconds(90));
  ASSERT_TRUE(holder.has_value());
  EXPECT_EQ(holder->value, "v");
  EXPECT_EQ(holder->validity, Milliseconds(8000 - 2 - 90));
}

TEST(MajorityView, NoHolderWithoutAMajority) {
  const std::vector<KeyView> split{held("v", 9000), held("v", 9000), held("w", 9000), absent(),
                                   held("w", 9000)};
  EXPECT_FALSE(majority_holder(split, 3, Microseconds(0), Milliseconds(0)).has_value());
  // Three answers of five, two holding: not a majority of the quorum.
  const std::vector<KeyView> few{held("v", 9000), held("v", 9000), absent()};
  EXPECT_FALSE(majority_holder(few, 3, Microseconds(0), Milliseconds(0)).has_value());
}

TEST(MajorityView, ValidityNeverGoesBelowZeroAndAKeyWithoutExpiryPromisesNothing) {
  const std::vector<KeyView> late{held("v", 5), held("v", 5), held("v", 5)};
  EXPECT_EQ(majority_holder(late, 2, Microseconds(9000), Milliseconds(1))->validity,
            Milliseconds(0));
  const std::vector<KeyView> forever{held("v", -1), held("v", 9000), held("v", 9000)};
  EXPECT_EQ(majority_holder(forever, 3, Microseconds(0), Milliseconds(0))->validity,
            Milliseconds(0));
}

TEST(MajorityView, TheFenceIsTheLargestCounterAMajorityStores) {
  const std::vector<KeyView> answers{absent(7), absent(9), absent(3), absent(12), absent(8)};
  // 12, 9 and 8 are stored by three nodes at least as large: 8.
  EXPECT_EQ(majority_fence(answers, 3), 8u);
  EXPECT_EQ(majority_fence(answers, 1), 12u);
  EXPECT_EQ(majority_fence({absent(4), absent(5)}, 3), 0u) << "too few answers";
}

}  // namespace
}  // namespace redlock::detail
