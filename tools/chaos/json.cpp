#include "json.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>

namespace redlock::chaos {
namespace {

const JsonValue kNull;
const JsonArray kEmptyArray;
const JsonObject kEmptyObject;

// Deeper nesting than any history line needs; the bound keeps a hostile
// input from exhausting the stack.
constexpr int kMaxDepth = 256;

// The value of a \u escape's four hex digits, or -1.
int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, std::uint32_t code_point) {
  auto byte = [&out](std::uint32_t bits) { out.push_back(static_cast<char>(bits)); };
  if (code_point < 0x80) {
    byte(code_point);
  } else if (code_point < 0x800) {
    byte(0xC0 | (code_point >> 6));
    byte(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    byte(0xE0 | (code_point >> 12));
    byte(0x80 | ((code_point >> 6) & 0x3F));
    byte(0x80 | (code_point & 0x3F));
  } else {
    byte(0xF0 | (code_point >> 18));
    byte(0x80 | ((code_point >> 12) & 0x3F));
    byte(0x80 | ((code_point >> 6) & 0x3F));
    byte(0x80 | (code_point & 0x3F));
  }
}

void append_double(std::string& out, double d) {
  // JSON has no NaN or infinity.
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  std::array<char, 32> buffer{};
  auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), d);
  std::string_view text(buffer.data(), static_cast<std::size_t>(end - buffer.data()));
  out += text;
  // Keep a double a double across a round trip: "1" would read back as an integer.
  if (text.find_first_of(".eE") == std::string_view::npos) out += ".0";
}

