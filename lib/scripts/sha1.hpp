// SHA-1, only to name Lua scripts for EVALSHA the way Redis does (not for
// security). Lets the client send EVALSHA before any SCRIPT LOAD reply.
#pragma once

#include <string>
#include <string_view>

namespace redlock::detail {

// Lower-case hex digest (40 characters).
[[nodiscard]] std::string sha1_hex(std::string_view data);

}  // namespace redlock::detail
