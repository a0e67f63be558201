// Text that came from outside the program — a node's error reply, a key or
// name from the quorum file, a path, a command-line argument — made safe to
// write on one line of a terminal or a log. Every place that shows such text
// goes through here, the library's error texts (NodeOutcome::detail,
// NodeHealth::last_error, ConfigError) as well as the CLI's output
// (docs/cli.md, "Exit codes"), so that a node or a file cannot forge lines
// ("\nredlock: acquire: node ...: granted") or send terminal escapes.
//
// Escaped: C0 control characters (\n, \r, \t, else \xNN), DEL, the C1
// controls U+0080..U+009F (some terminals act on them as on ESC), the
// Unicode line and paragraph separators and the bidirectional overrides
// and isolates (they reorder what a reader sees), and every byte that is
// not part of well-formed UTF-8 (\xNN). Other text, non-ASCII included, is
// kept as it is.
#pragma once

#include <string>
#include <string_view>

namespace redlock::detail {

enum class Quoting {
  // As it stands: a backslash is kept, so escaping escaped text again
  // changes nothing.
  none,
  // In double quotes, with '"' and '\' escaped too, so that the quoted text
  // can be told apart from what surrounds it.
  double_quotes,
};

[[nodiscard]] std::string escape_text(std::string_view text, Quoting quoting = Quoting::none);

}  // namespace redlock::detail
