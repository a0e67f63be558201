#include "transport/resp_writer.hpp"

#include <charconv>

namespace redlock::detail {
namespace {

void append_prefixed_number(std::string& out, char prefix, std::size_t value) {
  char digits[24];
  digits[0] = prefix;
  auto [end, ec] = std::to_chars(digits + 1, digits + sizeof digits - 2, value);
  (void)ec;  // 20 digits always fit
  *end++ = '\r';
  *end++ = '\n';
  out.append(digits, end);
}

}  // namespace

void append_array_header(std::string& out, std::size_t count) {
  append_prefixed_number(out, '*', count);
}

void append_bulk(std::string& out, std::string_view bytes) {
  append_prefixed_number(out, '$', bytes.size());
  out.append(bytes);
  out.append("\r\n", 2);
}

std::string number_text(long long value) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  (void)ec;  // 20 digits and a sign always fit
  return std::string(digits, end);
}

void append_command(std::string& out, std::initializer_list<std::string_view> args) {
  append_command(out, std::span<const std::string_view>(args.begin(), args.size()));
}

void append_command(std::string& out, std::span<const std::string_view> args) {
  append_array_header(out, args.size());
  for (std::string_view arg : args) append_bulk(out, arg);
}

}  // namespace redlock::detail
