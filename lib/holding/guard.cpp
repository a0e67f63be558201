#include "redlock/guard.hpp"

#include "client/blocking_client_impl.hpp"
#include "holding/guard_state.hpp"

namespace redlock {

Guard::Guard(std::shared_ptr<detail::GuardState> state,
             std::weak_ptr<detail::BlockingClientImpl> client, AcquireResult acquired,
             std::string hold_key)
    : state_(std::move(state)),
      client_(std::move(client)),
      acquired_(std::move(acquired)),
      hold_key_(std::move(hold_key)) {}

Guard::Guard(Guard&& other) noexcept
    : state_(std::move(other.state_)),
      client_(std::move(other.client_)),
      acquired_(std::move(other.acquired_)),
      hold_key_(std::move(other.hold_key_)) {
  other.state_.reset();
  other.client_.reset();
  other.hold_key_.clear();
}

Guard& Guard::operator=(Guard&& other) noexcept {
  if (this != &other) {
    Guard released(std::move(*this));  // its destructor releases
    state_ = std::move(other.state_);
    client_ = std::move(other.client_);
    acquired_ = std::move(other.acquired_);
    hold_key_ = std::move(other.hold_key_);
    other.state_.reset();
    other.client_.reset();
    other.hold_key_.clear();
  }
  return *this;
}

Guard::~Guard() {
  if (!state_) return;
  if (auto client = client_.lock()) {
    // Another hold of a reentrant lock still needs it.
    if (!hold_key_.empty() && !client->holds().leave(hold_key_, state_.get())) return;
    // Bounded: the release itself goes on if the nodes are slower.
    (void)client->release_guard(state_, client->longest_node_timeout());
  }
}

bool Guard::valid() const noexcept {
  return state_ != nullptr && !state_->lost() && SteadyClock::now() < state_->valid_until();
}

TimePoint Guard::valid_until() const noexcept {
  return state_ ? state_->valid_until() : TimePoint{};
}

Lock Guard::lock() const {
  if (state_) return state_->snapshot();
  return Lock{Resource(""), LockValue(""), Milliseconds(0), {}, {}, std::nullopt};
}

std::optional<std::uint64_t> Guard::fence() const {
  return state_ ? state_->snapshot().fence : std::nullopt;
}

std::stop_token Guard::stop_token() const noexcept {
  return state_ ? state_->stop_token() : std::stop_token{};
}

std::error_code Guard::error() const {
  if (state_) return state_->error();
  return acquired_.error;
}

int Guard::renewals() const noexcept { return state_ ? state_->renewals() : 0; }

ReleaseResult Guard::release() {
  ReleaseResult result;
  if (!state_) return result;
  std::shared_ptr<detail::GuardState> state = std::move(state_);
  state_.reset();
  if (auto client = client_.lock()) {
    if (!hold_key_.empty() && !client->holds().leave(hold_key_, state.get())) {
      // Only this hold ends; the lock stays for the others.
      client_.reset();
      hold_key_.clear();
      return result;
    }
    result = client->release_guard(state, std::nullopt);
  } else {
    result.error = make_error_code(errc::shutting_down);
  }
  client_.reset();
  hold_key_.clear();
  return result;
}

}  // namespace redlock
