// The protected resource: a counter in a plain redis-server, read and written
// with two separate commands (GET, then SET). That is deliberately not
// atomic: if two workers ever held the lock at once, one of their increments
// would be overwritten, and the final count would come out short.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "demo_options.hpp"

struct redisContext;

namespace redlock::demo {

// One blocking hiredis connection. Not thread-safe: one per thread.
class CounterStore {
 public:
  CounterStore(const StoreAddress& address, std::string key);
  ~CounterStore();
  CounterStore(const CounterStore&) = delete;
  CounterStore& operator=(const CounterStore&) = delete;

  // False once connecting or any command failed; error() says why.
  [[nodiscard]] bool ok() const noexcept { return error_.empty(); }
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

  // GET; a missing key reads as 0.
  [[nodiscard]] std::optional<std::int64_t> read();
  // SET.
  [[nodiscard]] bool write(std::int64_t value);

 private:
  struct ContextDeleter {
    void operator()(redisContext* context) const noexcept;
  };
  std::unique_ptr<redisContext, ContextDeleter> context_;
  std::string key_;
  std::string where_;  // "host:port", for messages
  std::string error_;
};

}  // namespace redlock::demo
