// A strict JSON reader for the tests: proves that what `redlock` printed is
// one valid JSON text (RFC 8259, UTF-8) and lets a test read its fields.
// Small on purpose — no dependency, and independent of the writer under
// test, so a bug there cannot hide itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::test {

struct JsonMember;

struct JsonValue {
  enum class Kind { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  bool boolean = false;
  std::string number;  // the literal as written
  std::string text;    // a string, decoded to UTF-8
  std::vector<JsonValue> items;
  std::vector<JsonMember> members;  // in document order

  [[nodiscard]] bool is_null() const { return kind == Kind::null; }
  // The member named `name`, or nullptr (also when this is not an object).
  [[nodiscard]] const JsonValue* find(std::string_view name) const;
  // The member named `name`; a null value when there is none.
  [[nodiscard]] const JsonValue& operator[](std::string_view name) const;
  // A number without fraction or exponent, as an integer; nullopt otherwise.
  [[nodiscard]] std::optional<std::int64_t> integer() const;
};

struct JsonMember {
  std::string name;
  JsonValue value;
};

struct JsonParse {
  std::optional<JsonValue> value;
  std::string error;  // where and why, when !value
};

// Exactly one JSON value, optionally surrounded by whitespace.
[[nodiscard]] JsonParse parse_json(std::string_view text);

}  // namespace redlock::test
