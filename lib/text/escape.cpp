#include "text/escape.hpp"

#include <array>
#include <cstdio>

#include "text/utf8.hpp"

namespace redlock::detail {
namespace {

void append_byte_escape(std::string& out, unsigned char byte) {
  std::array<char, 5> escaped{};
  std::snprintf(escaped.data(), escaped.size(), "\\x%02x", static_cast<unsigned>(byte));
  out += escaped.data();
}

// Well-formed multi-byte sequences that still act on a terminal or on the
// order in which a reader sees the line.
bool is_invisible_control(std::string_view sequence) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(sequence[i]); };
  if (sequence.size() == 2) return byte(0) == 0xC2 && byte(1) <= 0x9F;  // U+0080..U+009F
  if (sequence.size() != 3 || byte(0) != 0xE2) return false;
  // U+2028, U+2029 (line / paragraph separator), U+202A..U+202E (embeddings
  // and overrides), U+2066..U+2069 (isolates).
  if (byte(1) == 0x80) return byte(2) >= 0xA8 && byte(2) <= 0xAE;
  if (byte(1) == 0x81) return byte(2) >= 0xA6 && byte(2) <= 0xA9;
  return false;
}

}  // namespace

std::string escape_text(std::string_view text, Quoting quoting) {
  const bool quoted = quoting == Quoting::double_quotes;
  std::string out;
  out.reserve(text.size() + (quoted ? 2 : 0));
  if (quoted) out += '"';
  std::size_t position = 0;
  while (position < text.size()) {
    const std::size_t length = utf8_sequence_length(text, position);
    if (length > 1) {
      const std::string_view sequence = text.substr(position, length);
      if (is_invisible_control(sequence)) {
        for (const char c : sequence) append_byte_escape(out, static_cast<unsigned char>(c));
      } else {
        out.append(sequence);
      }
      position += length;
      continue;
    }
    const auto byte = static_cast<unsigned char>(text[position++]);
    if (length == 0) {
      append_byte_escape(out, byte);
      continue;
    }
    switch (byte) {
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '"':
      case '\\':
        if (quoted) out += '\\';
        out += static_cast<char>(byte);
        continue;
      default:
        break;
    }
    if (byte < 0x20 || byte == 0x7F) {
      append_byte_escape(out, byte);
    } else {
      out += static_cast<char>(byte);
    }
  }
  if (quoted) out += '"';
  return out;
}

}  // namespace redlock::detail
