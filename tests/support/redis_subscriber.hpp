// A subscriber on a connection of its own, for tests that check what a node
// published: the messages on its channels, in the order the node sent them.
// Like RedisProbe it is not the library's client, and every call is bounded
// (5 s) and reports failure as a value. Not thread-safe: one per thread.
//
// A test that must show that something was NOT published publishes a marker
// of its own on the channel after the operation under test, and reads up to
// it: a node delivers a connection's messages in the order it published
// them, so anything the operation published comes before the marker.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct redisContext;

namespace redlock::test {

class RedisSubscriber {
 public:
  struct Message {
    std::string channel;
    std::string payload;
  };

  // Subscribes to `channels` on 127.0.0.1:`port`; ok() says whether the
  // node confirmed every subscription.
  RedisSubscriber(std::uint16_t port, const std::vector<std::string>& channels);
  ~RedisSubscriber();
  RedisSubscriber(const RedisSubscriber&) = delete;
  RedisSubscriber& operator=(const RedisSubscriber&) = delete;

  [[nodiscard]] bool ok() const noexcept { return ok_; }
  // The next message, or an empty channel when none came in 5 s.
  Message next();
  // The messages before the first one whose payload is `marker` (all of
  // them, with an empty last channel, when the marker did not come).
  std::vector<Message> until(const std::string& marker);

 private:
  struct Free {
    void operator()(redisContext* context) const;
  };
  std::unique_ptr<redisContext, Free> context_;
  bool ok_ = false;
};

}  // namespace redlock::test
