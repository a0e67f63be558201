#include "json_writer.hpp"

#include <array>
#include <cassert>
#include <charconv>
#include <nlohmann/json.hpp>

namespace redlock::cli {
namespace {

template <typename Integer>
void append_integer(std::string& out, Integer value) {
  std::array<char, 24> digits{};
  const auto result = std::to_chars(digits.data(), digits.data() + digits.size(), value);
  out.append(digits.data(), result.ptr);
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  // nlohmann's serializer escapes '"', '\\' and the control characters
  // (\n, \u001b, ...), copies well-formed UTF-8 and, with `replace`, writes
  // U+FFFD for each ill-formed sequence instead of failing.
  out += nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void JsonWriter::before_value() {
  if (stack_.empty()) {
    assert(!wrote_value_ && "a JSON text holds one top-level value");
    wrote_value_ = true;
    return;
  }
  Frame& frame = stack_.back();
  if (frame.is_object) {
    assert(frame.after_key && "an object member needs key() first");
    frame.after_key = false;
    return;
  }
  if (!frame.empty) out_ += ',';
  frame.empty = false;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  stack_.push_back(Frame{true, true, false});
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  assert(!stack_.empty() && stack_.back().is_object && !stack_.back().after_key);
  stack_.pop_back();
  out_ += '}';
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  stack_.push_back(Frame{false, true, false});
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  assert(!stack_.empty() && !stack_.back().is_object);
  stack_.pop_back();
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  assert(!stack_.empty() && stack_.back().is_object && !stack_.back().after_key);
  Frame& frame = stack_.back();
  if (!frame.empty) out_ += ',';
  frame.empty = false;
  frame.after_key = true;
  append_json_string(out_, name);
  out_ += ':';
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view text) {
  before_value();
  append_json_string(out_, text);
  return *this;
}

JsonWriter& JsonWriter::number(std::int64_t value) {
  before_value();
  append_integer(out_, value);
  return *this;
}

JsonWriter& JsonWriter::number(std::uint64_t value) {
  before_value();
  append_integer(out_, value);
  return *this;
}

JsonWriter& JsonWriter::boolean(bool value) {
  before_value();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::optional_string(const std::optional<std::string>& text) {
  return text ? string(*text) : null();
}

JsonWriter& JsonWriter::optional_number(const std::optional<std::int64_t>& value) {
  return value ? number(*value) : null();
}

JsonWriter& JsonWriter::optional_number(const std::optional<std::uint64_t>& value) {
  return value ? number(*value) : null();
}

}  // namespace redlock::cli
