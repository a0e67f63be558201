#include "scripts/sha1.hpp"

#include <nettle/sha1.h>

#include <array>

namespace redlock::detail {

std::string sha1_hex(std::string_view data) {
  // Nettle's digest: plain code on a caller-owned context. OpenSSL 3's EVP
  // digest would load its providers first, 2.4 MiB of resident memory for a
  // client that may never speak TLS (docs/performance.md, "Peak memory").
  sha1_ctx context{};
  sha1_init(&context);
  sha1_update(&context, data.size(), reinterpret_cast<const std::uint8_t*>(data.data()));
  std::array<std::uint8_t, SHA1_DIGEST_SIZE> digest{};
  sha1_digest(&context, digest.size(), digest.data());
  constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * digest.size());
  for (const std::uint8_t byte : digest) {
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 0x0f]);
  }
  return hex;
}

}  // namespace redlock::detail
