#include "redlock/lockable.hpp"

#include <system_error>

namespace redlock {

namespace {

// Errors that another attempt may cure: someone else holds the lock, or too
// few nodes answered this time.
bool worth_waiting(std::error_code error) {
  return error == errc::not_acquired || error == errc::no_quorum ||
         error == errc::validity_too_short || error == errc::fencing_failed ||
         error == errc::timeout;
}

// lock() waits in slices, so a wait without end is still made of bounded
// operations.
constexpr Milliseconds kWaitSlice{60000};

}  // namespace

LockableResource::LockableResource(BlockingClient& client, Resource resource, GuardOptions options)
    : client_(client), resource_(std::move(resource)), options_(std::move(options)) {}

bool LockableResource::acquire_within(Milliseconds wait) {
  GuardOptions options = options_;
  options.acquire.wait = wait.count() > 0 ? wait : Milliseconds(0);
  Guard attempt = client_.lock(resource_, options);
  if (!attempt.owns_lock()) {
    const std::error_code error = attempt.error();
    if (!worth_waiting(error)) throw std::system_error(error, "redlock: " + resource_.str());
    return false;
  }
  guard_ = std::move(attempt);
  return true;
}

void LockableResource::lock() {
  while (!acquire_within(kWaitSlice)) {
  }
}

bool LockableResource::try_lock() { return acquire_within(Milliseconds(0)); }

void LockableResource::unlock() noexcept {
  // Guard::release never throws; its result is the guard's business.
  (void)guard_.release();
}

}  // namespace redlock
