// The JSON writer, checked against the independent reader in json_check.
#include "json_writer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "json_check.hpp"

namespace redlock::cli {
namespace {

using test::JsonValue;
using test::parse_json;

std::string quoted(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

// Writes `text` as a JSON string, parses it back and returns the decoded
// string (failing the test when the output is not valid JSON).
std::string round_trip(std::string_view text) {
  const std::string json = quoted(text);
  const auto parsed = parse_json(json);
  EXPECT_TRUE(parsed.value.has_value()) << parsed.error << " in " << json;
  return parsed.value ? parsed.value->text : std::string();
}

TEST(JsonString, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(quoted("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(quoted("\n\r\t\b\f"), R"("\n\r\t\b\f")");
  EXPECT_EQ(quoted(std::string_view("\0\x01\x1f", 3)), R"("\u0000\u0001\u001f")");
  EXPECT_EQ(quoted("\x7f/"), "\"\x7f/\"");  // DEL and '/' need no escape
}

TEST(JsonString, KeepsValidUtf8) {
  const std::string_view text = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92 \xef\xbf\xbf";
  EXPECT_EQ(quoted(text), "\"" + std::string(text) + "\"");
  EXPECT_EQ(round_trip(text), text);
}

TEST(JsonString, ReplacesEveryByteThatIsNotUtf8) {
  const std::string replacement = "\xef\xbf\xbd";
  struct Case {
    std::string_view input;
    std::string expected;
  };
  const Case cases[] = {
      {"\xff", replacement},                                      // never valid
      {"\x80", replacement},                                      // stray continuation
      {"\xc3", replacement},                                      // truncated at the end
      {"\xc3(", replacement + "("},                               // truncated in the middle
      {"\xc0\xaf", replacement + replacement},                    // overlong '/'
      {"\xe0\x80\xaf", replacement + replacement + replacement},  // overlong, 3 bytes
      {"\xed\xa0\x80", replacement + replacement + replacement},  // UTF-16 surrogate
      {"\xf4\x90\x80\x80", replacement + replacement + replacement + replacement},  // > U+10FFFF
      {"ok\xfe!", "ok" + replacement + "!"},
  };
  for (const Case& test_case : cases) {
    EXPECT_EQ(round_trip(test_case.input), test_case.expected)
        << "input bytes: " << test_case.input.size();
  }
}

TEST(JsonString, EveryByteValueGivesValidJson) {
  for (int byte = 0; byte < 256; ++byte) {
    const char c = static_cast<char>(byte);
    (void)round_trip(std::string_view(&c, 1));
  }
}

TEST(JsonWriter, WritesNestedValuesWithCommas) {
  JsonWriter json;
  json.begin_object();
  json.key("s").string("x");
  json.key("n").number(std::int64_t{-5});
  json.key("u").number(std::uint64_t{7});
  json.key("t").boolean(true);
  json.key("f").boolean(false);
  json.key("z").null();
  json.key("a").begin_array();
  json.number(std::int64_t{1}).begin_object().end_object().begin_array().end_array();
  json.end_array();
  json.key("e").begin_object().end_object();
  json.end_object();
  EXPECT_TRUE(json.complete());
  EXPECT_EQ(json.str(),
            R"({"s":"x","n":-5,"u":7,"t":true,"f":false,"z":null,"a":[1,{},[]],"e":{}})");
  EXPECT_TRUE(parse_json(json.str()).value.has_value());
}

TEST(JsonWriter, NumbersAtTheLimits) {
  JsonWriter json;
  json.begin_array();
  json.number(std::numeric_limits<std::int64_t>::min());
  json.number(std::numeric_limits<std::int64_t>::max());
  json.number(std::numeric_limits<std::uint64_t>::max());
  json.end_array();
  EXPECT_EQ(json.str(), "[-9223372036854775808,9223372036854775807,18446744073709551615]");
  const auto parsed = parse_json(json.str());
  ASSERT_TRUE(parsed.value.has_value());
  EXPECT_EQ(parsed.value->items.at(0).integer(), std::numeric_limits<std::int64_t>::min());
}

TEST(JsonWriter, OptionalValuesBecomeNull) {
  JsonWriter json;
  json.begin_object();
  json.key("a").optional_string(std::nullopt);
  json.key("b").optional_string(std::string("v"));
  json.key("c").optional_number(std::optional<std::int64_t>());
  json.key("d").optional_number(std::optional<std::uint64_t>(3));
  json.end_object();
  EXPECT_EQ(json.str(), R"({"a":null,"b":"v","c":null,"d":3})");
}

TEST(JsonWriter, KeysAreEscapedToo) {
  JsonWriter json;
  json.begin_object().key("k\"\n\xff").string("v").end_object();
  const auto parsed = parse_json(json.str());
  ASSERT_TRUE(parsed.value.has_value()) << json.str();
  ASSERT_EQ(parsed.value->members.size(), 1U);
  EXPECT_EQ(parsed.value->members[0].name, "k\"\n\xef\xbf\xbd");
}

TEST(JsonWriter, CompleteOnlyWhenBalanced) {
  JsonWriter json;
  EXPECT_FALSE(json.complete());
  json.begin_object();
  EXPECT_FALSE(json.complete());
  json.end_object();
  EXPECT_TRUE(json.complete());
}

// The reader used by the end-to-end tests must itself reject what is not
// JSON, or its "parses" would prove nothing.
TEST(JsonCheck, RejectsInvalidText) {
  for (std::string_view bad :
       {"", "{", R"({"a":})", "[1,]", R"({"a":1,})", "01", "1.", "-", "\"\n\"", R"("\x")",
        "\"\xff\"", R"("\ud800")", "nul", "{} {}", "[1] x", "{'a':1}", "\"\xc0\xaf\""}) {
    EXPECT_FALSE(parse_json(bad).value.has_value()) << "accepted: " << bad;
  }
  for (std::string_view good : {"{}", " [1, -2.5e3, true, null] ", R"("\ud83d\udd12")", "0"}) {
    EXPECT_TRUE(parse_json(good).value.has_value()) << "rejected: " << good;
  }
  EXPECT_EQ(parse_json(R"("\ud83d\udd12")").value->text, "\xf0\x9f\x94\x92");
}

}  // namespace
}  // namespace redlock::cli
