// A look at the quorum file's text before toml++ parses it, for what the
// parser cannot be trusted with (docs/configuration.md, "Limits"):
//   * nesting deeper than kMaxTomlDepth levels, counting every table-header
//     and dotted-key segment and every array and inline table: toml++ 3.3.0
//     recurses once per level of a dotted key or header, so
//     "[a.a.a...]" with 40 000 segments overflows the stack;
//   * a byte outside ASCII where TOML allows only ASCII (a bare key, or
//     anywhere outside strings and comments): toml++ 3.3.0 looks such
//     characters up in Unicode tables that end in undefined behaviour.
// A tiny lexer, aware of strings and comments, enough to tell keys from
// values; every other syntax error is left to toml++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace redlock::detail {

// Levels of nesting the quorum file may use. Its schema needs three
// ([[node]] of the root, a key in it); the rest is room for inline forms.
inline constexpr std::size_t kMaxTomlDepth = 32;

struct PrescanProblem {
  std::uint32_t line = 0;    // 1-based
  std::uint32_t column = 0;  // 1-based, in characters
  std::string message;
};

// The first problem in `text`, or nullopt when toml++ may parse it.
[[nodiscard]] std::optional<PrescanProblem> prescan_toml(std::string_view text);

}  // namespace redlock::detail
