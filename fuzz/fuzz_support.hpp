// What the fuzz targets share (docs/testing.md, "Fuzzing"): the input bound,
// the password masking of the readers' secrecy checks, and a check that
// aborts, so that a broken property is a crash libFuzzer keeps.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace redlock::fuzz {

// No input surface of the project is meant for more than this; longer inputs
// only slow the run down. Each target returns early past it (and
// scripts/fuzz-smoke passes -max_len as well).
inline constexpr std::size_t kMaxInputBytes = 64 * 1024;

[[nodiscard]] inline std::string_view as_text(const std::uint8_t* data, std::size_t size) noexcept {
  return {reinterpret_cast<const char*>(data), size};
}

// REDLOCK_FUZZ_SHOW=1 in the environment: each target prints what the
// reader made of an input (run it on one file to see why it is interesting).
[[nodiscard]] inline bool showing() noexcept {
  static const bool show = std::getenv("REDLOCK_FUZZ_SHOW") != nullptr;
  return show;
}

// Whether `c` may stand in a password without a %XX escape and without
// meaning anything to TOML inside a string.
[[nodiscard]] inline bool plain_password_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("-._~!$&()*+,;=").find(c) != std::string_view::npos;
}

// Whether the text at `at` is the first character of a string value: a
// quote just before it, and before that '=' (blanks aside).
[[nodiscard]] inline bool opens_string_value(std::string_view text, std::size_t at) noexcept {
  if (at == 0 || (text[at - 1] != '"' && text[at - 1] != '\'')) return false;
  const std::size_t before = text.find_last_not_of(" \t", at - 2);
  return at >= 2 && before != std::string_view::npos && text[before] == '=';
}

// `text` with the password of every redis:// address replaced by as many
// 'x' (where it is written in plain characters), or nullopt when there is
// none. Within an address the password is what lies between the first ':'
// after "redis://" and the last '@', as the address reader takes it.
// `in_strings`: only addresses that open a TOML string value count (`= "`
// just before "redis://"), and each ends at a quote or the end of its line.
// The readers' verdict must not depend on what a password says, so their
// messages can never quote one (docs/configuration.md, "Secrets").
[[nodiscard]] inline std::optional<std::string> with_passwords_masked(std::string_view text,
                                                                      bool in_strings) {
  constexpr std::string_view kScheme = "redis://";
  std::string masked(text);
  bool any = false;
  for (std::size_t start = text.find(kScheme); start != std::string_view::npos;
       start = text.find(kScheme, start + 1)) {
    if (in_strings && !opens_string_value(text, start)) continue;
    const std::size_t body = start + kScheme.size();
    const std::size_t end =
        in_strings ? std::min(text.size(), text.find_first_of("\"'\n", body)) : text.size();
    const std::string_view address = text.substr(body, end - body);
    const std::size_t at = address.rfind('@');
    const std::size_t colon = address.find(':');
    if (at == std::string_view::npos || colon == std::string_view::npos || colon + 1 >= at) {
      continue;
    }
    const std::string_view password = address.substr(colon + 1, at - colon - 1);
    if (!std::all_of(password.begin(), password.end(), plain_password_char)) continue;
    masked.replace(body + colon + 1, password.size(), password.size(), 'x');
    any = any || password.find_first_not_of('x') != std::string_view::npos;
  }
  if (!any) return std::nullopt;
  return masked;
}

}  // namespace redlock::fuzz

// Aborts with the failed condition: a property that does not hold is a
// finding, like a sanitizer report.
#define REDLOCK_FUZZ_CHECK(condition)                                                    \
  do {                                                                                   \
    if (!(condition)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (false)
