// Every script's call struct (scripts/script_calls.hpp): each one names
// its own script, and gives it exactly the keys and arguments its Lua
// reads. tests/integration/script_calls_test.cpp sends the same calls to a
// real node, whose count checks must accept them.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "script_call_samples.hpp"
#include "script_fit.hpp"

namespace redlock::detail {
namespace {

TEST(ScriptCalls, EachStructFitsWhatItsScriptReads) {
  for (const test::ScriptCallSample& sample : test::script_call_samples()) {
    // inspect reads ARGV[4] in its permits form only; the lock form's two
    // arguments are checked by the script's own count check, on a real
    // node (tests/integration/script_calls_test.cpp).
    if (sample.name == "inspect lock") continue;
    expect_call_fits_its_script(sample.call, sample.name);
  }
}

TEST(ScriptCalls, EveryScriptButTheTransactionHasAStruct) {
  std::set<std::string_view> covered;
  for (const test::ScriptCallSample& sample : test::script_call_samples()) {
    ASSERT_NE(sample.call.script, nullptr) << sample.name;
    // A sample is named after its script (and what it is for, after a space).
    EXPECT_EQ(sample.name.substr(0, sample.name.find(' ')), sample.call.script->name);
    covered.insert(sample.call.script->name);
  }
  for (const Script& entry : script_table()) {
    if (entry.transaction != nullptr) continue;
    EXPECT_TRUE(covered.contains(entry.name)) << entry.name << " has no call struct sample";
  }
}

TEST(ScriptCalls, EncodingKeepsTheOrderTheStructNames) {
  const ScriptCall call = encode(ReleaseCall{.lock_key = "k",
                                             .marker_key = "m",
                                             .recovering_key = "r",
                                             .value = "v",
                                             .channel = "c",
                                             .waiting_set = "w",
                                             .rejoin = "j"});
  EXPECT_EQ(call.script, &script(ScriptId::release));
  EXPECT_EQ(call.keys, (std::vector<std::string>{"k", "m", "r"}));
  EXPECT_EQ(call.args, (std::vector<std::string>{"v", "c", "w", "j"}));
  const ScriptCall leave = encode(QueueLeaveCall{
      .sorted_sets = {"q", "d"}, .set_count = 2, .claims_hash = "h", .waiter_id = "@c 1"});
  EXPECT_EQ(leave.keys, (std::vector<std::string>{"q", "d", "h"}));
  EXPECT_EQ(leave.args, (std::vector<std::string>{"@c 1", "1"}));
}

}  // namespace
}  // namespace redlock::detail