// Recursive descent over the RFC 8259 grammar. Every failure records the
// offset of the offending byte and what was expected there.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  JsonParseResult parse() {
    JsonParseResult result;
    skip_whitespace();
    std::optional<JsonValue> value = parse_value(0);
    if (value) {
      skip_whitespace();
      if (pos_ != text_.size()) {
        fail("end of input");
        value.reset();
      }
    }
    if (value) {
      result.value = std::move(value);
    } else {
      result.error_offset = error_offset_;
      result.error = "expected " + error_;
    }
    return result;
  }

 private:
  std::optional<JsonValue> fail(std::string_view expected) {
    if (error_.empty()) {
      error_offset_ = pos_;
      error_ = std::string(expected);
    }
    return std::nullopt;
  }

  [[nodiscard]] bool at_end() const noexcept { return pos_ >= text_.size(); }
  [[nodiscard]] char peek() const noexcept { return at_end() ? '\0' : text_[pos_]; }

  void skip_whitespace() noexcept {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++pos_;
    }
  }

  bool consume_literal(std::string_view literal) noexcept {
    if (text_.substr(pos_, literal.size()) != literal) return false;
    pos_ += literal.size();
    return true;
  }

  std::optional<JsonValue> parse_value(int depth) {
    if (depth > kMaxDepth) return fail("less nesting");
    switch (peek()) {
      case '{':
        return parse_object(depth);
      case '[':
        return parse_array(depth);
      case '"': {
        std::optional<std::string> s = parse_string();
        if (!s) return std::nullopt;
        return JsonValue(std::move(*s));
      }
      case 't':
        if (consume_literal("true")) return JsonValue(true);
        break;
      case 'f':
        if (consume_literal("false")) return JsonValue(false);
        break;
      case 'n':
        if (consume_literal("null")) return JsonValue(nullptr);
        break;
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return parse_number();
        break;
    }
    return fail("a value");
  }

  std::optional<JsonValue> parse_object(int depth) {
    ++pos_;  // '{'
    JsonObject object;
    skip_whitespace();
    if (peek() == '}') {
      ++pos_;
      return JsonValue(std::move(object));
    }
    while (true) {
      skip_whitespace();
      if (peek() != '"') return fail("a string key");
      std::optional<std::string> key = parse_string();
      if (!key) return std::nullopt;
      skip_whitespace();
      if (peek() != ':') return fail("':'");
      ++pos_;
      skip_whitespace();
      std::optional<JsonValue> member = parse_value(depth + 1);
      if (!member) return std::nullopt;
      // A repeated key keeps its last value, as most readers do.
      object.insert_or_assign(std::move(*key), std::move(*member));
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') {
        ++pos_;
        return JsonValue(std::move(object));
      }
      return fail("',' or '}'");
    }
  }

  std::optional<JsonValue> parse_array(int depth) {
    ++pos_;  // '['
    JsonArray array;
    skip_whitespace();
    if (peek() == ']') {
      ++pos_;
      return JsonValue(std::move(array));
    }
    while (true) {
      skip_whitespace();
      std::optional<JsonValue> element = parse_value(depth + 1);
      if (!element) return std::nullopt;
      array.push_back(std::move(*element));
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return JsonValue(std::move(array));
      }
      return fail("',' or ']'");
    }
  }

  bool skip_digits() noexcept {
    const std::size_t start = pos_;
    while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_;
    return pos_ > start;
  }

  std::optional<JsonValue> parse_number() {
    const std::size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (!skip_digits()) {
      return fail("a digit");
    }
    bool integral = true;
    if (peek() == '.') {
      integral = false;
      ++pos_;
      if (!skip_digits()) return fail("a digit after '.'");
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!skip_digits()) return fail("a digit in the exponent");
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    if (integral) {
      std::int64_t i = 0;
      auto [ptr, ec] = std::from_chars(first, last, i);
      if (ec == std::errc() && ptr == last) return JsonValue(i);
      // Out of int64 range: keep it as the nearest double.
    }
    double d = 0;
    auto [ptr, ec] = std::from_chars(first, last, d);
    if (ec == std::errc::result_out_of_range) {
      pos_ = start;
      return fail("a number within double range");
    }
    return JsonValue(d);
  }

  // Four hex digits after "\u"; -1 on error (recorded).
  std::int32_t parse_hex4() {
    std::int32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const int digit = hex_digit(peek());
      if (digit < 0) {
        fail("a hex digit");
        return -1;
      }
      value = value * 16 + digit;
      ++pos_;
    }
    return value;
  }

  // After the backslash and 'u': one code point, a surrogate pair joined.
  bool parse_unicode_escape(std::string& out) {
    const std::size_t escape_start = pos_ - 2;
    const std::int32_t first = parse_hex4();
    if (first < 0) return false;
    if (first >= 0xDC00 && first <= 0xDFFF) {
      pos_ = escape_start;
      fail("a high surrogate before a low surrogate");
      return false;
    }
    if (first < 0xD800 || first > 0xDBFF) {
      append_utf8(out, static_cast<std::uint32_t>(first));
      return true;
    }
    if (!consume_literal("\\u")) {
      fail("a low surrogate escape after a high surrogate");
      return false;
    }
    const std::size_t second_start = pos_ - 2;
    const std::int32_t second = parse_hex4();
    if (second < 0) return false;
    if (second < 0xDC00 || second > 0xDFFF) {
      pos_ = second_start;
      fail("a low surrogate after a high surrogate");
      return false;
    }
    const auto code_point = 0x10000 + ((static_cast<std::uint32_t>(first) - 0xD800) << 10) +
                            (static_cast<std::uint32_t>(second) - 0xDC00);
    append_utf8(out, code_point);
    return true;
  }

  bool parse_escape(std::string& out) {
    const char c = peek();
    ++pos_;
    switch (c) {
      case '"':
      case '\\':
      case '/':
        out.push_back(c);
        return true;
      case 'b':
        out.push_back('\b');
        return true;
      case 'f':
        out.push_back('\f');
        return true;
      case 'n':
        out.push_back('\n');
        return true;
      case 'r':
        out.push_back('\r');
        return true;
      case 't':
        out.push_back('\t');
        return true;
      case 'u':
        return parse_unicode_escape(out);
      default:
        --pos_;
        fail("an escape character");
        return false;
    }
  }

  std::optional<std::string> parse_string() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (at_end()) {
        fail("a closing '\"'");
        return std::nullopt;
      }
      const char c = peek();
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        fail("an escaped control character");
        return std::nullopt;
      }
      ++pos_;
      if (c != '\\') {
        out.push_back(c);
      } else if (!parse_escape(out)) {
        return std::nullopt;
      }
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t error_offset_ = 0;
  std::string error_;
};

