#include "operations/observe_operation.hpp"

#include <algorithm>
#include <utility>

#include "operations/inspect_operation.hpp"
#include "operations/launch.hpp"
#include "scripts/scripts.hpp"

namespace redlock::detail {

namespace {
constexpr Milliseconds kMinPoll{50};
// How soon a leader still in its token round is read again.
constexpr Milliseconds kSettle{5};
constexpr int kSettleReads = 20;
}  // namespace

ObserveOperation::ObserveOperation(ClientCore& core, Election election,
                                   const ObserveOptions& options,
                                   AsyncClient::LeaderCallback callback)
    : Operation(core),
      election_(std::move(election)),
      poll_(std::max(options.poll.value_or(core.config().lock.ttl / 3), kMinPoll)),
      callback_(std::move(callback)) {
  const KeySpace keys = core.keys_for(election_.resource().str());
  const std::string& prefix = keys.key_prefix();
  release_channel_ = release_channel(prefix, election_.resource().str());
  elected_channel_ = elected_channel(prefix, election_.resource().str());
}

void ObserveOperation::start() {
  if (!core_.config_problem().empty() || election_.name().empty()) {
    const std::error_code why =
        make_error_code(election_.name().empty() ? errc::invalid_argument : errc::config_error);
    done_ = true;
    core_.turn().post([self = shared_from_this(), this, why] {
      core_.finished(this);
      LeaderResult last;
      last.error = why;
      if (callback_) callback_(last);
      callback_ = nullptr;
    });
    return;
  }
  const auto self = std::static_pointer_cast<ObserveOperation>(shared_from_this());
  core_.wakeups().wait(release_channel_, self);
  core_.wakeups().wait(elected_channel_, self);
  read();
}

void ObserveOperation::read() {
  if (done_) return;
  if (reading_) {
    read_again_ = true;
    return;
  }
  reading_ = true;
  std::weak_ptr<Operation> weak = weak_from_this();
  (void)launch<InspectOperation>(core_, election_.resource(), [weak](Inspection inspection) {
    if (auto self = weak.lock()) {
      static_cast<ObserveOperation*>(self.get())->on_read(std::move(inspection));
    }
  });
}

bool ObserveOperation::changed(const LeaderResult& next) const {
  if (!last_) return true;
  if (last_->error != next.error) return true;
  if (last_->leader.has_value() != next.leader.has_value()) return true;
  if (!next.leader) return false;
  return last_->leader->term != next.leader->term || last_->leader->payload != next.leader->payload;
}

void ObserveOperation::on_read(Inspection inspection) {
  reading_ = false;
  if (done_) return;
  // A read cut short by the client closing is no view of the leader.
  if (inspection.error == make_error_code(errc::shutting_down) ||
      inspection.error == make_error_code(errc::cancelled)) {
    return;
  }
  // A new leader whose term does not pass the last one's is still in its
  // token round (the counter a majority stores is the last term): read
  // again in a moment rather than pair it with an old term.
  // (Bounded: a holder that never raises the counter — an unfenced lock
  // on the election's resource — is reported after kSettleReads.)
  if (inspection.holder && !last_value_.empty() && inspection.holder->value != last_value_ &&
      inspection.holder->fence <= last_term_ && settle_reads_ < kSettleReads) {
    ++settle_reads_;
    schedule_read(kSettle);
    return;
  }
  settle_reads_ = 0;
  if (inspection.holder) {
    last_value_ = inspection.holder->value;
    last_term_ = inspection.holder->fence;
  }
  LeaderResult next = leader_of(std::move(inspection));
  if (changed(next)) {
    last_ = next;
    if (callback_) callback_(next);
    if (done_) return;  // the callback cancelled the observer
  }
  if (read_again_) {
    read_again_ = false;
    read();
    return;
  }
  schedule_read(poll_);
}

void ObserveOperation::schedule_read(Microseconds after) {
  core_.timers().cancel(poll_timer_);
  std::weak_ptr<Operation> weak = weak_from_this();
  poll_timer_ = core_.timers().schedule_after(after, [weak] {
    if (auto self = weak.lock()) {
      auto* observer = static_cast<ObserveOperation*>(self.get());
      observer->poll_timer_ = TimerQueue::kNone;
      observer->read();
    }
  });
}

bool ObserveOperation::wake() {
  read();
  return false;
}

AsyncClient::LeaderCallback ObserveOperation::stop() {
  done_ = true;
  core_.timers().cancel(poll_timer_);
  poll_timer_ = TimerQueue::kNone;
  auto callback = std::move(callback_);
  callback_ = nullptr;
  return callback;
}

void ObserveOperation::cancel() {
  if (done_) return;
  core_.wakeups().leave(release_channel_, this);
  core_.wakeups().leave(elected_channel_, this);
  core_.turn().post([self = shared_from_this(), this, callback = stop()] {
    core_.finished(this);
    LeaderResult last;
    last.error = make_error_code(errc::cancelled);
    if (callback) callback(last);
  });
}

void ObserveOperation::abort(std::error_code why) {
  // The client is closing: the hub goes with it.
  if (done_) return;
  const AsyncClient::LeaderCallback callback = stop();
  LeaderResult last;
  last.error = why;
  if (callback) callback(last);
}

}  // namespace redlock::detail
