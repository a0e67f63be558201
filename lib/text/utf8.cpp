#include "text/utf8.hpp"

namespace redlock::detail {

std::size_t utf8_sequence_length(std::string_view text, std::size_t position) noexcept {
  const auto byte_at = [&](std::size_t index) { return static_cast<unsigned char>(text[index]); };
  const unsigned char lead = byte_at(position);
  if (lead < 0x80) return 1;
  // The ranges of the second byte come from the Unicode standard's table of
  // well-formed sequences (Table 3-7); they exclude overlong forms,
  // surrogates and code points past U+10FFFF.
  std::size_t length = 0;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;
    if (lead == 0xED) second_max = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;
    if (lead == 0xF4) second_max = 0x8F;
  } else {
    return 0;
  }
  if (text.size() - position < length) return 0;
  const unsigned char second = byte_at(position + 1);
  if (second < second_min || second > second_max) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    const unsigned char continuation = byte_at(position + i);
    if (continuation < 0x80 || continuation > 0xBF) return 0;
  }
  return length;
}

}  // namespace redlock::detail
