#include "protocol/random_value.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace redlock::detail {

void fill_random(std::uint8_t* out, std::size_t size) noexcept {
  std::size_t filled = 0;
  while (filled < size) {
    const ssize_t got = getrandom(out + filled, size - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      std::fputs("redlock: getrandom failed; refusing to make a guessable lock value\n", stderr);
      std::abort();
    }
    filled += static_cast<std::size_t>(got);
  }
}

std::string to_hex(const std::uint8_t* bytes, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(size * 2, '0');
  for (std::size_t i = 0; i < size; ++i) {
    hex[2 * i] = kDigits[bytes[i] >> 4];
    hex[2 * i + 1] = kDigits[bytes[i] & 0x0f];
  }
  return hex;
}

}  // namespace redlock::detail