void append_json(std::string& out, const JsonValue& value);

void append_array(std::string& out, const JsonArray& array) {
  out.push_back('[');
  bool first = true;
  for (const JsonValue& element : array) {
    if (!first) out.push_back(',');
    first = false;
    append_json(out, element);
  }
  out.push_back(']');
}

void append_object(std::string& out, const JsonObject& object) {
  out.push_back('{');
  bool first = true;
  for (const auto& [key, member] : object) {
    if (!first) out.push_back(',');
    first = false;
    append_json_string(out, key);
    out.push_back(':');
    append_json(out, member);
  }
  out.push_back('}');
}

void append_json(std::string& out, const JsonValue& value) {
  if (value.is_null()) {
    out += "null";
  } else if (value.is_bool()) {
    out += value.as_bool() ? "true" : "false";
  } else if (value.is_string()) {
    append_json_string(out, value.as_string());
  } else if (value.is_array()) {
    append_array(out, value.as_array());
  } else if (value.is_object()) {
    append_object(out, value.as_object());
  } else if (value.is_integer()) {
    out += std::to_string(value.as_int());
  } else {
    append_double(out, value.as_double());
  }
}

}  // namespace

bool JsonValue::is_null() const noexcept { return std::holds_alternative<std::nullptr_t>(value_); }
bool JsonValue::is_bool() const noexcept { return std::holds_alternative<bool>(value_); }
bool JsonValue::is_integer() const noexcept { return std::holds_alternative<std::int64_t>(value_); }
bool JsonValue::is_number() const noexcept {
  return is_integer() || std::holds_alternative<double>(value_);
}
bool JsonValue::is_string() const noexcept { return std::holds_alternative<std::string>(value_); }
bool JsonValue::is_array() const noexcept { return std::holds_alternative<JsonArray>(value_); }
bool JsonValue::is_object() const noexcept { return std::holds_alternative<JsonObject>(value_); }

bool JsonValue::as_bool(bool fallback) const noexcept {
  const bool* b = std::get_if<bool>(&value_);
  return b != nullptr ? *b : fallback;
}

std::int64_t JsonValue::as_int(std::int64_t fallback) const noexcept {
  if (const auto* i = std::get_if<std::int64_t>(&value_)) return *i;
  if (const auto* d = std::get_if<double>(&value_)) {
    // Only a double that is exactly an int64 converts; 2^63 itself does not fit.
    constexpr double kTwoTo63 = 9223372036854775808.0;
    if (std::trunc(*d) == *d && *d >= -kTwoTo63 && *d < kTwoTo63) {
      return static_cast<std::int64_t>(*d);
    }
  }
  return fallback;
}

double JsonValue::as_double(double fallback) const noexcept {
  if (const auto* d = std::get_if<double>(&value_)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&value_)) return static_cast<double>(*i);
  return fallback;
}

std::string JsonValue::as_string(std::string_view fallback) const {
  const auto* s = std::get_if<std::string>(&value_);
  return s != nullptr ? *s : std::string(fallback);
}

const JsonArray& JsonValue::as_array() const noexcept {
  const auto* a = std::get_if<JsonArray>(&value_);
  return a != nullptr ? *a : kEmptyArray;
}

const JsonObject& JsonValue::as_object() const noexcept {
  const auto* o = std::get_if<JsonObject>(&value_);
  return o != nullptr ? *o : kEmptyObject;
}

const JsonValue& JsonValue::operator[](std::string_view key) const noexcept {
  const JsonObject& object = as_object();
  auto it = object.find(key);
  return it != object.end() ? it->second : kNull;
}

bool JsonValue::contains(std::string_view key) const noexcept {
  const JsonObject& object = as_object();
  return object.find(key) != object.end();
}

std::string JsonValue::dump() const {
  std::string out;
  append_json(out, *this);
  return out;
}

JsonParseResult parse_json(std::string_view text) { return Parser(text).parse(); }

}  // namespace redlock::chaos
