#include "json.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace redlock::chaos {
namespace {

using nlohmann::json;

const JsonValue kNull;
const JsonArray kEmptyArray;
const JsonObject kEmptyObject;

// Deeper nesting than any history line needs. nlohmann's parser keeps its
// own state on the heap, but a JsonValue is destroyed and dumped
// recursively: the bound keeps a hostile input from exhausting the stack.
constexpr std::size_t kMaxDepth = 256;

// The offset of the first '[' or '{' that opens container number
// kMaxDepth + 2 on one path: where ValueBuilder stopped. Everything before
// it was read as valid JSON, so strings there are well formed.
std::size_t too_deep_offset(std::string_view text) noexcept {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      in_string = c != '"';
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth + 1) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return text.size();
}

// nlohmann's error, taken apart: what went wrong without its prefix
// ("[json.exception...] parse error at line 1, column 4: ") and without the
// bytes it last read (the caller prints the message; the input is not
// trusted), and the token the parser expected where a lexer error stopped
// it ("']'"; empty where any value would do).
struct ReadError {
  std::string message;
  std::string expected;
};

ReadError read_error(const std::string& token, const json::exception& error) {
  ReadError read{error.what(), {}};
  std::string& message = read.message;
  if (const std::size_t end = message.find("] "); end != std::string::npos) {
    message.erase(0, end + 2);
  }
  if (message.starts_with("parse error at line ")) message.erase(0, message.find(": ") + 2);
  const std::string last_read = "; last read: '" + token + "'";
  if (const std::size_t at = message.find(last_read); at != std::string::npos) {
    constexpr std::string_view kExpected = "; expected ";
    if (message.compare(at + last_read.size(), kExpected.size(), kExpected) == 0) {
      read.expected = message.substr(at + last_read.size() + kExpected.size());
    }
    message.erase(at, last_read.size());
  }
  return read;
}

// The length of the token nlohmann names in "unexpected <token>", when it
// does not pass the token's text (true, false, null and punctuation).
std::size_t named_token_length(std::string_view name) noexcept {
  if (name.starts_with("true") || name.starts_with("null")) return 4;
  if (name.starts_with("false")) return 5;
  return 1;  // '[', ']', ':', ... and the end of input, counted as one byte
}

// Where the string or number being read when the lexer stopped at
// text[end - 1] starts: `token` is its text so far, with each control
// character shown as "<U+XXXX>".
std::size_t token_start(std::string_view text, std::size_t end, std::string_view token) {
  end = std::min(end, text.size());
  while (end > 0 && !token.empty()) {
    const std::size_t shown = static_cast<unsigned char>(text[end - 1]) < 0x20 ? 8 : 1;
    token.remove_suffix(std::min(shown, token.size()));
    --end;
  }
  return end;
}

// The start of the literal ("tru") the lexer was reading when it found
// text[offending] wrong, else `offending` itself.
std::size_t literal_start(std::string_view text, std::size_t offending) {
  for (const std::string_view literal : {"true", "false", "null"}) {
    for (std::size_t read = literal.size() - 1; read > 0; --read) {
      if (offending >= read && text.substr(offending - read, read) == literal.substr(0, read)) {
        return offending - read;
      }
    }
  }
  return offending;
}

// The byte offset of an error in `text`: the first byte of a token that
// does not belong where it is, of a number out of range, of a misspelt
// literal and of a misplaced surrogate escape; the offending byte
// otherwise. nlohmann gives `position`, the count of bytes it read with
// the offending one (the end of input counts as one), and `token`, the text
// of the last string or number it read.
std::size_t error_offset(std::string_view text, std::size_t position, const std::string& token,
                         int id, const ReadError& error) {
  const std::string_view message = error.message;
  const auto back = [position](std::size_t bytes) {
    return position >= bytes ? position - bytes : 0;
  };
  if (id == 406) return back(token.size());  // number overflow
  constexpr std::string_view kUnexpected = "- unexpected ";
  if (const std::size_t at = message.find(kUnexpected); at != std::string_view::npos) {
    const std::string_view name = message.substr(at + kUnexpected.size());
    const bool has_text = name.starts_with("string literal") || name.starts_with("number literal");
    return back(has_text ? token.size() : named_token_length(name));
  }
  // A lexer error. Where the parser wanted punctuation (or a key, and this
  // is no string), the token is wrong from its first byte.
  const bool is_string = token.starts_with('"');
  if (!error.expected.empty() && !(error.expected == "string literal" && is_string) &&
      message.find("invalid literal") == std::string_view::npos) {
    return token_start(text, position, token);
  }
  const std::size_t offending = back(1);
  if (message.find("invalid literal") != std::string_view::npos) {
    return literal_start(text, offending);
  }
  if (message.find("surrogate U+DC00..U+DFFF must follow") != std::string_view::npos) {
    return back(6);  // the low surrogate's "\uDCxx" just read
  }
  if (message.find("must be followed by U+DC00..U+DFFF") != std::string_view::npos) {
    // Where the escape after the high surrogate starts (or should).
    if (position >= 6 && text.substr(position - 6, 2) == "\\u") return position - 6;
    if (position >= 2 && text[position - 2] == '\\') return position - 2;
  }
  return offending;
}

