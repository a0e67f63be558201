#include "redlock/types.hpp"

#include <array>

#include "protocol/random_value.hpp"

namespace redlock {

LockValue LockValue::random() {
  std::array<std::uint8_t, 16> bytes{};
  detail::fill_random(bytes.data(), bytes.size());
  return LockValue(detail::to_hex(bytes.data(), bytes.size()));
}

}  // namespace redlock
