// Each lock kind's calls (kinds/): which script calls attempt, extend and
// release a lock of each kind, and that each call gives its script every
// key and argument the script reads.
#include <gtest/gtest.h>

#include <string>

#include "kinds/multi.hpp"
#include "script_fit.hpp"

namespace redlock::detail {
namespace {

// The keys of prefix "p:" in the default layout, and in node-redlock's.
LockConfig keys(std::string lock_key = LockConfig{}.lock_key) {
  LockConfig config;
  config.key_prefix = "p:";
  config.lock_key = std::move(lock_key);
  return config;
}

Lock single() {
  return Lock{Resource("r"), LockValue("v"), Milliseconds(1000), {}, {}, std::nullopt};
}

Lock multi() {
  Lock lock = single();
  lock.kind = LockKind::multi;
  lock.resources = {Resource("r"), Resource("s")};
  return lock;
}

Lock permit() {
  Lock lock{Resource("pool"), LockValue("v"), Milliseconds(1000), {}, {}, std::nullopt};
  lock.kind = LockKind::permit;
  lock.permit = 2;
  lock.permits = 3;
  return lock;
}

TEST(Kinds, EachKindIsRecognised) {
  EXPECT_EQ(kind_of(single()), LockKind::mutex);
  EXPECT_EQ(kind_of(multi()), LockKind::multi);
  EXPECT_EQ(kind_of(permit()), LockKind::permit);
}

TEST(Kinds, ASingleLockUsesTheBatchedScripts) {
  const ScriptCall extend = extend_call(single(), keys(), Milliseconds(500));
  EXPECT_EQ(id_of(*extend.script), ScriptId::extend);
  EXPECT_EQ(extend.keys, (std::vector<std::string>{"p:lock:r"}));
  EXPECT_EQ(extend.args, (std::vector<std::string>{"v", "500"}));
  const ScriptCall release = release_call(single(), keys(), true);
  EXPECT_EQ(id_of(*release.script), ScriptId::release);
  // The node rules' keys, shared: a fair grant's rules, and the prefix of
  // the fair queue's keys.
  EXPECT_EQ(release.keys, (std::vector<std::string>{"p:lock:r", "p:node", "p:recovering"}));
  // Announced, it names the next waiter of the resource's waiting line.
  EXPECT_EQ(release.args, (std::vector<std::string>{"v", "p:released:r", "p:waiting:r", ""}));
  // With a place to rejoin the line at.
  EXPECT_EQ(release_call(single(), keys(), true, "500:p:released:@c 3").args,
            (std::vector<std::string>{"v", "p:released:r", "p:waiting:r", "500:p:released:@c 3"}));
  // Unannounced, it wakes no one, names no one and takes no place.
  EXPECT_EQ(release_call(single(), keys(), false, "500:p:released:@c 3").args,
            (std::vector<std::string>{"v", "", "", ""}));
}

TEST(Kinds, ASetIsExtendedAndReleasedWhole) {
  const ScriptCall extend = extend_call(multi(), keys(), Milliseconds(500));
  EXPECT_EQ(id_of(*extend.script), ScriptId::extend_all);
  EXPECT_EQ(extend.keys, (std::vector<std::string>{"p:lock:r", "p:lock:s"}));
  const ScriptCall release = release_call(multi(), keys(), true);
  EXPECT_EQ(id_of(*release.script), ScriptId::release_all);
  // The node rules' keys first (a member's fair line is served under
  // them), then the lock keys.
  EXPECT_EQ(release.keys,
            (std::vector<std::string>{"p:node", "p:recovering", "p:lock:r", "p:lock:s"}));
  // Each resource's channel and waiting line.
  EXPECT_EQ(release.args, (std::vector<std::string>{"v", "p:released:r", "p:waiting:r",
                                                    "p:released:s", "p:waiting:s"}));
}

TEST(Kinds, ASetAdoptsEachMembersOwnValueKeyByKey) {
  const ScriptCall adopt = adopt_call(multi(), {LockValue("vr"), LockValue("vs")}, keys());
  EXPECT_EQ(id_of(*adopt.script), ScriptId::adopt_all);
  EXPECT_EQ(adopt.keys,
            (std::vector<std::string>{"p:node", "p:recovering", "p:lock:r", "p:lock:s"}));
  EXPECT_EQ(adopt.args, (std::vector<std::string>{"v", std::to_string(multi().ttl.count()),
                                                  keys().amnesia_defence ? "1" : "0", "vr", "vs"}));
}

TEST(Kinds, APermitKeepsItsCountRecordedWhileExtended) {
  const ScriptCall extend = extend_call(permit(), keys(), Milliseconds(500));
  EXPECT_EQ(id_of(*extend.script), ScriptId::permit_extend);
  EXPECT_EQ(extend.keys, (std::vector<std::string>{"p:sem:pool:2", "p:permits:pool"}));
  EXPECT_EQ(extend.args, (std::vector<std::string>{"v", "500", "3"}));
  const ScriptCall release = release_call(permit(), keys(), true);
  EXPECT_EQ(id_of(*release.script), ScriptId::release);
  EXPECT_EQ(release.keys, (std::vector<std::string>{"p:sem:pool:2", "p:node", "p:recovering"}));
  // Permits have no waiting line.
  EXPECT_EQ(release.args, (std::vector<std::string>{"v", "p:released:sem:pool", "", ""}));
}

TEST(Kinds, ALockKeyPatternMovesTheLockKeysAndNothingElse) {
  const ScriptCall extend = extend_call(multi(), keys("{resource}"), Milliseconds(500));
  EXPECT_EQ(extend.keys, (std::vector<std::string>{"r", "s"}));
  const ScriptCall release = release_call(single(), keys("{resource}"), true);
  EXPECT_EQ(release.keys, (std::vector<std::string>{"r", "p:node", "p:recovering"}));
  // The release channel and the waiting line stay under the prefix.
  EXPECT_EQ(release.args, (std::vector<std::string>{"v", "p:released:r", "p:waiting:r", ""}));
  Lock fair = single();
  fair.kind = LockKind::fair;
  fair.queue_id = "q";
  const ScriptCall fair_release = release_call(fair, keys("locks/{resource}"), true);
  EXPECT_EQ(fair_release.keys,
            (std::vector<std::string>{"locks/r", "p:queue:r", "p:queue-due:r", "p:queue-claim:r",
                                      "p:node", "p:recovering", "p:fence"}));
  // A semaphore keeps its own keys whatever the pattern.
  EXPECT_EQ(extend_call(permit(), keys("{resource}"), Milliseconds(500)).keys,
            (std::vector<std::string>{"p:sem:pool:2", "p:permits:pool"}));
}

TEST(Kinds, ALockWhoseKeyIsTheLibrarysOwnIsRefused) {
  EXPECT_TRUE(lock_keys_allowed(single(), keys("{resource}")));
  Lock fence = single();
  fence.resource = Resource("p:fence");
  EXPECT_FALSE(lock_keys_allowed(fence, keys("{resource}")));
  EXPECT_TRUE(lock_keys_allowed(fence, keys()));  // p:lock:p:fence
  Lock set = multi();
  set.resources = {Resource("r"), Resource("p:node")};
  EXPECT_FALSE(lock_keys_allowed(set, keys("{resource}")));
  Lock pool = permit();
  EXPECT_TRUE(lock_keys_allowed(pool, keys("{resource}")));
}

TEST(Kinds, OnlyRecordsAnAcquireCouldHaveHandedOutAreWellFormed) {
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

Lock shared() {
  Lock lock = single();
  lock.kind = LockKind::shared;
  lock.shared = true;
  return lock;
}

Lock fair() {
  Lock lock = single();
  lock.kind = LockKind::fair;
  lock.queue_id = "@c 7";
  return lock;
}

// A record says its kind (Lock::kind); fields another kind uses, or a
// kind's own fields missing, make it a record no acquire handed out: it is
// refused, never read as another kind.
TEST(Kinds, ARecordWhoseFieldsDoNotFitItsKindIsRefused) {
  EXPECT_TRUE(well_formed(shared()));
  EXPECT_TRUE(well_formed(fair()));
  Lock fair_without_place = fair();
  fair_without_place.queue_id.clear();
  EXPECT_FALSE(well_formed(fair_without_place)) << "a fair lock is released through its place";
  Lock mutex_with_place = single();
  mutex_with_place.queue_id = "@c 7";
  EXPECT_FALSE(well_formed(mutex_with_place)) << "a place says fair; the kind says mutex";
  Lock mutex_with_permit = single();
  mutex_with_permit.permit = 1;
  mutex_with_permit.permits = 2;
  EXPECT_FALSE(well_formed(mutex_with_permit));
  Lock mutex_with_set = single();
  mutex_with_set.resources = {Resource("r"), Resource("s")};
  EXPECT_FALSE(well_formed(mutex_with_set));
  Lock mutex_shared = single();
  mutex_shared.shared = true;
  EXPECT_FALSE(well_formed(mutex_shared));
  Lock read_not_shared = shared();
  read_not_shared.shared = false;
  EXPECT_FALSE(well_formed(read_not_shared));
  Lock permit_without_number = permit();
  permit_without_number.permit.reset();
  EXPECT_FALSE(well_formed(permit_without_number));
  Lock set_shared = multi();
  set_shared.shared = true;
  EXPECT_FALSE(well_formed(set_shared));
  Lock unknown = single();
  unknown.kind = static_cast<LockKind>(9);
  EXPECT_FALSE(well_formed(unknown)) << "a kind this version does not know";
}

TEST(Kinds, EachKindsAttemptGivesItsScriptEveryKeyAndArgumentItReads) {
  const std::pair<const char*, Lock> shapes[] = {
      {"mutex", single()}, {"fair", fair()},        {"read-write", shared()},
      {"multi", multi()},  {"semaphore", permit()},
  };
  for (const auto& [name, shape] : shapes) {
    for (const bool fenced : {false, true}) {
      const ScriptCall call =
          rules_of(kind_of(shape))
              .attempt_call(shape, keys(),
                            AttemptSetup{.value = "v1", .ttl_text = "1000", .fenced = fenced});
      expect_call_fits_its_script(call, std::string(name) + (fenced ? " fenced" : ""));
      // The attempt's value goes first, then its TTL.
      ASSERT_FALSE(call.args.empty());
      EXPECT_EQ(call.args[0], "v1") << name;
      EXPECT_EQ(call.args[1], "1000") << name;
    }
  }
}

TEST(Kinds, EachKindsReleaseAndExtendGiveTheirScriptsWhatTheyRead) {
  const std::pair<const char*, Lock> locks[] = {{"mutex", single()},
                                                {"fair", fair()},
                                                {"read-write", shared()},
                                                {"multi", multi()},
                                                {"semaphore", permit()}};
  for (const auto& [name, lock] : locks) {
    for (const bool announce : {false, true}) {
      expect_call_fits_its_script(release_call(lock, keys(), announce), name);
    }
    expect_call_fits_its_script(extend_call(lock, keys(), Milliseconds(500)), name);
  }
}

TEST(Kinds, TheTableMapsEveryKindToItsOwnRules) {
  EXPECT_EQ(&rules_of(LockKind::mutex), &mutex_rules());
  EXPECT_EQ(&rules_of(LockKind::fair), &fair_rules());
  EXPECT_EQ(&rules_of(LockKind::shared), &read_write_rules());
  EXPECT_EQ(&rules_of(LockKind::multi), &multi_rules());
  EXPECT_EQ(&rules_of(LockKind::permit), &semaphore_rules());
  EXPECT_EQ(kind_of(shared()), LockKind::shared);
  EXPECT_EQ(kind_of(fair()), LockKind::fair);
}

}  // namespace
}  // namespace redlock::detail
