// The table of scripts: one entry per script, in ScriptId order, named by
// the SHA-1 of its body, and the reply codes the Lua returns are exactly
// the ones ReplyCode names (the parsers read nothing else).
#include "scripts/scripts.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "scripts/kind_scripts.hpp"
#include "scripts/sha1.hpp"

namespace redlock::detail {
namespace {

// Every number that follows `prefix` (and optional spaces) in `body`.
std::set<long long> literals(std::string_view body, std::string_view prefix) {
  std::set<long long> found;
  for (std::size_t at = body.find(prefix); at != std::string_view::npos;
       at = body.find(prefix, at + 1)) {
    std::size_t i = at + prefix.size();
    while (i < body.size() && body[i] == ' ') ++i;
    std::size_t end = i;
    while (end < body.size() && body[end] >= '0' && body[end] <= '9') ++end;
    // A table's first element is followed by a comma: {2, 0}.
    std::size_t next = end;
    while (next < body.size() && body[next] == ' ') ++next;
    const bool table = prefix == "{";
    if (end > i && (!table || (next < body.size() && body[next] == ','))) {
      found.insert(std::stoll(std::string(body.substr(i, end - i))));
    }
  }
  return found;
}

std::set<long long> codes(std::initializer_list<ReplyCode> replies) {
  std::set<long long> out;
  for (ReplyCode reply : replies) out.insert(code(reply));
  return out;
}

// `{N, ...}`: the first element of an acquire's or a fence's answer.
constexpr std::string_view kTableAnswer = "{";
// `out[i] = N`: the whole answer of an extend or a release.
constexpr std::string_view kFlagAnswer = "out[i] =";

TEST(ScriptTable, HoldsEveryScriptOnceInIdOrder) {
  std::set<std::string_view> names;
  std::set<std::string> digests;
  for (std::size_t i = 0; i < kScriptCount; ++i) {
    const Script& entry = script_table()[i];
    EXPECT_EQ(static_cast<std::size_t>(entry.number), i) << entry.name;
    EXPECT_EQ(&script(id_of(entry)), &entry) << entry.name;
    EXPECT_EQ(entry.sha1, sha1_hex(entry.body)) << entry.name;
    EXPECT_TRUE(names.insert(entry.name).second) << entry.name;
    EXPECT_TRUE(digests.insert(entry.sha1).second) << entry.name;
    if (entry.batched) {
      EXPECT_GT(entry.args_per_request, 0U) << entry.name;
    }
  }
}

// How many times `needle` occurs in `text`.
std::size_t occurrences(std::string_view text, std::string_view needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

// Per slot, a session sends each script as its shard-publishing twin:
// the same script but for SPUBLISH in every PUBLISH's place, as a script
// of its own (its number after the table's, its SHA-1), so a release
// wakes waiters through the shard that owns the resource.
TEST(ScriptTable, EveryScriptThatPublishesHasATwinThatPublishesOnShardChannels) {
  std::size_t twins = 0;
  for (const Script& entry : script_table()) {
    const Script& twin = shard_publishing(entry);
    const std::size_t published = occurrences(entry.body, "'PUBLISH'");
    if (published == 0) {
      EXPECT_EQ(&twin, &entry) << entry.name;
      continue;
    }
    ++twins;
    EXPECT_EQ(static_cast<std::size_t>(twin.number), kScriptCount + entry.number) << entry.name;
    EXPECT_LT(static_cast<std::size_t>(twin.number), kMaxScripts) << entry.name;
    EXPECT_EQ(twin.name, std::string(entry.name) + " (sharded)");
    EXPECT_EQ(occurrences(twin.body, "'PUBLISH'"), 0U) << entry.name;
    EXPECT_EQ(occurrences(twin.body, "'SPUBLISH'"), published) << entry.name;
    EXPECT_EQ(twin.body.size(), entry.body.size() + published) << entry.name;
    EXPECT_EQ(twin.sha1, sha1_hex(twin.body)) << entry.name;
    EXPECT_EQ(twin.batched, entry.batched) << entry.name;
    EXPECT_EQ(twin.shared_keys, entry.shared_keys) << entry.name;
    EXPECT_EQ(twin.args_per_request, entry.args_per_request) << entry.name;
    EXPECT_EQ(&shard_publishing(twin), &twin) << entry.name;
  }
  // The releases of every kind, the turn passed on, the announcement.
  for (const ScriptId id : {ScriptId::release, ScriptId::release_all, ScriptId::read_release,
                            ScriptId::fair_release, ScriptId::pass_turn, ScriptId::announce}) {
    EXPECT_NE(&shard_publishing(script(id)), &script(id)) << script(id).name;
  }
  EXPECT_GE(twins, 6U);
}

TEST(ScriptTable, TheLockScriptsAreBatched) {
  for (ScriptId id : {ScriptId::acquire, ScriptId::extend, ScriptId::release, ScriptId::fence}) {
    EXPECT_TRUE(script(id).batched) << script(id).name;
  }
  EXPECT_FALSE(script(ScriptId::probe).batched);
  EXPECT_FALSE(script(ScriptId::recover).batched);
  EXPECT_EQ(script(ScriptId::acquire).shared_keys, 3U);
  EXPECT_EQ(script(ScriptId::fence).shared_keys, 2U);
  EXPECT_EQ(script(ScriptId::release).shared_keys, 2U);
}

TEST(ScriptReplyCodes, AcquireAnswersExactlyTheNamedCodes) {
  EXPECT_EQ(
      literals(script(ScriptId::acquire).body, kTableAnswer),
      codes({ReplyCode::refused, ReplyCode::done, ReplyCode::unmarked, ReplyCode::recovering}));
}

TEST(ScriptReplyCodes, FenceAnswersExactlyTheNamedCodes) {
  EXPECT_EQ(literals(script(ScriptId::fence).body, kTableAnswer),
            codes({ReplyCode::refused, ReplyCode::done, ReplyCode::unmarked, ReplyCode::recovering,
                   ReplyCode::unmerged}));
}

TEST(ScriptReplyCodes, TheKindsAcquiresAnswerTheMutexsCodes) {
  EXPECT_EQ(
      literals(script(ScriptId::acquire_all).body, kTableAnswer),
      codes({ReplyCode::refused, ReplyCode::done, ReplyCode::unmarked, ReplyCode::recovering}));
  EXPECT_EQ(literals(script(ScriptId::permit_acquire).body, kTableAnswer),
            codes({ReplyCode::refused, ReplyCode::done, ReplyCode::unmarked, ReplyCode::recovering,
                   ReplyCode::permits_differ}));
  EXPECT_EQ(literals(script(ScriptId::fence_all).body, kTableAnswer),
            codes({ReplyCode::refused, ReplyCode::done, ReplyCode::unmarked, ReplyCode::recovering,
                   ReplyCode::unmerged}));
}

TEST(ScriptReplyCodes, TheKindsExtendsAndReleaseAnswerAFlag) {
  for (ScriptId id : {ScriptId::extend_all, ScriptId::adopt_all, ScriptId::permit_extend}) {
    EXPECT_EQ(literals(script(id).body, "return "), codes({ReplyCode::refused, ReplyCode::done}))
        << script(id).name;
  }
  // release_all opens with the fair queue's helpers, whose own answers
  // (serve_queue's 1 and 2) never leave the script: its body's answers.
  EXPECT_EQ(literals(kReleaseAllBody, "return "), codes({ReplyCode::refused, ReplyCode::done}));
}

TEST(ScriptKeys, APlaceInLineTravelsAsOneArgumentNeedingNoEscape) {
  // The waiting set's name is given by its length: a resource may hold any
  // byte, ':' included.
  EXPECT_EQ(line_argument("p:waiting:a:b", "p:released:@c 7", Milliseconds(500)),
            "0500:13:p:waiting:a:bp:released:@c 7");
}

TEST(ScriptKeys, NoTwoPermitsOfAnySemaphoresShareAKey) {
  // The digits after the last colon name the permit.
  EXPECT_NE(permit_key("p:", "x:1", 0), permit_key("p:", "x", 10));
  EXPECT_EQ(permit_key("p:", "x:1", 0), "p:sem:x:1:0");
  EXPECT_EQ(permit_key("p:", "x", 10), "p:sem:x:10");
  EXPECT_NE(permit_count_key("p:", "x"), permit_key_prefix("p:", "x"));
  EXPECT_NE(permit_channel("p:", "x"), release_channel("p:", "x"));
}

TEST(ScriptReplyCodes, ReleaseAnswersDoneRefusedOrRejoined) {
  EXPECT_EQ(literals(script(ScriptId::release).body, kFlagAnswer),
            codes({ReplyCode::refused, ReplyCode::done, ReplyCode::rejoined}));
}

TEST(ScriptReplyCodes, ExtendAnswersRefusedOrWhatPexpireSays) {
  // PEXPIRE of an existing key answers 1, which is ReplyCode::done.
  EXPECT_EQ(literals(script(ScriptId::extend).body, kFlagAnswer), codes({ReplyCode::refused}));
  EXPECT_NE(script(ScriptId::extend).body.find("out[i] = redis.pcall('PEXPIRE'"),
            std::string_view::npos);
  EXPECT_EQ(code(ReplyCode::done), 1);
}

}  // namespace
}  // namespace redlock::detail

namespace redlock::detail {
namespace {

TEST(MarkerValue, RecordsTheMaxTtlOfTheClientThatMarkedTheNode) {
  const std::string value = marker_value("0123abcd", Milliseconds(30000));
  EXPECT_EQ(value, "redlock-node-0123abcd max_ttl_ms=30000");
  EXPECT_EQ(marker_max_ttl(value), Milliseconds(30000));
  // A marker written by hand or by an older client records none.
  EXPECT_EQ(marker_max_ttl("redlock-node-0123abcd"), std::nullopt);
  EXPECT_EQ(marker_max_ttl("x max_ttl_ms="), std::nullopt);
  EXPECT_EQ(marker_max_ttl("x max_ttl_ms=12a"), std::nullopt);
  EXPECT_EQ(marker_max_ttl("x max_ttl_ms=9999999999999"), std::nullopt);
}

TEST(MarkerValue, NamesTheServerThatWroteItAfterItsMaxTtl) {
  const std::string id(40, 'a');
  const std::string named = "redlock-node-0123abcd max_ttl_ms=30000 run_id=" + id;
  EXPECT_EQ(marker_max_ttl(named), Milliseconds(30000));
  EXPECT_EQ(marker_run_id(named), id);
  // With the replication history it was written in, before the run_id.
  const std::string with_history =
      "redlock-node-0123abcd max_ttl_ms=30000 replid=" + std::string(40, 'b') + " run_id=" + id;
  EXPECT_EQ(marker_max_ttl(with_history), Milliseconds(30000));
  EXPECT_EQ(marker_run_id(with_history), id);
  // Written before markers named their server, or not a run_id.
  EXPECT_EQ(marker_run_id("redlock-node-0123abcd max_ttl_ms=30000"), std::nullopt);
  EXPECT_EQ(marker_run_id("x run_id=abc"), std::nullopt);
  EXPECT_EQ(marker_run_id("x run_id=" + std::string(40, 'g')), std::nullopt);
}

}  // namespace
}  // namespace redlock::detail