// Builds a JsonValue from nlohmann's parse events. Containers being read
// wait on a stack of their own; a value goes into the innermost one.
class ValueBuilder final : public nlohmann::json_sax<json> {
 public:
  explicit ValueBuilder(std::string_view text) : text_(text) {}

  bool null() override { return add(JsonValue(nullptr)); }
  bool boolean(bool value) override { return add(JsonValue(value)); }
  bool number_integer(std::int64_t value) override { return add(JsonValue(value)); }
  bool number_unsigned(std::uint64_t value) override {
    // Beyond int64: the nearest double, as for any integer out of its range.
    if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return add(JsonValue(static_cast<double>(value)));
    }
    return add(JsonValue(static_cast<std::int64_t>(value)));
  }
  bool number_float(double value, const std::string& /*text*/) override {
    return add(JsonValue(value));
  }
  bool string(std::string& value) override { return add(JsonValue(std::move(value))); }
  bool binary(binary_t& /*value*/) override { return false; }  // not in JSON text
  bool start_object(std::size_t /*elements*/) override { return open(true); }
  bool key(std::string& name) override {
    open_.back().key = std::move(name);
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t /*elements*/) override { return open(false); }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t position, const std::string& token,
                   const json::exception& error) override {
    const ReadError read = read_error(token, error);
    result_.error_offset = error_offset(text_, position, token, error.id, read);
    result_.error = read.message;
    return false;
  }

  JsonParseResult finish(bool parsed) {
    if (parsed) {
      result_.value = std::move(root_);
    } else if (result_.error.empty()) {  // stopped by open()
      result_.error_offset = too_deep_offset(text_);
      result_.error = "nesting deeper than " + std::to_string(kMaxDepth + 1) + " levels";
    }
    return std::move(result_);
  }

 private:
  struct Container {
    bool is_object = false;
    JsonArray array;
    JsonObject object;
    std::string key;  // of the next member
  };

  bool add(JsonValue value) {
    if (open_.empty()) {
      root_ = std::move(value);
    } else if (Container& innermost = open_.back(); innermost.is_object) {
      // A repeated key keeps its last value, as most readers do.
      innermost.object.insert_or_assign(std::move(innermost.key), std::move(value));
    } else {
      innermost.array.push_back(std::move(value));
    }
    return true;
  }

  bool open(bool is_object) {
    if (open_.size() > kMaxDepth) return false;
    open_.push_back(Container{is_object, {}, {}, {}});
    return true;
  }

  bool close() {
    Container done = std::move(open_.back());
    open_.pop_back();
    return add(done.is_object ? JsonValue(std::move(done.object))
                              : JsonValue(std::move(done.array)));
  }

  std::string_view text_;
  std::vector<Container> open_;
  JsonValue root_;
  JsonParseResult result_;
};

json to_nlohmann(const JsonValue& value) {
  if (value.is_bool()) return value.as_bool();
  if (value.is_integer()) return value.as_int();
  if (value.is_number()) return value.as_double();
  if (value.is_string()) return value.as_string();
  if (value.is_array()) {
    json array = json::array();
    for (const JsonValue& element : value.as_array()) array.push_back(to_nlohmann(element));
    return array;
  }
  if (value.is_object()) {
    json object = json::object();
    for (const auto& [key, member] : value.as_object()) object[key] = to_nlohmann(member);
    return object;
  }
  return nullptr;
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
  // Compact; keys sorted (nlohmann's objects are ordered maps too); a double
  // keeps a ".0" so it reads back as a double; NaN and infinities, which
  // JSON lacks, become null; strings as append_json_string writes them.
  return to_nlohmann(*this).dump(-1, ' ', false, json::error_handler_t::replace);
}

JsonParseResult parse_json(std::string_view text) {
  // nlohmann skips a byte order mark; RFC 8259 texts have none.
  if (text.starts_with("\xEF\xBB\xBF")) return {std::nullopt, 0, "unexpected byte order mark"};
  ValueBuilder builder(text);
  const bool parsed = json::sax_parse(text.begin(), text.end(), &builder);
  return builder.finish(parsed);
}

}  // namespace redlock::chaos
