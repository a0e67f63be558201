#include "redlock/guard.hpp"

#include "client/blocking_client_impl.hpp"
#include "holding/guard_state.hpp"

namespace redlock {

struct Guard::Record {
  // The acquisition's result: a failed one, a reentrant hold's, or the view
  // acquired() built of what the state keeps.
  std::unique_ptr<AcquireResult> acquired;
  // A reentrant hold's key in the client's registry; empty otherwise.
  std::string hold_key;
  // After release(): the state, whose record acquired() still reads.
  std::shared_ptr<detail::GuardState> released;
};

Guard::Guard() noexcept = default;

Guard::Guard(std::shared_ptr<detail::GuardState> state,
             std::weak_ptr<detail::BlockingClientImpl> client,
             std::unique_ptr<AcquireResult> acquired, std::string hold_key)
    : state_(std::move(state)), client_(std::move(client)) {
  if (acquired || !hold_key.empty()) {
    record_ = std::make_unique<Record>(Record{std::move(acquired), std::move(hold_key), nullptr});
  }
}

Guard::Guard(AcquireResult failed)
    : record_(std::make_unique<Record>(
          Record{std::make_unique<AcquireResult>(std::move(failed)), {}, nullptr})) {}

Guard::Guard(Guard&& other) noexcept
    : state_(std::move(other.state_)),
      client_(std::move(other.client_)),
      record_(std::move(other.record_)) {
  other.state_.reset();
  other.client_.reset();
}

Guard& Guard::operator=(Guard&& other) noexcept {
  if (this != &other) {
    Guard released(std::move(*this));  // its destructor releases
    state_ = std::move(other.state_);
    client_ = std::move(other.client_);
    record_ = std::move(other.record_);
    other.state_.reset();
    other.client_.reset();
  }
  return *this;
}

Guard::~Guard() {
  if (!state_) return;
  if (auto client = client_.lock()) {
    // Another hold of a reentrant lock still needs it.
    if (record_ && !record_->hold_key.empty() &&
        !client->holds().leave(record_->hold_key, state_.get())) {
      return;
    }
    // Bounded: the release itself goes on if the nodes are slower.
    (void)client->release_guard(state_, client->longest_node_timeout());
  }
}

Guard::Record& Guard::record() const {
  if (!record_) record_ = std::make_unique<Record>();
  return *record_;
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
  return state_ ? state_->fence() : std::nullopt;
}

const AcquireResult& Guard::acquired() const noexcept {
  static const AcquireResult kNone;
  if (record_ && record_->acquired) return *record_->acquired;
  const detail::GuardState* state = state_    ? state_.get()
                                    : record_ ? record_->released.get()
                                              : nullptr;
  if (state == nullptr) return kNone;
  Record& record = this->record();
  record.acquired = std::make_unique<AcquireResult>(state->acquired());
  return *record.acquired;
}

std::stop_token Guard::stop_token() const noexcept {
  return state_ ? state_->stop_token() : std::stop_token{};
}

bool Guard::at_risk() const noexcept { return state_ != nullptr && state_->at_risk(); }

std::stop_token Guard::at_risk_token() const {
  return state_ ? state_->at_risk_token() : std::stop_token{};
}

std::error_code Guard::error() const {
  if (state_) return state_->error();
  return acquired().error;
}

std::vector<NodeOutcome> Guard::loss_nodes() const {
  return state_ ? state_->loss_nodes() : std::vector<NodeOutcome>{};
}

int Guard::renewals() const noexcept { return state_ ? state_->renewals() : 0; }

ReleaseResult Guard::release() {
  ReleaseResult result;
  if (!state_) return result;
  std::shared_ptr<detail::GuardState> state = std::move(state_);
  state_.reset();
  // Kept for acquired(), which reads the acquisition's record from it.
  const std::string hold_key = record_ ? std::move(record_->hold_key) : std::string();
  if (!record_ || !record_->acquired) record().released = state;
  if (auto client = client_.lock()) {
    if (!hold_key.empty() && !client->holds().leave(hold_key, state.get())) {
      // Only this hold ends; the lock stays for the others.
      client_.reset();
      return result;
    }
    result = client->release_guard(state, std::nullopt);
  } else {
    result.error = make_error_code(errc::shutting_down);
  }
  client_.reset();
  return result;
}

void Guard::release_async(std::function<void(ReleaseResult)> done) {
  if (!state_) {
    done(ReleaseResult{});
    return;
  }
  std::shared_ptr<detail::GuardState> state = std::move(state_);
  state_.reset();
  const std::string hold_key = record_ ? std::move(record_->hold_key) : std::string();
  if (!record_ || !record_->acquired) record().released = state;
  std::shared_ptr<detail::BlockingClientImpl> client = client_.lock();
  client_.reset();
  if (!client) {
    ReleaseResult gone;
    gone.error = make_error_code(errc::shutting_down);
    done(std::move(gone));
    return;
  }
  if (!hold_key.empty() && !client->holds().leave(hold_key, state.get())) {
    done(ReleaseResult{});  // only this hold ends; the lock stays for the others
    return;
  }
  client->release_guard_async(state, std::move(done));
}

}  // namespace redlock
