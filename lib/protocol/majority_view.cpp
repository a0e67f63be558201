#include "protocol/majority_view.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <string_view>

#include "redlock/election.hpp"

namespace redlock::detail {

std::optional<HolderView> majority_holder(const std::vector<KeyView>& answers, std::size_t quorum,
                                          Microseconds elapsed, Milliseconds drift) {
  std::map<std::string_view, std::size_t> counts;
  for (const KeyView& answer : answers) {
    if (answer.value) ++counts[*answer.value];
  }
  for (const auto& [value, count] : counts) {
    if (count < quorum) continue;
    HolderView holder;
    holder.value = std::string(value);
    std::int64_t smallest = -1;
    std::vector<KeyView> holding;
    for (const KeyView& answer : answers) {
      if (!answer.value || *answer.value != value) continue;
      holding.push_back(answer);
      const std::int64_t left = std::max<std::int64_t>(answer.pttl_ms, 0);
      smallest = smallest < 0 ? left : std::min(smallest, left);
    }
    const auto left = std::chrono::duration_cast<Microseconds>(Milliseconds(smallest)) - elapsed -
                      std::chrono::duration_cast<Microseconds>(drift);
    holder.validity = std::max(Milliseconds(0), std::chrono::floor<Milliseconds>(left));
    holder.fence = majority_fence(holding, quorum);
    if (const auto payload = payload_of(holder.value)) holder.payload = std::string(*payload);
    return holder;
  }
  return std::nullopt;
}

std::vector<HolderView> majority_readers(const std::vector<KeyView>& answers, std::size_t quorum,
                                         Microseconds elapsed, Milliseconds drift) {
  std::map<std::string_view, std::size_t> counts;
  for (const KeyView& answer : answers) {
    for (const KeyView::Reader& reader : answer.readers) ++counts[reader.value];
  }
  std::vector<HolderView> readers;
  for (const auto& [value, count] : counts) {
    if (count < quorum) continue;
    // Each reader as a holder of its own: the nodes that list it hold it,
    // with what is left of it there.
    std::vector<KeyView> as_holder;
    for (const KeyView& answer : answers) {
      KeyView view;
      view.fence = answer.fence;
      for (const KeyView::Reader& reader : answer.readers) {
        if (reader.value != value) continue;
        view.value = reader.value;
        view.pttl_ms = reader.pttl_ms;
      }
      as_holder.push_back(std::move(view));
    }
    if (auto holder = majority_holder(as_holder, quorum, elapsed, drift)) {
      readers.push_back(std::move(*holder));
    }
  }
  return readers;
}

std::uint64_t majority_fence(const std::vector<KeyView>& answers, std::size_t quorum) {
  if (quorum == 0 || answers.size() < quorum) return 0;
  std::vector<std::uint64_t> counters;
  counters.reserve(answers.size());
  for (const KeyView& answer : answers) counters.push_back(answer.fence);
  std::nth_element(counters.begin(), counters.begin() + static_cast<std::ptrdiff_t>(quorum - 1),
                   counters.end(), std::greater<>());
  return counters[quorum - 1];
}

}  // namespace redlock::detail
