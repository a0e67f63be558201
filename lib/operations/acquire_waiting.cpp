// The waiting side of an acquire (docs/algorithm.md, "Waiting in line" and
// "Fair locks"): a mutex waiter's place in the nodes' lines and the names
// that wake it, a fair waiter's ticket rounds and queue entry, and the
// release channels other waiters listen on.
#include <algorithm>
#include <string>

#include "operations/acquire_operation.hpp"
#include "scripts/reply_parse.hpp"
#include "scripts/script_calls.hpp"

namespace redlock::detail {

void AcquireOperation::begin_ticket(std::error_code why, Microseconds pause) {
  phase_ = Phase::ticketing;
  ticket_why_ = why;
  ticket_pause_ = pause;
  queued_ = true;
  // A majority that refused the attempt drew the ticket in refusing it:
  // the highest of their counters is the ticket a draw round would give
  // (above every ticket recorded on a majority before the attempt began),
  // so only its record is left to do.
  enqueueing_ = attempt_draws_ >= majority(core_.nodes().size());
  ticket_drawn_ = enqueueing_ ? attempt_draw_max_ : 0;
  ticket_drawn_at_ = enqueueing_ ? attempt_.started() : core_.clock().now();
  wait_for_release();
  send_ticket_round();
}

bool AcquireOperation::enqueue_drawn_ticket() {
  if (kind_ != LockKind::fair || plan_.max_retries == 0) return false;
  const TimePoint now = core_.clock().now();
  const std::optional<WakeupHub::DrawnTicket> drawn =
      core_.wakeups().take_drawn_ticket(channel_, now);
  if (!drawn) return false;
  const std::optional<Microseconds> pause = next_retry_delay(plan_, 1, now, random_unit());
  if (!pause) {
    if (drawn->claim) core_.wakeups().withdraw(*drawn->claim);
    return false;
  }
  // As after a refusal that drew the ticket (begin_ticket): only the
  // record is left to do, then the waiter waits to be named, or attempts
  // at once when it is first and the lock free.
  predrawn_ = true;
  phase_ = Phase::ticketing;
  ticket_why_ = make_error_code(errc::not_acquired);
  ticket_pause_ = *pause;
  queued_ = true;
  enqueueing_ = true;
  ticket_drawn_ = drawn->ticket;
  ticket_drawn_at_ = drawn->drawn_at;
  if (drawn->claim && adopt_pre_claim(*drawn)) return true;
  if (drawn->claim) core_.wakeups().withdraw(*drawn->claim);
  wait_for_release();
  send_ticket_round();
  return true;
}

bool AcquireOperation::adopt_pre_claim(const WakeupHub::DrawnTicket& drawn) {
  const WakeupHub::PreClaim& claim = *drawn.claim;
  if (!claims() || !payload_.empty() || claim.ttl != ttl_ || claim.resource != resource_) {
    return false;
  }
  // A node whose count was the ticket lists the place where a record would
  // have put it, and has recorded the ticket: a majority of them is a
  // ticket recorded on a majority, else the pre-claim goes (withdrawn,
  // which also undoes any grant of it) and the acquire records the ticket
  // with a claim of its own. A node that did not draw (the release found
  // the key held there by another value) does not list the place; one
  // that drew another count lists it out of order, and a grant there could
  // go ahead of an earlier ticket: such a node's grants are given back,
  // not counted, until a record lists the place at the ticket there.
  // (A node whose count is not known yet, its answer still to come, may
  // have listed it anywhere: treated as out of order too.)
  std::size_t at_ticket = 0;
  std::bitset<kMaxNodes> out_of_order;
  for (std::size_t node = 0; node < claim.counts.size() && node < kMaxNodes; ++node) {
    if (claim.counts[node] == drawn.ticket) {
      ++at_ticket;
    } else {
      out_of_order.set(node);
    }
  }
  if (at_ticket < core_.quorum()) return false;
  // The place the release recorded is this acquire's (its id in the queue,
  // its number in the client's line), and the claim's value and t0.
  line_place_ = claim.place;
  queue_id_ = claim.place.id;
  value_ = claim.value;
  claim_tag_ = claim.tag;
  claim_granted_.reset();
  claim_given_back_.reset();
  claim_quick_records_ = 0;
  claim_out_of_order_ = out_of_order;
  claiming_ = true;
  attempt_.open(core_.config().nodes, claim.started);
  // The release stands for the record: one attempt.
  ++result_.attempts;
  core_.metrics().acquire_attempts.fetch_add(1, std::memory_order_relaxed);
  ticket_ = drawn.ticket;
  result_.ticket = AcquireResult::Ticket{drawn.ticket, drawn.drawn_at, core_.clock().now()};
  phase_ = Phase::pausing;
  wait_for_release();
  // Grants heard before the adoption count as they come now (never inside
  // the starting call). First with the key free on some node: no release
  // there will grant it, so it records at once.
  const std::vector<std::uint64_t> granted = claim.granted;
  const bool record_now = claim.first_and_free;
  core_.turn().post([self = shared_from_this(), this, granted, record_now] {
    if (!claiming_ || phase_ != Phase::pausing || retry_timer_ != TimerQueue::kNone) return;
    for (std::size_t node = 0; node < granted.size() && claiming_; ++node) {
      if (granted[node] != 0) this->granted(node, claim_tag_, granted[node]);
    }
    if (!claiming_ || phase_ != Phase::pausing || retry_timer_ != TimerQueue::kNone) return;
    if (record_now) {
      record_again();
      return;
    }
    const std::optional<Microseconds> pause = next_pause();
    if (!pause) {
      complete(ticket_why_);
      return;
    }
    // The pre-claimed place lapses a quarter of the entry TTL after the
    // release unless a record renews it (fair_release): the first record
    // comes within half that lease.
    Microseconds wait = std::min<Microseconds>(*pause, kQueueEntryTtl / 8);
    if (claim_granted_.any()) wait = std::min(wait, quick_record_pause());
    pause_then_attempt(wait);
  });
  return true;
}

void AcquireOperation::send_ticket_round() {
  fencing_.open(core_.config().nodes, core_.clock().now());
  const bool defence = defence_flag_ == "1";
  ScriptCall call;
  if (!enqueueing_) {
    call = encode(TicketDrawCall{.marker_key = marker_key_,
                                 .recovering_key = recovering_key_,
                                 .fence_key = fence_key_,
                                 .counter_field = ticket_field_,
                                 .amnesia_defence = defence});
  } else {
    std::string claim;
    if (claims()) {
      if (!claiming_) open_claim();
      ++result_.attempts;
      Metrics& metrics = core_.metrics();
      metrics.acquire_attempts.fetch_add(1, std::memory_order_relaxed);
      if (result_.attempts > 1) metrics.acquire_retries.fetch_add(1, std::memory_order_relaxed);
      claim_record_tag_ = fencing_.tag();
      claim = claim_argument(ttl_, claim_tag_, keys_.amnesia_defence(), value_.str());
    }
    const std::string ticket = std::to_string(ticket_drawn_);
    const std::string entry_ttl = std::to_string(kQueueEntryTtl.count());
    call = encode(TicketEnqueueCall{.marker_key = marker_key_,
                                    .recovering_key = recovering_key_,
                                    .fence_key = fence_key_,
                                    .lock_key = lock_key_,
                                    .queue = {queue_key_, queue_due_key_, queue_claims_key_},
                                    .counter_field = ticket_field_,
                                    .ticket = ticket,
                                    .waiter_id = queue_id_,
                                    .entry_ttl_ms = entry_ttl,
                                    .amnesia_defence = defence,
                                    .claim = claim});
  }
  auto self = shared_from_this();
  for (auto& node : core_.nodes()) {
    node->send_call(call, false, fencing_.started(), self, fencing_.tag());
  }
}

void AcquireOperation::on_ticket_response(std::size_t node, const NodeResponse& response) {
  NodeOutcome& outcome = fencing_.answer(node, response);
  QueueState state = QueueState::behind;
  parse_ticket_response(response, outcome, state);
  note_if_unmarked(outcome);  // also a node awaiting its second merge
  const bool yes = outcome.status == NodeStatus::granted && outcome.fence_counter > 0;
  if (yes && !enqueueing_) {
    ticket_drawn_ = std::max(ticket_drawn_, static_cast<std::uint64_t>(outcome.fence_counter));
  }
  // The holder released on this node before the record came: no release
  // there will name this waiter, so it attempts as soon as the ticket is
  // recorded, as if named.
  if (yes && enqueueing_ && state == QueueState::first_and_free) woken_while_voting_ = true;
  if (yes && enqueueing_ && claiming_) {
    note_record(node, state);
    if (phase_ != Phase::ticketing) return;  // the claim won
  }
  const Decision decision = fencing_.vote(yes);
  if (decision == Decision::pending) return;
  (void)fencing_.close(core_.clock().now());
  if (decision == Decision::won && !enqueueing_) {
    // The highest of a majority's counters: above every ticket recorded on
    // a majority before this draw began.
    enqueueing_ = true;
    send_ticket_round();
    return;
  }
  if (decision == Decision::won && !ticket_) {
    ticket_ = ticket_drawn_;
    result_.ticket = AcquireResult::Ticket{ticket_drawn_, ticket_drawn_at_, core_.clock().now()};
  }
  if (claiming_) {
    // Not recorded on a majority before it ever was: the waiter attempts
    // again without a ticket, and its claim goes.
    if (!ticket_) abandon_claim(false);
    // A claim some nodes granted waits about a round trip for the rest
    // (their releases are on the way), then records again: a node that now
    // puts another waiter first gets its grant back.
    std::optional<Microseconds> pause = next_pause();
    if (pause && claim_granted_.any()) pause = std::min(*pause, quick_record_pause());
    retry_or_finish(ticket_why_, pause);
    return;
  }
  // Recorded or not, the waiter waits as after its refusal; without a
  // ticket its next refusal draws again.
  retry_or_finish(ticket_why_, ticket_ ? std::min(ticket_pause_, kFairRefresh) : ticket_pause_);
}

bool AcquireOperation::claims() const noexcept {
  // A fenced claim would need its token's round after the grant; a
  // try-lock never waits for a release; a grant by a release is not
  // followed by WAIT, so a node that must replicate a grant before it
  // counts (min_replicas) takes none.
  return kind_ == LockKind::fair && !fenced_ && plan_.max_retries != 0 &&
         !core_.any_replicated_node();
}

void AcquireOperation::open_claim() {
  value_ = LockValue::random();
  if (!payload_.empty()) value_ = LockValue(value_.str() + payload_);
  claim_tag_ = LockValue::random().str();
  claim_granted_.reset();
  claim_given_back_.reset();
  claim_quick_records_ = 0;
  claim_out_of_order_.reset();
  claiming_ = true;
  busy_ = 0;
  refused_latest_.reset();
  named_while_voting_.reset();
  named_by_.reset();
  // t0 is read before the first record carrying the value is queued: no
  // node can have set the value earlier, so its TTL there ends after
  // t0 + ttl, wherever and whenever a release grants it.
  attempt_.open(core_.config().nodes, core_.clock().now());
}

void AcquireOperation::record_again() {
  undo_all_awaited();
  // A lock's deadline is t0 + validity, and validity is the TTL less the
  // time since t0: a claim granted as old as a quarter of its TTL leaves
  // at most half the TTL. A new claim (its t0 now) replaces an older one.
  const TimePoint now = core_.clock().now();
  if (claiming_ && elapsed_between(attempt_.started(), now) * 4 > ttl_) abandon_claim(false);
  enqueueing_ = true;
  ticket_drawn_ = *ticket_;
  phase_ = Phase::ticketing;
  send_ticket_round();
}

void AcquireOperation::note_record(std::size_t node, QueueState state) {
  if (node >= kMaxNodes) return;
  if (claim_given_back_[node]) {
    // Every answer handled here is the latest record round's. One sent
    // before this node's give-back may report the grant the give-back
    // undoes (or ask for it again): nothing to do. One sent after it ran
    // on the node after the give-back: what it says is current.
    if (claim_record_tag_ == claim_given_back_tag_[node]) return;
    claim_given_back_tag_[node] = 0;
  }
  if (state == QueueState::held_behind) {
    // Granted there, and another waiter is first now: given back.
    claim_out_of_order_.reset(node);
    give_back(node);
    return;
  }
  if (claim_out_of_order_[node]) {
    // The record listed the place at the ticket there; a grant it reports
    // may have come before, out of order: given back, not counted.
    claim_out_of_order_.reset(node);
    if (state == QueueState::granted) {
      give_back(node);
      return;
    }
  }
  if (state == QueueState::granted) {
    claim_vote(node);
    return;
  }
  if (state != QueueState::behind) return;
  // (Its outcome stays pending: the node keeps the claim, and may grant it
  // after the acquire ends.)
  if (!claim_granted_[node]) return;
  // This node granted the claim, and now puts another waiter first: that
  // waiter's ticket is lower (its record came after the grant), and it may
  // need this node for its majority. The grant goes back; the claim stays
  // on the other nodes, and this node keeps the place.
  give_back(node);
}

void AcquireOperation::claim_vote(std::size_t node) {
  if (!claiming_ || node >= kMaxNodes || claim_granted_[node]) return;
  if (core_.config().lock.strict_persistence &&
      core_.nodes()[node]->persistence() != Persistence::aof_always) {
    return;  // as an attempt's grant from such a node (on_vote)
  }
  claim_granted_.set(node);
  auto& outcomes = attempt_.outcomes();
  if (node < outcomes.size()) outcomes[node].status = NodeStatus::granted;
  if (claim_granted_.count() < core_.quorum()) {
    // The first grant while asleep: the rest are on their way, or some
    // node serves another waiter first; the next record comes about a
    // round trip later instead of at the refresh.
    if (claim_granted_.count() == 1) record_soon(true);
    return;
  }
  const TimePoint now = core_.clock().now();
  if (fencing_.is_open()) (void)fencing_.close(now);
  if (!ticket_) {
    // Won before the record's round was decided: each grant came from a
    // node that recorded the ticket (a grant follows the claim's record
    // there), so a majority recorded it.
    ticket_ = ticket_drawn_;
    result_.ticket = AcquireResult::Ticket{ticket_drawn_, ticket_drawn_at_, now};
  }
  core_.timers().cancel(retry_timer_);
  retry_timer_ = TimerQueue::kNone;
  last_round_trip_ = attempt_.close(now).elapsed();
  phase_ = Phase::voting;
  // The deadline t0 + validity must lie ahead by more than min_validity:
  // after a long wait in line the time since t0 counts twice.
  const Microseconds validity = validity_now();
  if (attempt_.started() + validity <= now + core_.config().lock.min_validity) {
    fail_attempt(make_error_code(errc::validity_too_short));
    return;
  }
  hand_out_if_valid();
}

Microseconds AcquireOperation::quick_record_pause() {
  // About a round trip, doubling with each record that leaves the claim
  // short of a majority, up to the refresh: a split that lasts (the other
  // nodes hold the lock for someone their queue put first) costs a few
  // records, not one per round trip.
  const int doublings = std::min(claim_quick_records_++, 16);
  return std::min<Microseconds>(kFairRefresh, copies_wait() * (1 << doublings));
}

void AcquireOperation::record_soon(bool restart_doubling) {
  if (phase_ != Phase::pausing || retry_timer_ == TimerQueue::kNone) return;
  core_.timers().cancel(retry_timer_);
  retry_timer_ = TimerQueue::kNone;
  if (restart_doubling) claim_quick_records_ = 0;
  pause_then_attempt(quick_record_pause());
}

void AcquireOperation::on_late_record(std::size_t node, const NodeResponse& response) {
  NodeOutcome outcome;
  QueueState state = QueueState::behind;
  parse_ticket_response(response, outcome, state);
  if (outcome.status != NodeStatus::granted || outcome.fence_counter <= 0) return;
  if (phase_ != Phase::ticketing && phase_ != Phase::pausing) return;
  note_record(node, state);
}

void AcquireOperation::granted(std::size_t node, std::string_view claim, std::uint64_t ticket) {
  if (!claiming_ || claim != claim_tag_) return;
  if (phase_ != Phase::ticketing && phase_ != Phase::pausing) return;
  if (node < kMaxNodes && claim_given_back_[node]) {
    // This node's grant of the claim was given back, and the message may
    // have been published before that (the subscriber connection keeps no
    // order with the lock connection): never counted. A grant the node
    // made since shows in the answer of the next record, which comes
    // about a round trip from now rather than at the refresh.
    record_soon(false);
    return;
  }
  if (ticket != (ticket_ ? *ticket_ : ticket_drawn_)) {
    // The node listed the place below the ticket (a pre-claim at its own
    // count): it may have served it ahead of an earlier ticket. The grant
    // goes back; the next record lists the place at the ticket.
    if (node < kMaxNodes && node < core_.nodes().size()) {
      // A record's "granted" from this node may still be on its way: not
      // counted either, until a record lists the place at the ticket there.
      claim_out_of_order_.set(node);
      give_back(node);
    }
    return;
  }
  claim_vote(node);
}

ScriptCall AcquireOperation::claim_release_call(bool leave) const {
  // The holder's release of the claim's value (fair_release, announced),
  // which also takes back the claim; the place goes only when `leave`.
  return detail::claim_release_call(resource_, value_, ttl_, queue_id_, keys_, leave);
}

void AcquireOperation::give_back(std::size_t node) {
  claim_granted_.reset(node);
  claim_given_back_.set(node);
  if (claim_given_back_tag_.size() <= node) claim_given_back_tag_.resize(node + 1, 0);
  claim_given_back_tag_[node] = claim_record_tag_;
  core_.nodes()[node]->send_cleanup(claim_release_call(false), grant_expiry());
}

void AcquireOperation::abandon_claim(bool leave) {
  if (!claiming_) return;
  claiming_ = false;
  claim_granted_.reset();
  const ScriptCall call = claim_release_call(leave);
  const TimePoint expires_at = grant_expiry();
  for (auto& node : core_.nodes()) node->send_cleanup(call, expires_at);
  if (attempt_.is_open()) (void)attempt_.close(core_.clock().now());
}

void AcquireOperation::leave_queue() {
  if (in_line_) {
    in_line_ = false;
    const QueueLeaveCall call{
        .sorted_sets = {waiting_key_}, .set_count = 1, .waiter_id = line_place_->id};
    // A place lasts at most the line's lease: after that there is nothing
    // to undo.
    const TimePoint expires_at = core_.clock().now() + line_lease();
    for (auto& node : core_.nodes()) send_cleanup_to(*node, call, expires_at);
  }
  if (claiming_) {
    // The claim's release takes the place too.
    abandon_claim(true);
    queued_ = false;
    return;
  }
  if (!queued_) return;
  queued_ = false;
  const QueueLeaveCall call{.sorted_sets = {queue_key_, queue_due_key_},
                            .set_count = 2,
                            .claims_hash = queue_claims_key_,
                            .waiter_id = queue_id_};
  const TimePoint expires_at = core_.clock().now() + kQueueEntryTtl;
  for (auto& node : core_.nodes()) send_cleanup_to(*node, call, expires_at);
}

bool AcquireOperation::line_up() {
  // A try-lock never waits, so it never takes a place anyone would name.
  if (plan_.max_retries == 0) return false;
  if (!line_place_) {
    line_place_ = core_.wakeups().line_place(keys_);
    waiting_key_ = waiting_key(keys_.key_prefix(), resource_.str());
    line_argument_ = line_argument(waiting_key_, line_place_->id, line_lease());
  }
  keep_line_mark();
  return true;
}

void AcquireOperation::keep_line_mark() {
  // Set before the attempt that may take the place leaves: a release after
  // it finds the mark and names the line's first waiter.
  if (line_marked_) return;
  line_marked_ = true;
  core_.wakeups().mark(channel_);
}

bool AcquireOperation::wait_in_rejoined_place() {
  if (kind_ != LockKind::mutex || plan_.max_retries == 0) return false;
  const TimePoint now = core_.clock().now();
  std::optional<WakeupHub::Rejoined> taken = core_.wakeups().take_rejoined(channel_, now);
  if (!taken) return false;
  line_place_ = std::move(taken->place);
  waiting_key_ = waiting_key(keys_.key_prefix(), resource_.str());
  line_argument_ = line_argument(waiting_key_, line_place_->id, line_lease());
  // Its attempts keep the place where a node holds it, and leave_queue
  // gives it up if the acquire ends without the lock.
  in_line_ = true;
  rejoined_ = true;
  keep_line_mark();
  wait_for_release();
  // Fewer than a majority of lines hold it: their names alone cannot make
  // a majority, so the acquire attempts as it would have.
  rejoined_places_ = taken->nodes.count();
  if (rejoined_places_ < core_.quorum()) return false;
  // The releases of the holders before it name it on a majority; the
  // retry timer stays the fallback for a name that never comes.
  const std::optional<Microseconds> pause = next_retry_delay(plan_, 1, now, random_unit());
  if (!pause) return false;
  pause_then_attempt(*pause);
  return true;
}

Microseconds AcquireOperation::copies_wait() const {
  if (last_round_trip_.count() > 0) return last_round_trip_;
  const std::optional<Microseconds> contended =
      core_.wakeups().recent_contention().contended_round_trip(channel_, core_.clock().now());
  return contended && contended->count() > 0 ? *contended : kCopiesWaitDefault;
}

Milliseconds AcquireOperation::line_lease() const { return 2 * plan_.mean_delay + kLineLeaseSlack; }

void AcquireOperation::wait_for_release() {
  if (waiting_for_release_) return;
  // Held by someone else: wake up when they release, not only when the
  // (jittered) retry timer, which stays as the fallback, fires. Stay
  // subscribed until the acquire completes (wakeup_hub.hpp).
  waiting_for_release_ = true;
  const auto self = std::static_pointer_cast<AcquireOperation>(shared_from_this());
  // A fair waiter is named by the release of the holder before it in the
  // queue; the resource's channel, which it listens on as well, carries
  // the releases that named no fair waiter (an unfair holder's, or one on
  // a node whose queue does not list this waiter yet).
  if (kind_ == LockKind::fair) {
    core_.wakeups().wait_in_line(*line_place_, self);
    for (const std::string& channel : channels_) core_.wakeups().wait(channel, self);
    return;
  }
  if (in_line_) {
    // In line: woken only when a release names this waiter (wakeup_hub.hpp).
    core_.wakeups().wait_in_line(*line_place_, self);
    return;
  }
  for (const std::string& channel : channels_) core_.wakeups().wait(channel, self);
}

bool AcquireOperation::wake() {
  if (phase_ == Phase::voting || phase_ == Phase::ticketing) {
    // A release came while this waiter's own attempt (or its ticket's
    // record) is still out (a name is given once: the node took the place
    // out of its line, or will not name a fair waiter again until the next
    // release). If the attempt fails, or once the ticket is recorded, the
    // next attempt starts at once instead of sleeping.
    woken_while_voting_ = true;
    return true;
  }
  if (phase_ != Phase::pausing || retry_timer_ == TimerQueue::kNone) return false;
  core_.timers().cancel(retry_timer_);
  retry_timer_ = TimerQueue::kNone;
  begin_attempt();
  return true;
}

std::size_t AcquireOperation::copies_needed() const {
  // The nodes known to hold this waiter's place: those that refused its
  // latest attempt, or for a rejoined place not tried yet, those that took
  // it. A name from fewer than a majority of them leaves the lock held on
  // the others (their release has not reached them yet).
  const std::size_t places =
      result_.attempts == 0 ? rejoined_places_ : static_cast<std::size_t>(refused_latest_.count());
  return std::min(core_.quorum(), std::max<std::size_t>(places, 1));
}

bool AcquireOperation::named(std::size_t node, bool first_copy) {
  if (kind_ == LockKind::mutex && in_line_ && phase_ == Phase::pausing &&
      retry_timer_ != TimerQueue::kNone && node < kMaxNodes) {
    // Asleep in line: attempt once a majority of the nodes holding the
    // place named it, since a release reaches the nodes one at a time and
    // an attempt started by the first name is refused by the nodes it has
    // not reached yet. Waiting for the rest lasts at most about a round
    // trip: a name that never comes from a node (its line differs, or its
    // copy is lost) does not keep the lock idle.
    named_by_.set(node);
    if (named_by_.count() >= copies_needed()) return wake();
    if (!awaiting_copies_) {
      awaiting_copies_ = true;
      core_.timers().cancel(retry_timer_);
      retry_timer_ = TimerQueue::kNone;
      pause_then_attempt(copies_wait());
    }
    return true;
  }
  if (first_copy) return wake();
  if (phase_ == Phase::voting) {
    named_while_voting_[node] = true;
    return true;
  }
  return refused_latest_[node] && wake();
}

void AcquireOperation::stop_waiting_for_release() {
  if (line_marked_) {
    line_marked_ = false;
    core_.wakeups().unmark(channel_);
  }
  if (!waiting_for_release_) return;
  waiting_for_release_ = false;
  // (Whichever it listened on; leaving the other is a no-op.)
  if (line_place_) core_.wakeups().leave_line(line_place_->number);
  for (const std::string& channel : channels_) core_.wakeups().leave(channel, this);
}

}  // namespace redlock::detail
