#include "redlock/election.hpp"

#include <algorithm>
#include <utility>

namespace redlock {

namespace {
// LockValue::random(): 16 random bytes in hex.
constexpr std::size_t kRandomHexDigits = 32;
}  // namespace

std::optional<std::string_view> payload_of(std::string_view value) {
  if (value.size() <= kRandomHexDigits || value[kRandomHexDigits] != ':') return std::nullopt;
  const std::string_view random = value.substr(0, kRandomHexDigits);
  const bool hex = std::all_of(random.begin(), random.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
  if (!hex) return std::nullopt;
  return value.substr(kRandomHexDigits + 1);
}

LeaderResult leader_of(Inspection inspection) {
  LeaderResult result;
  result.error = inspection.error;
  result.nodes = std::move(inspection.nodes);
  if (!inspection.error && inspection.holder) {
    LeaderView view;
    view.term = inspection.holder->fence;
    view.payload = inspection.holder->payload.value_or("");
    view.validity = inspection.holder->validity;
    result.leader = std::move(view);
  }
  return result;
}

}  // namespace redlock
