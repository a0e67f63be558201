// What the report derives from the history besides windows and faults:
// the resource counter over time with the writes that set it back (a lost
// update), the value each node held over time as the clients' replies show
// it, and the stretches where two holders' windows overlap.
#include <set>
#include <tuple>
#include <utility>

#include "report_internal.hpp"

namespace redlock::chaos::report_internal {
namespace {

bool ends_node_data(const Event& event) {
  return event.kind == EventKind::nemesis && event.phase == Phase::invoke &&
         (event.fault == "kill" || event.fault == "power-loss" || event.fault == "restart" ||
          event.fault == "failover");
}

// Two windows contend when they are of different processes over the same
// thing: the same resources (or the run's one resource) and the same permit,
// neither of them a reader's shared hold.
bool same_lock(const Event& a, const Event& b) {
  return !a.shared && !b.shared && a.permit == b.permit && a.resources == b.resources;
}

bool contend(const Event& a, const Event& b) { return a.proc != b.proc && same_lock(a, b); }

}  // namespace

CounterSeries collect_counter(const History& history) {
  CounterSeries series;
  // (proc, op, key) -> the read ok a read-modify-write's write is based on.
  std::map<std::tuple<std::string_view, std::int64_t, std::string_view>, const Event*> reads;
  for (const Event& event : history.events) {
    if (event.kind == EventKind::snapshot && event.target == "resource") {
      if (series.key.empty() || event.key == series.key) series.final_value = event.count;
      continue;
    }
    if (!is_worker(event.proc) || event.phase != Phase::ok) continue;
    if (event.kind == EventKind::read && event.read) {
      reads[{event.proc, event.op, event.key}] = &event;
      continue;
    }
    if (event.kind != EventKind::write || !event.wrote) continue;
    if (series.key.empty()) series.key = event.key;
    if (event.key != series.key) continue;
    ++series.accepted;
    const auto read = reads.find({event.proc, event.op, event.key});
    const Event* based_on = read != reads.end() ? read->second : nullptr;
    if (!series.points.empty() && *event.wrote <= series.points.back().value) {
      series.stale.push_back(StaleWrite{&event, based_on, series.points.back().value});
    }
    series.points.push_back(CounterPoint{event.t, *event.wrote, &event});
  }
  return series;
}

// A node holds a value from the acquire that it granted (the attempt's
// start) until the release that it answered (from when that was sent), or
// its TTL after the last grant or extension it answered. When a later
// reply shows the node no longer has it (a release answered "not held", or
// the node granted another holder before the TTL ran out), the node lost
// it: at the kill or restart in between when there was one.
std::vector<NodeHolding> collect_node_holdings(const History& history, const RunFacts& run) {
  std::vector<NodeHolding> holdings;
  std::map<int, std::vector<std::int64_t>> data_losses;  // node -> kill / restart starts
  // (node, proc, value) -> index of the open holding.
  std::map<std::tuple<int, std::string_view, std::string_view>, std::size_t> open;
  const auto close = [&](std::size_t index, std::int64_t at, bool lost) {
    NodeHolding& holding = holdings[index];
    std::int64_t end = std::min(at, holding.expires);
    if (lost) {
      for (const std::int64_t loss : data_losses[holding.node]) {
        if (loss > holding.from && loss < end) {
          end = loss;
          break;
        }
      }
    }
    holding.to = std::max(end, holding.from);
    holding.lost = lost && end < holding.expires;
    holding.closed = true;
  };
  // (proc, value) -> when its release was sent: a node deletes the value
  // when the request reaches it, long before a release that waits on a
  // silent node returns.
  std::map<std::pair<std::string_view, std::string_view>, std::int64_t> release_sent;
  for (const Event& event : history.events) {
    if (event.kind == EventKind::release && event.phase == Phase::invoke) {
      release_sent.try_emplace({event.proc, event.value}, event.t);
    }
    if (ends_node_data(event)) {
      if (const auto node = numbered_name(event.target, 'n')) data_losses[*node].push_back(event.t);
      continue;
    }
    if (!is_worker(event.proc) || event.nodes.empty()) continue;
    const bool acquired = event.kind == EventKind::acquire && event.phase == Phase::ok;
    const std::int64_t ttl_ns = (event.ttl_ms > 0 ? event.ttl_ms : run.ttl_ms) * kNsPerMs;
    for (const NodeReply& reply : event.nodes) {
      const std::tuple<int, std::string_view, std::string_view> slot{reply.node, event.proc,
                                                                     event.value};
      const auto found = open.find(slot);
      if (acquired && acquire_reply_grants(event, reply)) {
        const std::int64_t from = event.start_t != 0 ? event.start_t : event.t;
        // Whatever value of this lock the node still held, it no longer
        // does: released unseen (the release returned before this node
        // answered), or lost when it was another holder's.
        for (auto it = open.begin(); it != open.end();) {
          const NodeHolding& other = holdings[it->second];
          if (std::get<0>(it->first) == reply.node && same_lock(*other.acquired, event) &&
              other.expires > from) {
            // A release sent before this grant, its reply still to come,
            // ended it.
            const auto sent = release_sent.find({other.acquired->proc, other.acquired->value});
            if (sent != release_sent.end() && sent->second <= from) {
              close(it->second, sent->second, false);
            } else {
              close(it->second, from, other.acquired->proc != event.proc);
            }
            it = open.erase(it);
          } else {
            ++it;
          }
        }
        open[slot] = holdings.size();
        holdings.push_back(NodeHolding{reply.node, &event, from, from + ttl_ns, from + ttl_ns});
      } else if (found != open.end() && event.kind == EventKind::extend &&
                 reply.status == "extended") {
        holdings[found->second].expires = event.t + ttl_ns;
      } else if (found != open.end() && reply.status == "released") {
        const auto sent = release_sent.find({event.proc, event.value});
        close(found->second, sent != release_sent.end() ? sent->second : event.t, false);
        open.erase(found);
      } else if (found != open.end() && reply.status == "not_held") {
        close(found->second, event.t, true);
        open.erase(found);
      }
    }
  }
  for (const auto& [slot, index] : open) close(index, run.end, false);
  for (NodeHolding& holding : holdings) {
    if (!holding.closed) holding.to = std::min(holding.expires, std::max(run.end, holding.from));
  }
  return holdings;
}

// Sweeps the windows in acquire order, keeping those still open; a pair of
// contending windows that overlap gives one stretch (bounded: the first
// kMaxOverlaps).
std::vector<Overlap> collect_overlaps(const std::vector<Window>& windows) {
  std::vector<Overlap> overlaps;
  std::vector<const Window*> active;
  for (const Window& window : windows) {
    const std::int64_t start = window.acquired->t;
    std::erase_if(active, [&](const Window* other) { return other->end() <= start; });
    for (const Window* other : active) {
      if (!contend(*other->acquired, *window.acquired)) continue;
      const std::int64_t end = std::min(other->end(), window.end());
      if (end <= start) continue;
      if (overlaps.size() >= kMaxOverlaps) return overlaps;
      overlaps.push_back(Overlap{start, end, other->acquired->proc, window.acquired->proc});
    }
    active.push_back(&window);
  }
  return overlaps;
}

}  // namespace redlock::chaos::report_internal
