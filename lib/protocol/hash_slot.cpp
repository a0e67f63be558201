#include "protocol/hash_slot.hpp"

#include <array>
#include <vector>

namespace redlock::detail {
namespace {

// One byte of CRC16/XMODEM at a time: the table for the 256 values of the
// byte shifted in, computed at compile time.
constexpr std::array<std::uint16_t, 256> make_table() {
  std::array<std::uint16_t, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    auto crc = static_cast<std::uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000U) != 0 ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021U)
                                 : static_cast<std::uint16_t>(crc << 1);
    }
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<std::uint16_t, 256> kTable = make_table();

}  // namespace

std::uint16_t crc16_xmodem(std::string_view bytes) noexcept {
  std::uint16_t crc = 0;
  for (const char c : bytes) {
    const auto index = static_cast<std::uint8_t>((crc >> 8) ^ static_cast<unsigned char>(c));
    crc = static_cast<std::uint16_t>((crc << 8) ^ kTable[index]);
  }
  return crc;
}

std::string_view hashed_part(std::string_view key) noexcept {
  const std::size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  const std::size_t close = key.find('}', open + 1);
  // No closing brace, or "{}": the whole key is hashed.
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

std::uint16_t hash_slot(std::string_view key) noexcept {
  return static_cast<std::uint16_t>(crc16_xmodem(hashed_part(key)) % kClusterSlots);
}

std::string_view slot_tag(std::uint16_t slot) {
  // Every slot has a tag of at most four characters from these 36 (the
  // unit test checks each), found in one pass over the texts by length.
  static const std::vector<std::string> tags = [] {
    constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::vector<std::string> found(kClusterSlots);
    std::size_t missing = kClusterSlots;
    std::string text;
    const auto offer = [&] {
      std::string& tag = found[hash_slot(text)];
      if (tag.empty()) {
        tag = text;
        --missing;
      }
    };
    for (std::size_t length = 1; length <= 4 && missing > 0; ++length) {
      text.assign(length, kAlphabet[0]);
      std::vector<std::size_t> digits(length, 0);
      for (;;) {
        offer();
        std::size_t i = length;
        while (i > 0 && ++digits[i - 1] == kAlphabet.size()) {
          digits[i - 1] = 0;
          text[i - 1] = kAlphabet[0];
          --i;
        }
        if (i == 0) break;
        text[i - 1] = kAlphabet[digits[i - 1]];
      }
    }
    return found;
  }();
  return tags[slot % kClusterSlots];
}

std::string key_in_slot(std::string_view key, std::uint16_t slot) {
  if (hash_slot(key) == slot) return std::string(key);
  if (key.find('{') != std::string_view::npos) return {};
  std::string placed(key);
  placed.append("{").append(slot_tag(slot)).append("}");
  return placed;
}

}  // namespace redlock::detail
