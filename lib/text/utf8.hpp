// UTF-8 validation for the escaping of untrusted text (escape.hpp): it keeps
// valid text as it is and must not pass on bytes that are not UTF-8.
#pragma once

#include <cstddef>
#include <string_view>

namespace redlock::detail {

// The length (1-4) of the well-formed UTF-8 sequence that starts at
// text[position], or 0 when the bytes there are not one: a stray
// continuation byte, a truncated sequence, an overlong form, a UTF-16
// surrogate (U+D800..U+DFFF) or a code point above U+10FFFF.
[[nodiscard]] std::size_t utf8_sequence_length(std::string_view text,
                                               std::size_t position) noexcept;

}  // namespace redlock::detail
