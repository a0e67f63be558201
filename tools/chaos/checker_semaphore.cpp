// The invariant on a semaphore as a whole, C13: at no moment do more
// holders have their claimed windows open than the semaphore has permits,
// and every permit held is one of its count. (That no permit is held twice
// at once is C3 on the permit's key.)
#include <set>

#include "checker_internal.hpp"

namespace redlock::chaos::checker_internal {
namespace {

std::string semaphore_of(const Event& acquired) {
  return acquired.resources.empty() ? std::string() : acquired.resources[0];
}

std::string holder_text(const Context& context, const Holding& holding) {
  const auto window = holding.window();
  return holding.describe() + " permit " + std::to_string(*holding.ok().permit) + " [" +
         context.at(window.first) + ", " + context.at(window.second) + "]";
}

// One semaphore's holdings, in the order of their acquire ok.
void check_one(const Context& context, const std::string& name,
               const std::vector<const Holding*>& holdings, InvariantCheck& check) {
  // The count the holders were granted under (the library refuses a
  // second count while a permit is held); 0: not recorded.
  std::int64_t permits = 0;
  for (const Holding* holding : holdings) {
    const Event& ok = holding->ok();
    if (ok.permits > 0 && (permits == 0 || ok.permits < permits)) permits = ok.permits;
    if (ok.permits > 0 && *ok.permit >= ok.permits) {
      check.violation(ok, holding->describe() + " holds permit " + std::to_string(*ok.permit) +
                              " of semaphore \"" + name + "\", which has " +
                              std::to_string(ok.permits) + " permits");
    }
  }
  if (permits == 0) return;
  // A sweep over window starts and ends; at equal times ends come first
  // (touching windows do not overlap, as in C3).
  struct Edge {
    std::int64_t t;
    bool start;
    const Holding* holding;
  };
  std::vector<Edge> edges;
  for (const Holding* holding : holdings) {
    const auto window = holding->window();
    if (window.second <= window.first) continue;
    edges.push_back(Edge{window.first, true, holding});
    edges.push_back(Edge{window.second, false, holding});
  }
  std::stable_sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    return a.t != b.t ? a.t < b.t : (!a.start && b.start);
  });
  std::vector<const Holding*> open;
  for (const Edge& edge : edges) {
    if (!edge.start) {
      open.erase(std::find(open.begin(), open.end(), edge.holding));
      continue;
    }
    open.push_back(edge.holding);
    if (static_cast<std::int64_t>(open.size()) <= permits) continue;
    std::string others;
    for (const Holding* holder : open) {
      if (holder == edge.holding) continue;
      others += (others.empty() ? "" : ", ") + holder_text(context, *holder);
    }
    check.violation(edge.holding->ok(), holder_text(context, *edge.holding) + " is holder #" +
                                            std::to_string(open.size()) + " of semaphore \"" +
                                            name + "\" (" + std::to_string(permits) +
                                            " permits) at " + context.at(edge.t) + ", with " +
                                            others);
  }
}

}  // namespace

// C13: at most `permits` holders of one semaphore at any moment.
Verdict check_semaphore_capacity(const Context& context, std::vector<Finding>& findings) {
  InvariantCheck check(kSemaphoreCapacity, findings);
  std::map<std::string, std::vector<const Holding*>> by_semaphore;
  for (const Holding* holding : acquired_by_time(context.holdings)) {
    if (holding->ok().permit) by_semaphore[semaphore_of(holding->ok())].push_back(holding);
  }
  for (const auto& [name, holdings] : by_semaphore) {
    check.applies();
    check_one(context, name, holdings, check);
  }
  return check.verdict();
}

}  // namespace redlock::chaos::checker_internal
