#include "protocol/slot_map.hpp"

#include <algorithm>
#include <charconv>

namespace redlock::detail {
namespace {

template <typename Number>
bool parse_number(std::string_view text, Number& out) {
  if (text.empty()) return false;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), out);
  return parsed.ec == std::errc{} && parsed.ptr == text.data() + text.size();
}

}  // namespace

std::optional<SlotMap> SlotMap::from_ranges(const std::vector<SlotRange>& ranges,
                                            std::string& error) {
  SlotMap map;
  for (const SlotRange& range : ranges) {
    const std::string span = std::to_string(range.first) + "-" + std::to_string(range.last);
    if (range.first > range.last || range.last >= kClusterSlots) {
      error = "slot range " + span + " is out of bounds";
      return std::nullopt;
    }
    if (range.master.host.empty() && range.master.port == 0) {
      error = "slot range " + span + " names no master";
      return std::nullopt;
    }
    const auto owner = static_cast<std::uint16_t>(map.index_of(range.master));
    for (std::uint32_t slot = range.first; slot <= range.last; ++slot) {
      if (map.owner_[slot] != kNone) {
        error = "slot " + std::to_string(slot) + " is served by two masters";
        return std::nullopt;
      }
      map.owner_[slot] = owner;
    }
  }
  return map;
}

const ShardEndpoint* SlotMap::master_of(std::uint16_t slot) const noexcept {
  if (slot >= kClusterSlots || owner_[slot] == kNone) return nullptr;
  return &masters_[owner_[slot]];
}

std::size_t SlotMap::covered() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(owner_.begin(), owner_.end(), [](std::uint16_t o) { return o != kNone; }));
}

std::optional<std::uint16_t> SlotMap::first_slot_of(std::string_view host,
                                                    std::uint16_t port) const noexcept {
  for (std::size_t slot = 0; slot < owner_.size(); ++slot) {
    const std::uint16_t owner = owner_[slot];
    if (owner != kNone && masters_[owner].host == host && masters_[owner].port == port) {
      return static_cast<std::uint16_t>(slot);
    }
  }
  return std::nullopt;
}

void SlotMap::move_slot(std::uint16_t slot, const ShardEndpoint& master) {
  if (slot >= kClusterSlots) return;
  owner_[slot] = static_cast<std::uint16_t>(index_of(master));
}

std::size_t SlotMap::index_of(const ShardEndpoint& master) {
  const auto found = std::find_if(masters_.begin(), masters_.end(),
                                  [&](const ShardEndpoint& m) { return m.same_server(master); });
  if (found != masters_.end()) {
    if (found->id.empty()) found->id = master.id;
    return static_cast<std::size_t>(found - masters_.begin());
  }
  masters_.push_back(master);
  return masters_.size() - 1;
}

std::optional<Redirect> parse_redirect(std::string_view error) {
  Redirect redirect;
  if (error.starts_with("MOVED ")) {
    redirect.kind = Redirect::Kind::moved;
    error.remove_prefix(6);
  } else if (error.starts_with("ASK ")) {
    redirect.kind = Redirect::Kind::ask;
    error.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const std::size_t space = error.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  if (!parse_number(error.substr(0, space), redirect.slot) || redirect.slot >= kClusterSlots) {
    return std::nullopt;
  }
  const std::string_view endpoint = error.substr(space + 1);
  // The last colon: an IPv6 host has colons of its own.
  const std::size_t colon = endpoint.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  if (!parse_number(endpoint.substr(colon + 1), redirect.port) || redirect.port == 0) {
    return std::nullopt;
  }
  std::string_view host = endpoint.substr(0, colon);
  if (host.find(' ') != std::string_view::npos) return std::nullopt;
  // "?": the server does not know the name it is reached by (a cluster
  // with cluster-preferred-endpoint-type unknown-endpoint), as empty.
  if (host != "?") redirect.host = std::string(host);
  return redirect;
}

}  // namespace redlock::detail
