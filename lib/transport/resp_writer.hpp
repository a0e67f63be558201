// Encodes commands in RESP (arrays of bulk strings), appending to a buffer
// so that many commands for one node share one write. hiredis's
// redisFormatCommandArgv does the same with one malloc per command; this
// appends in place.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace redlock::detail {

// Appends "*<n>\r\n" — the header of an array of n bulk strings.
void append_array_header(std::string& out, std::size_t count);
// Appends "$<len>\r\n<bytes>\r\n".
void append_bulk(std::string& out, std::string_view bytes);
// A number as decimal text, for a command's argument.
[[nodiscard]] std::string number_text(long long value);
// Appends a whole command.
void append_command(std::string& out, std::initializer_list<std::string_view> args);
void append_command(std::string& out, std::span<const std::string_view> args);

}  // namespace redlock::detail
