// The common shape of acquire, extend and release operations.
#pragma once

#include <cstddef>
#include <memory>
#include <system_error>

#include "redlock/error.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

class ClientCore;

class Operation : public ResponseSink, public std::enable_shared_from_this<Operation> {
 public:
  explicit Operation(ClientCore& core) : core_(core) {}
  // Loop thread. The callback still runs exactly once (errc::cancelled unless
  // already decided), from a posted task.
  virtual void cancel() = 0;
  // The client is closing: complete now with `why`, from inside this call.
  virtual void abort(std::error_code why) = 0;

 protected:
  ClientCore& core_;

 private:
  friend class ClientCore;
  // Where the core lists this operation while it is live (ClientCore::live_),
  // kNotLive otherwise.
  static constexpr std::size_t kNotLive = static_cast<std::size_t>(-1);
  std::size_t live_index_ = kNotLive;
};

// Runs a user callback. noexcept: an exception escaping a callback ends the
// program here rather than unwinding through libuv's C frames.
template <typename Callback, typename Result>
void deliver(Callback& callback, Result&& result) noexcept {
  auto local = std::move(callback);
  callback = nullptr;
  if (local) local(std::forward<Result>(result));
}

}  // namespace redlock::detail
