#include "json.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace redlock::chaos {
namespace {

JsonValue parse_ok(std::string_view text) {
  JsonParseResult result = parse_json(text);
  EXPECT_TRUE(result.value.has_value()) << text << ": " << result.error;
  if (!result.value) return JsonValue();
  return std::move(*result.value);
}

// Parses, dumps, and checks that the dump is `expected` and parses back to
// the same dump.
void expect_round_trip(std::string_view text, std::string_view expected) {
  const std::string dumped = parse_ok(text).dump();
  EXPECT_EQ(dumped, expected);
  EXPECT_EQ(parse_ok(dumped).dump(), dumped);
}

TEST(JsonTest, ScalarsRoundTrip) {
  expect_round_trip("null", "null");
  expect_round_trip("true", "true");
  expect_round_trip("false", "false");
  expect_round_trip("0", "0");
  expect_round_trip("-17", "-17");
  expect_round_trip("2.5", "2.5");
  expect_round_trip("\"text\"", "\"text\"");
}

TEST(JsonTest, NestedValuesRoundTripCompactWithKeysInOrder) {
  expect_round_trip(R"( { "b" : [1, {"x": null}, []], "a": {} , "c": "s" } )",
                    R"({"a":{},"b":[1,{"x":null},[]],"c":"s"})");
}

TEST(JsonTest, IntegralNumbersAreIntegers) {
  const JsonValue value = parse_ok("[42, 42.0, 4.2e1]");
  const JsonArray& items = value.as_array();
  ASSERT_EQ(items.size(), 3U);
  EXPECT_TRUE(items[0].is_integer());
  EXPECT_FALSE(items[1].is_integer());
  EXPECT_FALSE(items[2].is_integer());
  EXPECT_TRUE(items[1].is_number());
  EXPECT_EQ(items[1].as_int(), 42);  // an exactly integral double reads as int
  EXPECT_EQ(parse_ok("42.5").as_int(-1), -1);
}

TEST(JsonTest, DoublesStayDoublesAcrossARoundTrip) {
  const JsonValue value(1.0);
  EXPECT_EQ(value.dump(), "1.0");
  EXPECT_FALSE(parse_ok(value.dump()).is_integer());
  EXPECT_DOUBLE_EQ(parse_ok(JsonValue(0.1).dump()).as_double(), 0.1);
}

TEST(JsonTest, Int64ExtremesSurviveWithoutLoss) {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(parse_ok("9223372036854775807").as_int(), max);
  EXPECT_EQ(parse_ok("-9223372036854775808").as_int(), min);
  EXPECT_EQ(JsonValue(max).dump(), "9223372036854775807");
  EXPECT_EQ(JsonValue(min).dump(), "-9223372036854775808");
  // 2^53 + 1 is not representable as a double: integers must not pass through one.
  EXPECT_EQ(parse_ok("9007199254740993").as_int(), 9007199254740993);
}

TEST(JsonTest, IntegersBeyondInt64BecomeDoubles) {
  const JsonValue value = parse_ok("9223372036854775808");
  EXPECT_FALSE(value.is_integer());
  EXPECT_DOUBLE_EQ(value.as_double(), 9223372036854775808.0);
  EXPECT_EQ(value.as_int(-1), -1);  // 2^63 does not fit
}

TEST(JsonTest, EscapesAreWrittenAndRead) {
  const std::string text = std::string("q\" b\\ s/ \b\f\n\r\t ") + '\x01' + '\x1f';
  std::string literal;
  append_json_string(literal, text);
  EXPECT_EQ(literal, R"("q\" b\\ s/ \b\f\n\r\t \u0001\u001f")");
  EXPECT_EQ(parse_ok(literal).as_string(), text);
  EXPECT_EQ(parse_ok(R"("\/")").as_string(), "/");
}

TEST(JsonTest, UnicodeEscapesDecodeToUtf8) {
  EXPECT_EQ(parse_ok(R"("\u0041")").as_string(), "A");
  EXPECT_EQ(parse_ok(R"("\u00e9")").as_string(), "\xC3\xA9");
  EXPECT_EQ(parse_ok(R"("\u20AC")").as_string(), "\xE2\x82\xAC");
}

TEST(JsonTest, SurrogatePairsJoinIntoOneCodePoint) {
  // U+1F600 as its UTF-16 surrogate pair.
  EXPECT_EQ(parse_ok(R"("\ud83d\ude00")").as_string(), "\xF0\x9F\x98\x80");
  // Raw UTF-8 passes through unchanged both ways.
  expect_round_trip("\"\xF0\x9F\x98\x80\"", "\"\xF0\x9F\x98\x80\"");
}

TEST(JsonTest, LoneSurrogatesAreErrors) {
  EXPECT_FALSE(parse_json(R"("\ud83d")").value);
  EXPECT_FALSE(parse_json(R"("\ud83dx")").value);
  EXPECT_FALSE(parse_json(R"("\ud83d\u0041")").value);
  EXPECT_FALSE(parse_json(R"("\ude00")").value);
}

TEST(JsonTest, TypedReadsFallBackOnOtherTypes) {
  const JsonValue object = parse_ok(R"({"n":3,"s":"x","b":true})");
  EXPECT_EQ(object["n"].as_int(), 3);
  EXPECT_EQ(object["s"].as_int(7), 7);
  EXPECT_EQ(object["n"].as_string("none"), "none");
  EXPECT_TRUE(object["b"].as_bool());
  EXPECT_TRUE(object["missing"].is_null());
  EXPECT_TRUE(object.contains("s"));
  EXPECT_FALSE(object.contains("missing"));
  EXPECT_TRUE(object["n"].as_array().empty());
  EXPECT_TRUE(JsonValue(5)["key"].is_null());
}

struct ErrorCase {
  std::string_view text;
  std::size_t offset;
};

TEST(JsonTest, ErrorsReportTheOffendingOffset) {
  const ErrorCase cases[] = {
      {"", 0},                    // nothing at all
      {"[1,]", 3},                // a value expected after the comma
      {"{\"a\" 1}", 5},           // ':' expected
      {"{1:2}", 1},               // keys are strings
      {"[1 2]", 3},               // ',' or ']' expected
      {"\"abc", 4},               // unterminated string
      {"\"a\nb\"", 2},            // raw control character
      {"\"\\x\"", 2},             // unknown escape
      {"\"\\u12G4\"", 5},         // bad hex digit
      {"01", 1},                  // leading zero, then trailing garbage
      {"1.", 2},                  // digit after '.'
      {"1e+", 3},                 // digit in the exponent
      {"-", 1},                   // digit after '-'
      {"tru", 0},                 // truncated literal
      {"{} x", 3},                // trailing garbage
      {"\"\\ude00\"", 1},         // low surrogate first: points at its escape
      {"\"\\ud83d\\u0041\"", 7},  // high surrogate, then no low one
  };
  for (const ErrorCase& c : cases) {
    const JsonParseResult result = parse_json(c.text);
    EXPECT_FALSE(result.value) << c.text;
    EXPECT_EQ(result.error_offset, c.offset) << c.text << ": " << result.error;
    EXPECT_FALSE(result.error.empty()) << c.text;
  }
}

TEST(JsonTest, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  const JsonParseResult result = parse_json(deep);
  EXPECT_FALSE(result.value);
  EXPECT_GT(result.error_offset, 0U);
}

TEST(JsonTest, WhitespaceAroundTheTextIsAllowed) {
  EXPECT_EQ(parse_ok(" \t\r\n 5 \n").as_int(), 5);
}

}  // namespace
}  // namespace redlock::chaos
