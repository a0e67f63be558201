// Lock values from the OS CSPRNG.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace redlock::detail {

// Fills `out` from getrandom(2); retries on EINTR and short reads. Aborts the
// process if the kernel cannot supply randomness, since a predictable lock
// value would let another client release our lock.
void fill_random(std::uint8_t* out, std::size_t size) noexcept;

// Lower-case hex of `size` bytes.
[[nodiscard]] std::string to_hex(const std::uint8_t* bytes, std::size_t size);

}  // namespace redlock::detail
