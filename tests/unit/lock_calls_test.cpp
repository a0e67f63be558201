// Which script calls extend and release a held lock of each kind.
#include "scripts/lock_calls.hpp"

#include <gtest/gtest.h>

namespace redlock::detail {
namespace {

Lock single() {
  return Lock{Resource("r"), LockValue("v"), Milliseconds(1000), {}, {}, std::nullopt};
}

Lock multi() {
  Lock lock = single();
  lock.resources = {Resource("r"), Resource("s")};
  return lock;
}

Lock permit() {
  Lock lock{Resource("pool"), LockValue("v"), Milliseconds(1000), {}, {}, std::nullopt};
  lock.permit = 2;
  lock.permits = 3;
  return lock;
}

TEST(LockCalls, EachKindIsRecognised) {
  EXPECT_EQ(kind_of(single()), LockKind::single);
  EXPECT_EQ(kind_of(multi()), LockKind::multi);
  EXPECT_EQ(kind_of(permit()), LockKind::permit);
}

TEST(LockCalls, ASingleLockUsesTheBatchedScripts) {
  const ScriptCall extend = extend_call(single(), "p:", Milliseconds(500));
  EXPECT_EQ(extend.script->id, ScriptId::extend);
  EXPECT_EQ(extend.keys, (std::vector<std::string>{"p:lock:r"}));
  EXPECT_EQ(extend.args, (std::vector<std::string>{"v", "500"}));
  const ScriptCall release = release_call(single(), "p:", true);
  EXPECT_EQ(release.script->id, ScriptId::release);
  EXPECT_EQ(release.args, (std::vector<std::string>{"v", "p:released:r"}));
  EXPECT_EQ(release_call(single(), "p:", false).args[1], "");
}

TEST(LockCalls, ASetIsExtendedAndReleasedWhole) {
  const ScriptCall extend = extend_call(multi(), "p:", Milliseconds(500));
  EXPECT_EQ(extend.script->id, ScriptId::extend_all);
  EXPECT_EQ(extend.keys, (std::vector<std::string>{"p:lock:r", "p:lock:s"}));
  const ScriptCall release = release_call(multi(), "p:", true);
  EXPECT_EQ(release.script->id, ScriptId::release_all);
  EXPECT_EQ(release.args, (std::vector<std::string>{"v", "p:released:r", "p:released:s"}));
}

TEST(LockCalls, APermitKeepsItsCountRecordedWhileExtended) {
  const ScriptCall extend = extend_call(permit(), "p:", Milliseconds(500));
  EXPECT_EQ(extend.script->id, ScriptId::permit_extend);
  EXPECT_EQ(extend.keys, (std::vector<std::string>{"p:sem:pool:2", "p:permits:pool"}));
  EXPECT_EQ(extend.args, (std::vector<std::string>{"v", "500", "3"}));
  const ScriptCall release = release_call(permit(), "p:", true);
  EXPECT_EQ(release.script->id, ScriptId::release);
  EXPECT_EQ(release.keys, (std::vector<std::string>{"p:sem:pool:2"}));
  EXPECT_EQ(release.args, (std::vector<std::string>{"v", "p:released:sem:pool"}));
}

TEST(LockCalls, OnlyRecordsAnAcquireCouldHaveHandedOutAreWellFormed) {
  EXPECT_TRUE(well_formed(single()));
  EXPECT_TRUE(well_formed(multi()));
  EXPECT_TRUE(well_formed(permit()));
  Lock no_value = single();
  no_value.value = LockValue("");
  EXPECT_FALSE(well_formed(no_value));
  Lock duplicate = multi();
  duplicate.resources = {Resource("r"), Resource("r")};
  EXPECT_FALSE(well_formed(duplicate));
  Lock first_differs = multi();
  first_differs.resources = {Resource("s"), Resource("r")};
  EXPECT_FALSE(well_formed(first_differs));
  Lock wrong_fences = multi();
  wrong_fences.fences = {1};
  EXPECT_FALSE(well_formed(wrong_fences));
  Lock beyond = permit();
  beyond.permit = 3;
  EXPECT_FALSE(well_formed(beyond));
  Lock no_count = permit();
  no_count.permits = 0;
  EXPECT_FALSE(well_formed(no_count));
}

}  // namespace
}  // namespace redlock::detail
