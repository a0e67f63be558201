// A small JSON value for the harness's history files, read and written with
// nlohmann-json.
//
// History lines are flat objects with a few arrays of small objects; this
// covers exactly JSON (RFC 8259): null, booleans, numbers (kept as double
// and, when integral, as int64 without loss), strings with escapes and
// \u sequences (surrogate pairs included), arrays, objects. The reader
// takes UTF-8 text only and nests at most 257 containers deep. Parsing
// never throws: it returns an error with the byte offset.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "json_writer.hpp"

namespace redlock::chaos {

class JsonValue;
using JsonArray = std::vector<JsonValue>;
// Ordered by key: output is deterministic.
using JsonObject = std::map<std::string, JsonValue, std::less<>>;

class JsonValue {
 public:
  JsonValue() = default;  // null
  JsonValue(std::nullptr_t) {}
  JsonValue(bool b) : value_(b) {}
  JsonValue(std::int64_t i) : value_(i) {}
  JsonValue(int i) : value_(static_cast<std::int64_t>(i)) {}
  JsonValue(double d) : value_(d) {}
  JsonValue(std::string s) : value_(std::move(s)) {}
  JsonValue(std::string_view s) : value_(std::string(s)) {}
  JsonValue(const char* s) : value_(std::string(s)) {}
  JsonValue(JsonArray a) : value_(std::move(a)) {}
  JsonValue(JsonObject o) : value_(std::move(o)) {}

  [[nodiscard]] bool is_null() const noexcept;
  [[nodiscard]] bool is_bool() const noexcept;
  [[nodiscard]] bool is_number() const noexcept;   // integer or double
  [[nodiscard]] bool is_integer() const noexcept;  // read as int64 without loss
  [[nodiscard]] bool is_string() const noexcept;
  [[nodiscard]] bool is_array() const noexcept;
  [[nodiscard]] bool is_object() const noexcept;

  // Typed reads with a fallback for a missing or differently typed value.
  // as_int also reads a double that is exactly an int64; as_double reads
  // an integer (rounded to the nearest double).
  [[nodiscard]] bool as_bool(bool fallback = false) const noexcept;
  [[nodiscard]] std::int64_t as_int(std::int64_t fallback = 0) const noexcept;
  [[nodiscard]] double as_double(double fallback = 0) const noexcept;
  [[nodiscard]] std::string as_string(std::string_view fallback = {}) const;
  // Empty references for other types.
  [[nodiscard]] const JsonArray& as_array() const noexcept;
  [[nodiscard]] const JsonObject& as_object() const noexcept;

  // Object member, or a null value when absent / not an object.
  [[nodiscard]] const JsonValue& operator[](std::string_view key) const noexcept;
  [[nodiscard]] bool contains(std::string_view key) const noexcept;

  // Compact single-line JSON (no spaces), keys in map order.
  [[nodiscard]] std::string dump() const;

 private:
  std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, JsonArray, JsonObject>
      value_{nullptr};
};

struct JsonParseResult {
  std::optional<JsonValue> value;
  std::size_t error_offset = 0;  // byte offset of the error when !value
  std::string error;             // what was expected there
};

// Parses one JSON text (surrounding whitespace allowed, nothing else).
[[nodiscard]] JsonParseResult parse_json(std::string_view text);

// Appends `text` as a JSON string literal (quotes included) to `out`: the
// `redlock` tool's writer (invalid UTF-8 becomes U+FFFD).
using cli::append_json_string;

}  // namespace redlock::chaos
