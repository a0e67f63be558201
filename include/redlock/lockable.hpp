// A resource that meets the standard Lockable and TimedLockable
// requirements, so std::unique_lock, std::scoped_lock and friends work:
//
//   redlock::LockableResource report(client, redlock::Resource("nightly-report"));
//   std::unique_lock held(report);          // waits for the lock
//   write_report(held.mutex()->guard().fence());
//
// While held, the lock renews itself (it is a Guard; see guard.hpp); check
// guard().valid() or guard().stop_token() in long critical sections, since
// a lease can be lost. One LockableResource is one holder: use it from one
// thread at a time, like the std::unique_lock that wraps it.
#pragma once

#include <chrono>

#include "redlock/blocking_client.hpp"
#include "redlock/export.hpp"
#include "redlock/guard.hpp"

namespace redlock {

class REDLOCK_API LockableResource {
 public:
  LockableResource(BlockingClient& client, Resource resource, GuardOptions options = {});
  LockableResource(const LockableResource&) = delete;
  LockableResource& operator=(const LockableResource&) = delete;

  // Waits until acquired. Throws std::system_error for errors waiting cannot
  // cure (configuration, invalid arguments, client shutting down), as
  // std::mutex::lock does for its own errors.
  void lock();
  // One attempt.
  [[nodiscard]] bool try_lock();
  template <typename Rep, typename Period>
  [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
    return acquire_within(std::chrono::ceil<Milliseconds>(timeout));
  }
  template <typename Clock, typename Duration>
  [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return acquire_within(std::chrono::ceil<Milliseconds>(deadline - Clock::now()));
  }
  // Releases (all nodes, our value only). Never throws.
  void unlock() noexcept;

  // The current holding: fencing token, validity, loss signal.
  [[nodiscard]] Guard& guard() noexcept { return guard_; }
  [[nodiscard]] const Resource& resource() const noexcept { return resource_; }

 private:
  bool acquire_within(Milliseconds wait);

  BlockingClient& client_;
  Resource resource_;
  GuardOptions options_;
  Guard guard_;
};

}  // namespace redlock
