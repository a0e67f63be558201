// Every script's call struct against the script itself on a real node
// (scripts/script_calls.hpp): each script opens by checking how many keys
// and arguments it was given, and must accept the call its struct encodes;
// the same call one argument short is refused by that check — so a struct
// that names a field too few or too many fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "harness.hpp"
#include "script_call_samples.hpp"

namespace redlock::test {
namespace {

// The error `script`'s count check answers ("ERR <name>: 3 keys and 4
// arguments", "ERR <name> batch: …" for a batched one; the announcement, one PUBLISH, has none:
// PUBLISH refuses a missing argument itself).
bool is_count_refusal(const detail::Script& script, const Reply& reply) {
  if (reply.kind != Reply::Kind::error) return false;
  if (script.name == "announce") return true;
  const std::string name(script.name);
  return (reply.text.find(name + ": ") != std::string::npos ||
          reply.text.find(name + " batch: ") != std::string::npos) &&
         reply.text.find(" arguments") != std::string::npos;
}

TEST(ScriptCalls, EveryScriptRunsTheCallItsStructEncodes) {
  RedisServer server;
  RedisProbe node(server.port());
  for (const ScriptCallSample& sample : script_call_samples()) {
    const Reply reply = node.command(eval_words(sample.call));
    EXPECT_NE(reply.kind, Reply::Kind::error) << sample.name << ": " << reply.text;
    EXPECT_NE(reply.kind, Reply::Kind::io_error) << sample.name << ": " << reply.text;
  }
}

TEST(ScriptCalls, TheSameCallOneArgumentShortIsRefusedByItsScriptsCountCheck) {
  // The scripts whose last arguments are a list of any length (probe's
  // patterns, recover's and remerge's counters, declare_new's patterns,
  // declare_new_slots's tags, fence_all's fields) or optional (queue_leave's count of hashes):
  // one argument fewer is another valid call of them.
  const std::set<std::string> takes_a_list{"probe",
                                           "recover",
                                           "remerge",
                                           "declare_new",
                                           "declare_new_slots",
                                           "fence_all",
                                           "queue_leave (line)",
                                           "queue_leave (fair)"};
  RedisServer server;
  RedisProbe node(server.port());
  for (const ScriptCallSample& sample : script_call_samples()) {
    if (takes_a_list.contains(sample.name) || sample.call.args.empty()) continue;
    detail::ScriptCall short_call = sample.call;
    short_call.args.pop_back();
    const Reply reply = node.command(eval_words(short_call));
    EXPECT_TRUE(is_count_refusal(*sample.call.script, reply)) << sample.name << ": " << reply.text;
  }
}

}  // namespace
}  // namespace redlock::test
