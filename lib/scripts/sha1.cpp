#include "scripts/sha1.hpp"

#include <openssl/evp.h>

#include <array>

namespace redlock::detail {

std::string sha1_hex(std::string_view data) {
  // OpenSSL's digest, the one the TLS transport links anyway.
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  std::string hex;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha1(), nullptr) != 1) {
    return hex;  // only out of memory; an empty name makes EVALSHA fall back to EVAL
  }
  constexpr char kDigits[] = "0123456789abcdef";
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kDigits[digest[i] >> 4]);
    hex.push_back(kDigits[digest[i] & 0x0f]);
  }
  return hex;
}

}  // namespace redlock::detail
