#include "protocol/same_server.hpp"

#include <unordered_map>
#include <utility>

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

namespace {

// The first non-empty id in both lists, or empty.
std::string first_shared(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const std::string& id : a) {
    if (id.empty()) continue;
    for (const std::string& other : b) {
      if (other == id) return id;
    }
  }
  return {};
}

}  // namespace

std::vector<SharedMembers> members_not_independent(const std::vector<MemberServers>& members) {
  std::vector<SharedMembers> found;
  for (std::size_t i = 0; i < members.size(); ++i) {
    for (std::size_t j = i + 1; j < members.size(); ++j) {
      if (!members[i].cluster && !members[j].cluster) continue;
      if (std::string id = first_shared(members[i].node_ids, members[j].node_ids); !id.empty()) {
        found.push_back({i, j, true, std::move(id)});
      } else if (std::string run = first_shared(members[i].run_ids, members[j].run_ids);
                 !run.empty()) {
        found.push_back({i, j, false, std::move(run)});
      }
    }
  }
  return found;
}

std::string not_independent_text(const SharedMembers& pair, std::string_view other) {
  return std::string(pair.same_cluster ? "not independent: one Redis Cluster with "
                                       : "not independent: shares a server with ") +
         std::string(other);
}

}  // namespace redlock::detail
