#include "transport/script.hpp"

#include <charconv>

namespace redlock::detail {

TailBulk next_tail_bulk(std::string_view tail, std::size_t& offset) noexcept {
  const std::size_t crlf = tail.find("\r\n", offset);
  std::size_t length = 0;
  (void)std::from_chars(tail.data() + offset + 1, tail.data() + crlf, length);
  const std::size_t start = crlf + 2;
  const TailBulk bulk{tail.substr(offset, start + length + 2 - offset), tail.substr(start, length)};
  offset = start + length + 2;
  return bulk;
}

}  // namespace redlock::detail
