#include "protocol/same_server.hpp"

#include <unordered_map>

namespace redlock::detail {

std::vector<std::optional<std::size_t>> earlier_same_server(
    const std::vector<std::string_view>& run_ids) {
  std::vector<std::optional<std::size_t>> same(run_ids.size());
  std::unordered_map<std::string_view, std::size_t> first_with;
  for (std::size_t i = 0; i < run_ids.size(); ++i) {
    if (run_ids[i].empty()) continue;
    const auto [entry, inserted] = first_with.emplace(run_ids[i], i);
    if (!inserted) same[i] = entry->second;
  }
  return same;
}

}  // namespace redlock::detail
