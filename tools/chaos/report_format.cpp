// How the report prints numbers: fixed and compact decimals, durations for
// people, milliseconds since the run for data attributes, and SVG
// coordinates.
#include <array>
#include <charconv>
#include <system_error>

#include "report_internal.hpp"

namespace redlock::chaos::report_internal {

std::string fixed(double value, int decimals) {
  std::array<char, 48> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                    std::chars_format::fixed, decimals);
  if (result.ec != std::errc{}) return "0";
  return {buffer.data(), result.ptr};
}

// Without trailing zeros: a page with 10 000 elements repeats these a lot.
std::string compact(double value, int decimals) {
  std::string text = fixed(value, decimals);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  return text;
}

double to_ms(std::int64_t ns) { return static_cast<double>(ns) / static_cast<double>(kNsPerMs); }

// For people: "850.0 ms", "12.345 s".
std::string format_duration(std::int64_t ns) {
  if (ns >= kNsPerSecond || ns <= -kNsPerSecond) {
    return fixed(static_cast<double>(ns) / static_cast<double>(kNsPerSecond), 3) + " s";
  }
  return fixed(to_ms(ns), 1) + " ms";
}

std::string px(double value) { return compact(value, 1); }

}  // namespace redlock::chaos::report_internal
