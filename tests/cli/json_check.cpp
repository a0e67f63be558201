#include "json_check.hpp"

#include <charconv>
#include <stdexcept>

namespace redlock::test {
namespace {

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  JsonValue document() {
    skip_space();
    JsonValue value = read_value(0);
    skip_space();
    if (position_ != text_.size()) fail("text after the value");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error("offset " + std::to_string(position_) + ": " + why);
  }
  [[nodiscard]] bool at_end() const { return position_ >= text_.size(); }
  [[nodiscard]] char peek() const { return at_end() ? '\0' : text_[position_]; }
  char take() {
    if (at_end()) fail("unexpected end");
    return text_[position_++];
  }
  void expect(char wanted) {
    if (take() != wanted) fail(std::string("expected '") + wanted + "'");
  }
  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++position_;
    }
  }
  void literal(std::string_view word) {
    if (text_.substr(position_, word.size()) != word) fail("bad literal");
    position_ += word.size();
  }

  JsonValue read_value(int depth) {
    if (depth > 64) fail("nested too deeply");
    JsonValue value;
    switch (peek()) {
      case '{':
        read_object(value, depth);
        break;
      case '[':
        read_array(value, depth);
        break;
      case '"':
        value.kind = JsonValue::Kind::string;
        value.text = read_string();
        break;
      case 't':
        literal("true");
        value.kind = JsonValue::Kind::boolean;
        value.boolean = true;
        break;
      case 'f':
        literal("false");
        value.kind = JsonValue::Kind::boolean;
        break;
      case 'n':
        literal("null");
        break;
      default:
        value.kind = JsonValue::Kind::number;
        value.number = read_number();
    }
    return value;
  }

  void read_object(JsonValue& value, int depth) {
    value.kind = JsonValue::Kind::object;
    expect('{');
    skip_space();
    if (peek() == '}') {
      ++position_;
      return;
    }
    for (;;) {
      skip_space();
      if (peek() != '"') fail("expected a member name");
      std::string name = read_string();
      skip_space();
      expect(':');
      skip_space();
      value.members.push_back(JsonMember{std::move(name), read_value(depth + 1)});
      skip_space();
      if (peek() == ',') {
        ++position_;
        continue;
      }
      expect('}');
      return;
    }
  }

  void read_array(JsonValue& value, int depth) {
    value.kind = JsonValue::Kind::array;
    expect('[');
    skip_space();
    if (peek() == ']') {
      ++position_;
      return;
    }
    for (;;) {
      skip_space();
      value.items.push_back(read_value(depth + 1));
      skip_space();
      if (peek() == ',') {
        ++position_;
        continue;
      }
      expect(']');
      return;
    }
  }

  std::string read_number() {
    const std::size_t start = position_;
    const auto digits = [&] {
      const std::size_t first = position_;
      while (!at_end() && peek() >= '0' && peek() <= '9') ++position_;
      if (position_ == first) fail("expected a digit");
    };
    if (peek() == '-') ++position_;
    if (peek() == '0') {
      ++position_;
    } else {
      digits();
    }
    if (peek() == '.') {
      ++position_;
      digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      ++position_;
      if (peek() == '+' || peek() == '-') ++position_;
      digits();
    }
    return std::string(text_.substr(start, position_ - start));
  }

  unsigned hex4() {
    unsigned value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = take();
      value <<= 4U;
      if (c >= '0' && c <= '9') {
        value |= static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        value |= static_cast<unsigned>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        value |= static_cast<unsigned>(c - 'A' + 10);
      } else {
        fail("bad \\u escape");
      }
    }
    return value;
  }

  static void append_utf8(std::string& out, unsigned code_point) {
    const auto byte = [](unsigned value) { return static_cast<char>(value); };
    if (code_point < 0x80) {
      out += byte(code_point);
    } else if (code_point < 0x800) {
      out += byte(0xC0U | (code_point >> 6U));
      out += byte(0x80U | (code_point & 0x3FU));
    } else if (code_point < 0x10000) {
      out += byte(0xE0U | (code_point >> 12U));
      out += byte(0x80U | ((code_point >> 6U) & 0x3FU));
      out += byte(0x80U | (code_point & 0x3FU));
    } else {
      out += byte(0xF0U | (code_point >> 18U));
      out += byte(0x80U | ((code_point >> 12U) & 0x3FU));
      out += byte(0x80U | ((code_point >> 6U) & 0x3FU));
      out += byte(0x80U | (code_point & 0x3FU));
    }
  }

  // Copies one well-formed UTF-8 sequence; fails on anything else.
  void copy_utf8(std::string& out) {
    const auto lead = static_cast<unsigned char>(take());
    std::size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 1;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 2;
      if (lead == 0xE0) low = 0xA0;
      if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 3;
      if (lead == 0xF0) low = 0x90;
      if (lead == 0xF4) high = 0x8F;
    } else {
      fail("invalid UTF-8");
    }
    out += static_cast<char>(lead);
    for (std::size_t i = 0; i < length; ++i) {
      const auto next = static_cast<unsigned char>(take());
      if (next < (i == 0 ? low : 0x80) || next > (i == 0 ? high : 0xBF)) fail("invalid UTF-8");
      out += static_cast<char>(next);
    }
  }

  std::string read_string() {
    expect('"');
    std::string out;
    for (;;) {
      const auto c = static_cast<unsigned char>(peek());
      if (at_end()) fail("unterminated string");
      if (c == '"') {
        ++position_;
        return out;
      }
      if (c < 0x20) fail("raw control character in a string");
      if (c >= 0x80) {
        copy_utf8(out);
        continue;
      }
      ++position_;
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      const char escape = take();
      switch (escape) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned code_point = hex4();
          if (code_point >= 0xD800 && code_point <= 0xDBFF) {
            expect('\\');
            expect('u');
            const unsigned low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("unpaired surrogate");
            code_point = 0x10000 + ((code_point - 0xD800) << 10U) + (low - 0xDC00);
          } else if (code_point >= 0xDC00 && code_point <= 0xDFFF) {
            fail("unpaired surrogate");
          }
          append_utf8(out, code_point);
          break;
        }
        default:
          fail("bad escape");
      }
    }
  }

  std::string_view text_;
  std::size_t position_ = 0;
};

}  // namespace

const JsonValue* JsonValue::find(std::string_view name) const {
  for (const JsonMember& member : members) {
    if (member.name == name) return &member.value;
  }
  return nullptr;
}

const JsonValue& JsonValue::operator[](std::string_view name) const {
  static const JsonValue kNull;
  const JsonValue* found = find(name);
  return found != nullptr ? *found : kNull;
}

std::optional<std::int64_t> JsonValue::integer() const {
  if (kind != Kind::number || number.find_first_of(".eE") != std::string::npos) {
    return std::nullopt;
  }
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (error != std::errc() || end != number.data() + number.size()) return std::nullopt;
  return value;
}

JsonParse parse_json(std::string_view text) {
  try {
    return JsonParse{Reader(text).document(), ""};
  } catch (const std::exception& error) {
    return JsonParse{std::nullopt, error.what()};
  }
}

}  // namespace redlock::test
