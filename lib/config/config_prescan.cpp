#include "config/config_prescan.hpp"

#include <vector>

namespace redlock::detail {
namespace {

bool is_bare_key_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool is_non_ascii(char c) noexcept { return (static_cast<unsigned char>(c) & 0x80U) != 0; }

class Prescan {
 public:
  explicit Prescan(std::string_view text) : text_(text) {
    // toml++ skips a UTF-8 byte order mark; so does this.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") position_ = 3;
  }

  std::optional<PrescanProblem> run() {
    while (!problem_ && position_ < text_.size()) step();
    return problem_;
  }

 private:
  enum class Expect { key, value, after_value };
  enum class Kind { array, inline_table };
  // An array's elements are one level below the array; an inline table is
  // the level of the key it is the value of, and its keys one below that.
  struct Frame {
    Kind kind;
    std::size_t depth;  // an array's elements', an inline table's own
  };

  [[nodiscard]] char peek(std::size_t ahead = 0) const noexcept {
    return position_ + ahead < text_.size() ? text_[position_ + ahead] : '\0';
  }
  [[nodiscard]] bool at_end() const noexcept { return position_ >= text_.size(); }

  void advance() {
    const char c = text_[position_++];
    if (c == '\n') {
      ++line_;
      column_ = 1;
    } else if ((static_cast<unsigned char>(c) & 0xC0U) != 0x80U) {
      ++column_;  // continuation bytes belong to the character before them
    }
  }

  void fail(std::string message) {
    if (!problem_) problem_ = PrescanProblem{line_, column_, std::move(message)};
  }

  bool check_depth(std::size_t depth) {
    if (depth <= kMaxTomlDepth) return true;
    fail("nested deeper than " + std::to_string(kMaxTomlDepth) +
         " levels (table headers, dotted keys, arrays and inline tables count one each)");
    return false;
  }

  [[nodiscard]] std::size_t context_depth() const noexcept {
    return frames_.empty() ? table_depth_ : frames_.back().depth;
  }

  void skip_comment() {
    while (!at_end() && peek() != '\n') advance();
  }

  // A string starting at the quote; multi-line forms included. An
  // unterminated one ends at the end of its line (single-line) or of the
  // text, and toml++ reports it.
  void skip_string() {
    const char quote = peek();
    const bool basic = quote == '"';
    if (peek(1) == quote && peek(2) == quote) {
      for (int i = 0; i < 3; ++i) advance();
      while (!at_end()) {
        if (basic && peek() == '\\') {
          advance();
          if (!at_end()) advance();
          continue;
        }
        if (peek() == quote && peek(1) == quote && peek(2) == quote) {
          for (int i = 0; i < 3; ++i) advance();
          // Up to two quotes may stand just before the closing three.
          for (int i = 0; i < 2 && peek() == quote; ++i) advance();
          return;
        }
        advance();
      }
      return;
    }
    advance();
    while (!at_end() && peek() != '\n') {
      if (basic && peek() == '\\') {
        advance();
        if (!at_end() && peek() != '\n') advance();
        continue;
      }
      if (peek() == quote) {
        advance();
        return;
      }
      advance();
    }
  }

  void skip_blanks() {
    while (peek() == ' ' || peek() == '\t') advance();
  }

  // A key, dotted or not, whose first segment is at depth `base` + 1; how
  // many segments it has (0 when none starts here). The error for one
  // segment too many points at that segment.
  std::size_t key_segments(std::size_t base) {
    std::size_t segments = 0;
    for (;;) {
      skip_blanks();
      const char c = peek();
      if ((c == '"' || c == '\'' || is_bare_key_char(c)) && !check_depth(base + segments + 1)) {
        return segments;
      }
      if (c == '"' || c == '\'') {
        skip_string();
      } else if (is_bare_key_char(c)) {
        while (is_bare_key_char(peek())) advance();
        if (is_non_ascii(peek())) {
          fail(
              "a bare key may hold only ASCII letters, digits, '_' and '-': quote a key with "
              "other characters (\"...\")");
          return segments;
        }
      } else if (is_non_ascii(c)) {
        fail(
            "a bare key may hold only ASCII letters, digits, '_' and '-': quote a key with "
            "other characters (\"...\")");
        return segments;
      } else {
        return segments;
      }
      ++segments;
      skip_blanks();
      if (peek() != '.') return segments;
      advance();
    }
  }

  void table_header() {
    advance();  // '['
    if (peek() == '[') advance();
    const std::size_t segments = key_segments(0);
    if (problem_) return;
    table_depth_ = segments;
    expect_ = Expect::after_value;
  }

  void key_value() {
    const std::size_t start = position_;
    const std::size_t segments = key_segments(context_depth());
    if (problem_) return;
    value_depth_ = context_depth() + segments;
    skip_blanks();
    if (peek() == '=') advance();
    expect_ = Expect::value;
    if (position_ == start && !at_end()) advance();  // no key here: toml++ will say why
  }

  void open(Kind kind) {
    const std::size_t depth = kind == Kind::array ? value_depth_ + 1 : value_depth_;
    if (!check_depth(depth)) return;
    advance();
    frames_.push_back(Frame{kind, depth});
    value_depth_ = depth;
    expect_ = kind == Kind::array ? Expect::value : Expect::key;
  }

  void close() {
    advance();
    if (!frames_.empty()) frames_.pop_back();
    expect_ = Expect::after_value;
  }

  // After ',': the next array element, or the next key of an inline table.
  void separator() {
    advance();
    if (frames_.empty()) return;
    if (frames_.back().kind == Kind::array) {
      value_depth_ = frames_.back().depth;
      expect_ = Expect::value;
    } else {
      expect_ = Expect::key;
    }
  }

  void step() {
    const char c = peek();
    switch (c) {
      case ' ':
      case '\t':
      case '\r':
        advance();
        return;
      case '\n':
        advance();
        if (frames_.empty()) expect_ = Expect::key;
        return;
      case '#':
        skip_comment();
        return;
      default:
        break;
    }
    if (is_non_ascii(c) && expect_ != Expect::key) {
      fail("a character outside ASCII may appear only in a string or a comment");
      return;
    }
    switch (expect_) {
      case Expect::key:
        if (c == '[' && frames_.empty()) return table_header();
        if (c == '}' && !frames_.empty()) return close();
        return key_value();
      case Expect::value:
        if (c == '"' || c == '\'') {
          skip_string();
          expect_ = Expect::after_value;
          return;
        }
        if (c == '[') return open(Kind::array);
        if (c == '{') return open(Kind::inline_table);
        if (c == ']' || c == '}') return close();
        if (c == ',') return separator();
        advance();  // a number, date, boolean or worse: toml++ reads it
        return;
      case Expect::after_value:
        if (c == ',') return separator();
        if (c == ']' || c == '}') return close();
        advance();
        return;
    }
  }

  std::string_view text_;
  std::size_t position_ = 0;
  std::uint32_t line_ = 1;
  std::uint32_t column_ = 1;
  Expect expect_ = Expect::key;
  std::vector<Frame> frames_;
  std::size_t table_depth_ = 0;  // segments of the last [table] header
  std::size_t value_depth_ = 0;  // depth of the value being read
  std::optional<PrescanProblem> problem_;
};

}  // namespace

std::optional<PrescanProblem> prescan_toml(std::string_view text) { return Prescan(text).run(); }

}  // namespace redlock::detail
