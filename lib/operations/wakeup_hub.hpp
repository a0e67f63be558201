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
// One release wakes one waiter of this client, the first in the order they
// started waiting that is asleep: waking them all would only have them
// collide on the nodes (a thundering herd), and the next release wakes the
// next. The N nodes each publish the same release; the released value
// identifies it, so it counts once, even when copies of two releases
// interleave.
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
  void on_message(std::string_view channel, std::string_view released_value);
  void subscribe_everywhere(const std::string& channel, bool subscribe);

  LoopContext& loop_;
  const QuorumConfig& config_;
  Metrics& metrics_;
  std::vector<std::unique_ptr<NodeConnection>> subscribers_;
  struct Channel {
    std::vector<std::weak_ptr<Wakeable>> waiters;  // in the order they came
    std::deque<std::string> recent_releases;       // newest last, already counted
  };
  // Whether `released_value` is a copy of a release this channel has seen;
  // remembers it if not.
  static bool seen_before(Channel& channel, std::string_view released_value);

  std::map<std::string, Channel, std::less<>> waiters_;
  RecentContention recent_contention_;
  bool closed_ = false;
};

}  // namespace redlock::detail
