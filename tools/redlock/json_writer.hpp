// A small streaming JSON writer: what `acquire`, `extend`, `release`,
// `inspect` and `status --json` print. Output is compact (one line), always
// valid JSON and always valid UTF-8, whatever bytes the strings hold:
//   * quotes, backslashes and control characters are escaped (\" \\ \n \t,
//     \u001b, ...);
//   * valid UTF-8 (any non-ASCII text) is copied as is;
//   * bytes that are not well-formed UTF-8 become U+FFFD, the replacement
//     character, one for each ill-formed sequence (a truncated sequence is
//     one, a byte that cannot start or continue one is one) — JSON strings
//     are Unicode text and cannot carry arbitrary bytes, so such a resource
//     name is shown, not round-tripped.
// Strings are escaped by nlohmann-json's serializer; the structure is
// streamed here, so nothing is built in memory first.
//
// The writer inserts the commas; the caller must nest calls correctly (a
// key before each value inside an object, balanced begin/end). Misuse is a
// programming error, checked with assert in debug builds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::cli {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // Inside an object: the name of the next value.
  JsonWriter& key(std::string_view name);

  JsonWriter& string(std::string_view text);
  JsonWriter& number(std::int64_t value);
  JsonWriter& number(std::uint64_t value);
  JsonWriter& boolean(bool value);
  JsonWriter& null();
  // The value, or null when unset.
  JsonWriter& optional_string(const std::optional<std::string>& text);
  JsonWriter& optional_number(const std::optional<std::int64_t>& value);
  JsonWriter& optional_number(const std::optional<std::uint64_t>& value);

  // The text so far. Complete once every begin has its end.
  [[nodiscard]] const std::string& str() const noexcept { return out_; }
  [[nodiscard]] bool complete() const noexcept { return stack_.empty() && wrote_value_; }

 private:
  struct Frame {
    bool is_object = false;
    bool empty = true;
    bool after_key = false;
  };
  void before_value();

  std::string out_;
  std::vector<Frame> stack_;
  bool wrote_value_ = false;
};

// Appends `text` as a JSON string literal (with the quotes) to `out`.
void append_json_string(std::string& out, std::string_view text);

}  // namespace redlock::cli
