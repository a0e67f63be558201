// The lock_key pattern: which patterns are valid, and the keys and the SCAN
// glob each gives; and the library's own keys no lock may take.
#include "config/lock_key_pattern.hpp"

#include <gtest/gtest.h>

#include "redlock/config.hpp"
#include "scripts/scripts.hpp"

namespace redlock::detail {
namespace {

TEST(LockKeyPattern, TheDefaultIsTheLayoutOfEveryEarlierVersion) {
  EXPECT_EQ(LockConfig{}.lock_key, kDefaultLockKey);
  EXPECT_EQ(expand_lock_key(kDefaultLockKey, "redlock:", "job"), "redlock:lock:job");
  EXPECT_EQ(lock_key(LockConfig{}, "job"), "redlock:lock:job");
}

TEST(LockKeyPattern, TheResourceAloneIsTheResourcesOwnName) {
  EXPECT_EQ(expand_lock_key("{resource}", "redlock:", "orders:42"), "orders:42");
  EXPECT_EQ(expand_lock_key("x{resource}{prefix}", "p:", "r"), "xrp:");
  EXPECT_EQ(expand_lock_key("{prefix}{resource}", "", "r"), "r");
}

TEST(LockKeyPattern, ValidPatternsHoldTheResourceOnceAndNoOtherBrace) {
  for (const char* pattern : {"{resource}", "{prefix}lock:{resource}", "a:{resource}:b"}) {
    EXPECT_EQ(lock_key_pattern_problem(pattern), "") << pattern;
  }
  for (const char* pattern :
       {"", "lock:", "{prefix}", "{resource}{resource}", "{p}{resource}", "{resource}}",
        "{{resource}}", "{resource", "{prefix}{prefix}{resource}"}) {
    EXPECT_NE(lock_key_pattern_problem(pattern), "") << pattern;
  }
}

TEST(LockKeyPattern, TheGlobMatchesTheLockKeysWithTheLiteralTextEscaped) {
  EXPECT_EQ(lock_key_glob(kDefaultLockKey, "redlock:"), "redlock:lock:*");
  EXPECT_EQ(lock_key_glob("{resource}", "redlock:"), "*");
  EXPECT_EQ(lock_key_glob("{prefix}l?{resource}:v[2]", "a*\\"), "a\\*\\\\l\\?*:v\\[2\\]");
  LockConfig lock;
  lock.key_prefix = "app[1]:";
  EXPECT_EQ(lock_pattern(lock), "app\\[1\\]:lock:*");
  EXPECT_EQ(permit_pattern("app[1]:"), "app\\[1\\]:sem:*");
}

TEST(BookkeepingKeys, AreTheLibrarysOwnKeysUnderThePrefix) {
  const std::string_view prefix = "redlock:";
  EXPECT_TRUE(is_bookkeeping_key(prefix, marker_key(prefix)));
  EXPECT_TRUE(is_bookkeeping_key(prefix, recovering_key(prefix)));
  EXPECT_TRUE(is_bookkeeping_key(prefix, fence_key(prefix)));
  EXPECT_TRUE(is_bookkeeping_key(prefix, queue_key(prefix, "r")));
  EXPECT_TRUE(is_bookkeeping_key(prefix, queue_due_key(prefix, "r")));
  EXPECT_TRUE(is_bookkeeping_key(prefix, waiting_key(prefix, "r")));
  EXPECT_TRUE(is_bookkeeping_key(prefix, permit_key(prefix, "pool", 0)));
  EXPECT_TRUE(is_bookkeeping_key(prefix, permit_count_key(prefix, "pool")));
  EXPECT_FALSE(is_bookkeeping_key(prefix, lock_key(LockConfig{}, "node")));
  EXPECT_FALSE(is_bookkeeping_key(prefix, "node"));
  EXPECT_FALSE(is_bookkeeping_key(prefix, "redlock:nodes"));
  EXPECT_FALSE(is_bookkeeping_key(prefix, "orders:42"));
  EXPECT_TRUE(is_bookkeeping_key("", "fence"));
}

}  // namespace
}  // namespace redlock::detail
