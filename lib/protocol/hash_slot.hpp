// Which hash slot of a Redis Cluster a key lives in (docs/algorithm.md,
// "A cluster as a member"): CRC16 (XMODEM: polynomial 0x1021, initial 0)
// of the key, or of its hash tag, modulo 16384. The hash tag is the text
// between the first '{' and the first '}' after it, when that text is not
// empty; keys that share a tag share a slot, which is what lets one script
// touch several keys on a cluster. Pure logic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace redlock::detail {

inline constexpr std::uint16_t kClusterSlots = 16384;

// CRC16/XMODEM of `bytes`.
[[nodiscard]] std::uint16_t crc16_xmodem(std::string_view bytes) noexcept;

// The part of `key` that is hashed: its hash tag, or the whole key.
[[nodiscard]] std::string_view hashed_part(std::string_view key) noexcept;

// The slot of `key`, in [0, kClusterSlots).
[[nodiscard]] std::uint16_t hash_slot(std::string_view key) noexcept;

// A short text whose slot is `slot` (its hash tag is itself): "{<tag>}"
// appended to a key without braces puts that key in `slot`. The shortest
// such text of lowercase letters and digits, the first in length-then-
// alphabetical order; computed once for every slot, on first use.
[[nodiscard]] std::string_view slot_tag(std::uint16_t slot);

// `key` placed in `slot`: the key itself when it is there already, else
// the key with "{<slot_tag(slot)>}" appended when it has no '{' (which
// would make a tag of its own); empty when it cannot be placed (the
// key's own braces decide its slot, and it is another).
[[nodiscard]] std::string key_in_slot(std::string_view key, std::uint16_t slot);

}  // namespace redlock::detail
