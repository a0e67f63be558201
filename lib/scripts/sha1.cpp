#include "scripts/sha1.hpp"

#include <nettle/sha1.h>

#include <array>

#include "protocol/random_value.hpp"

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
  return to_hex(digest.data(), digest.size());
}

}  // namespace redlock::detail
