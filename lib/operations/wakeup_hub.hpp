// Release wake-ups (docs/engine.md, "Waiting for a release"): waiters subscribe to
// `{prefix}released:{resource}` on every node and retry as soon as a release
// is published, instead of sleeping out their retry delay. One subscriber
// connection per node serves every waiter of the client; a channel is
// subscribed while it has waiters and unsubscribed when the last one leaves,
// so subscriptions do not accumulate. A waiter stays from its first "held"
// answer until its acquire completes, also while it is attempting: leaving
// and coming back after every attempt would cost a SUBSCRIBE and an
// UNSUBSCRIBE per node per attempt, and would forget which release was
// already acted on. The retry timer stays armed as the fallback for a missed
// message.
//
// A release wakes one waiter of all the clients': waking them all would
// only have them collide on the nodes (a thundering herd), and the next
// release wakes the next. A mutex waiter refused by a node takes a place in
// that node's waiting line (scripts.hpp, waiting_key), and the release
// names the first live waiter in line, "@id value": the client whose waiter
// has that id wakes it, the others wake none of their lined-up waiters. A
// release that names no one (an empty line, a lock kind without a line)
// wakes this client's first sleeping waiter, in the order they started
// waiting, as it did before lines existed. The N nodes each publish the same
// release; the released value identifies it, so it counts once, even when
// copies of two releases interleave; a copy that names another waiter (the
// nodes' lines differ) wakes that waiter as well.
//
// The hub also keeps the client's RecentContention: which resources it
// recently had to wait for (retry_policy.hpp).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/retry_policy.hpp"
#include "transport/loop_context.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

class Wakeable {
 public:
  // Loop thread: a release was published on the channel being waited on.
  // Returns whether the waiter acted on it (it was sleeping before a retry).
  virtual bool wake() = 0;
  // The id under which the waiter takes places in the nodes' waiting line;
  // empty for one that never does (it is woken only by releases that name
  // no one). Loop thread.
  [[nodiscard]] virtual std::string_view waiter_id() const noexcept { return {}; }

 protected:
  ~Wakeable() = default;
};

class WakeupHub {
 public:
  // `loop`, `config` and `metrics` must outlive the hub (the client core
  // owns all four).
  WakeupHub(LoopContext& loop, const QuorumConfig& config, Metrics& metrics);
  WakeupHub(const WakeupHub&) = delete;
  WakeupHub& operator=(const WakeupHub&) = delete;

  // `waiter` is woken (at most once per call) when a release is published on
  // `channel`, until leave().
  void wait(const std::string& channel, const std::shared_ptr<Wakeable>& waiter);
  void leave(const std::string& channel, const Wakeable* waiter);
  void close();

  // Channels subscribed right now (for tests and diagnosis).
  [[nodiscard]] std::size_t channels() const noexcept { return waiters_.size(); }

  [[nodiscard]] RecentContention& recent_contention() noexcept { return recent_contention_; }

 private:
  void ensure_connections();
  void on_message(std::string_view channel, std::string_view message);
  void subscribe_everywhere(const std::string& channel, bool subscribe);

  LoopContext& loop_;
  const QuorumConfig& config_;
  Metrics& metrics_;
  std::vector<std::unique_ptr<NodeConnection>> subscribers_;
  struct Channel {
    std::vector<std::weak_ptr<Wakeable>> waiters;  // in the order they came
    // Newest last, already acted on: released values, and "@id value" for
    // a named waiter woken.
    std::deque<std::string> recent_releases;
  };
  // Whether `seen` (a released value, or a named message) was met before on
  // this channel; remembers it if not.
  static bool seen_before(Channel& channel, std::string_view seen);

  std::map<std::string, Channel, std::less<>> waiters_;
  RecentContention recent_contention_;
  bool closed_ = false;
};

}  // namespace redlock::detail
