// SHA-1 must match Redis's script names, or every EVALSHA is a NOSCRIPT.
#include "scripts/sha1.hpp"

#include <gtest/gtest.h>

#include <string>

#include "redlock/types.hpp"
#include "scripts/scripts.hpp"

namespace redlock::detail {
namespace {

TEST(Sha1, KnownVectors) {
  EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(sha1_hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST(Sha1, BlockBoundaries) {
  // 55, 56 and 64 bytes straddle the padding rules.
  EXPECT_EQ(sha1_hex(std::string(55, 'x')).size(), 40u);
  EXPECT_NE(sha1_hex(std::string(55, 'x')), sha1_hex(std::string(56, 'x')));
  EXPECT_NE(sha1_hex(std::string(63, 'x')), sha1_hex(std::string(64, 'x')));
}

TEST(Scripts, NamedByTheirSha1) {
  EXPECT_EQ(script(ScriptId::acquire).sha1, sha1_hex(script(ScriptId::acquire).body));
  EXPECT_NE(script(ScriptId::acquire).sha1, script(ScriptId::release).sha1);
  EXPECT_NE(script(ScriptId::extend).sha1, script(ScriptId::release).sha1);
}

TEST(Keys, PrefixAndResource) {
  EXPECT_EQ(lock_key(LockConfig{}, "job"), "redlock:lock:job");
  EXPECT_EQ(fence_key("app:"), "app:fence");
  EXPECT_EQ(release_channel("redlock:", "job"), "redlock:released:job");
}

TEST(LockValueRandom, Is128BitsOfHexAndNeverRepeats) {
  const LockValue a = LockValue::random();
  const LockValue b = LockValue::random();
  EXPECT_EQ(a.str().size(), 32u);
  EXPECT_EQ(a.str().find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace redlock::detail
