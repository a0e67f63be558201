#include "operations/acquire_operation.hpp"

#include <algorithm>
#include <charconv>
#include <string>

#include "scripts/reply_parse.hpp"
#include "scripts/script_calls.hpp"

namespace redlock::detail {

namespace {
// Proposals per attempt before giving up when newer tokens keep overtaking.
}  // namespace

AcquireOperation::AcquireOperation(ClientCore& core, Resource resource,
                                   const AcquireOptions& options,
                                   AsyncClient::AcquireCallback callback)
    : Operation(core),
      resource_(std::move(resource)),
      keys_(core.keys_for(resource_.str())),
      callback_(std::move(callback)) {
  lock_key_ = lock_key(keys_, resource_.str());
  channel_ = release_channel(keys_.key_prefix(), resource_.str());
  configure(options);
  if (resource_.empty() || is_bookkeeping_key(keys_.key_prefix(), lock_key_)) {
    argument_problem_ = make_error_code(errc::invalid_argument);
  }
  const bool asked_fair = options.fair.value_or(core.config().lock.fair);
  if (asked_fair && options.shared) argument_problem_ = make_error_code(errc::invalid_argument);
  // Unless the caller said fair = false, an exclusive acquire that waits
  // (unfenced: a claim needs no token round) waits in the fair queue
  // (docs/algorithm.md, "Waiting: the fair queue by default"): its
  // hand-over is the release's grant, one script per node. It turns fair
  // at its first refusal, or at once for a resource this client recently
  // had to wait for.
  may_turn_fair_ = !asked_fair && !options.fair.has_value() && !options.shared && !fenced_ &&
                   plan_.max_retries != 0;
  if (asked_fair) {
    become_fair();
  } else if (may_turn_fair_ && core.wakeups().recent_contention().contended_round_trip(
                                   channel_, core.clock().now())) {
    become_fair();
    keep_retry_budget_as_wait();
  }
  // The read side (kinds/read_write.cpp): the mutex's round on the same
  // key, with the readers' call.
  if (options.shared) kind_ = LockKind::shared;
}

Lock AcquireOperation::shape(const LockValue& value) const {
  Lock lock{resource_, value, ttl_, TimePoint{}, TimePoint{}, std::nullopt};
  lock.kind = kind_;
  switch (kind_) {
    case LockKind::mutex:
      break;
    case LockKind::multi:
      lock.resources = resources_;
      break;
    case LockKind::permit:
      lock.permits = permits_;
      break;
    case LockKind::shared:
      lock.shared = true;
      break;
    case LockKind::fair:
      lock.queue_id = queue_id_;
      break;
  }
  return lock;
}

ScriptCall AcquireOperation::attempt_call(const AttemptSetup& setup) const {
  return rules_of(kind_).attempt_call(shape(value_), keys_, setup);
}

MemberCalls AcquireOperation::attempt_calls(const AttemptSetup& setup) const {
  if (parts_.empty()) return attempt_call(setup);
  const Lock whole = shape(value_);
  MemberCalls calls;
  for (const SlotPart& part : parts_) {
    calls.add(rules_of(kind_).attempt_call(part_lock(whole, part), part.keys, setup));
  }
  return calls;
}

void AcquireOperation::become_fair() {
  // Waiting in line (fair_scripts.hpp): the mutex's round and key, with
  // the queue's script.
  kind_ = LockKind::fair;
  may_turn_fair_ = false;
  const std::string& prefix = keys_.key_prefix();
  // The waiter's id in the queue is its place in this client's line, so
  // that a release can name it (fair_scripts.hpp, fair_release); a mutex
  // waiter turning fair keeps the place it took.
  if (!line_place_) line_place_ = core_.wakeups().line_place(keys_);
  queue_id_ = line_place_->id;
  queue_key_ = queue_key(prefix, resource_.str());
  queue_due_key_ = queue_due_key(prefix, resource_.str());
  queue_claims_key_ = queue_claims_key(prefix, resource_.str());
  ticket_field_ = ticket_field(resource_.str());
}

void AcquireOperation::keep_retry_budget_as_wait() {
  // A fair waiter records every 100 ms at least, and each record counts
  // as an attempt: a budget of retries would run out sooner than the
  // mutex's retries (each after a pause of up to twice the mean delay)
  // would have. It becomes a wait of as long as those retries could
  // take.
  if (plan_.deadline || plan_.max_retries <= 0) return;
  plan_.deadline = called_at_ + (plan_.max_retries + 1) * 2 * plan_.mean_delay;
  plan_.max_retries = -1;
}

void AcquireOperation::configure(const AcquireOptions& options) {
  const LockConfig& lock = core_.config().lock;
  const std::string& prefix = keys_.key_prefix();
  ttl_ = options.ttl.value_or(lock.ttl);
  fence_key_ = fence_key(prefix);
  marker_key_ = marker_key(prefix);
  recovering_key_ = recovering_key(prefix);
  defence_flag_ = lock.amnesia_defence ? "1" : "0";
  channels_ = {channel_};
  ttl_text_ = std::to_string(ttl_.count());
  plan_.mean_delay = options.retry_delay.value_or(lock.retry_delay);
  plan_.max_retries = options.retry_count.value_or(options.wait ? -1 : lock.retry_count);
  if (options.wait) plan_.deadline = core_.clock().now() + *options.wait;
  fenced_ = options.fenced.value_or(lock.fenced);
  if (options.payload) payload_ = ":" + *options.payload;
  called_at_ = core_.clock().now();
  // With the amnesia defence, a recovered node waits max_ttl: a longer lock
  // could outlive that wait.
  const bool beyond_max_ttl = lock.amnesia_defence && ttl_ > effective_max_ttl(lock);
  const bool payload_too_long = options.payload && options.payload->size() > kMaxPayloadBytes;
  if (ttl_.count() <= 0 || plan_.mean_delay.count() < 0 || payload_too_long ||
      (options.wait && options.wait->count() < 0) || beyond_max_ttl) {
    argument_problem_ = make_error_code(errc::invalid_argument);
  }
}

void AcquireOperation::fail_later(std::error_code why) {
  // Never answered from inside the starting call.
  phase_ = Phase::done;
  core_.turn().post([self = shared_from_this(), this, why] {
    core_.finished(this);
    finish(why);
  });
}

void AcquireOperation::start() {
  if (!core_.config_problem().empty()) return fail_later(make_error_code(errc::config_error));
  if (argument_problem_) return fail_later(argument_problem_);
  if (wait_in_rejoined_place() || enqueue_drawn_ticket()) return;
  if (!defer_first_attempt()) begin_attempt();
}

bool AcquireOperation::defer_first_attempt() {
  if (!courtesy_) return false;
  const TimePoint now = core_.clock().now();
  const std::optional<Microseconds> round_trip =
      core_.wakeups().recent_contention().contended_round_trip(channel_, now);
  // The common case, an uncontended resource, costs no getrandom(2).
  if (!round_trip) return false;
  const Microseconds courtesy = courtesy_pause(plan_, now, round_trip, random_unit());
  if (courtesy.count() <= 0) return false;
  pause_then_attempt(courtesy);
  return true;
}

void AcquireOperation::pause_then_attempt(Microseconds delay) {
  phase_ = Phase::pausing;
  retry_timer_ = core_.timers().schedule_after(delay, [self = shared_from_this(), this] {
    retry_timer_ = TimerQueue::kNone;
    if (phase_ == Phase::pausing) begin_attempt();
  });
}

void AcquireOperation::begin_attempt() {
  // A fair waiter with a ticket and a claim records again instead: the
  // record renews its place and claim, and is granted where it is first
  // and the lock free.
  if (kind_ == LockKind::fair && ticket_ && claims()) {
    record_again();
    return;
  }
  // A node still to answer an earlier attempt may have granted it: its
  // undo goes now, ahead of this attempt on the node's connection, or the
  // earlier grant would refuse this one there.
  undo_all_awaited();
  token_.reset();
  ++result_.attempts;
  Metrics& metrics = core_.metrics();
  metrics.acquire_attempts.fetch_add(1, std::memory_order_relaxed);
  if (result_.attempts > 1) metrics.acquire_retries.fetch_add(1, std::memory_order_relaxed);
  value_ = LockValue::random();
  if (!payload_.empty()) value_ = LockValue(value_.str() + payload_);
  busy_ = 0;
  refused_latest_.reset();
  named_while_voting_.reset();
  named_by_.reset();
  awaiting_copies_ = false;
  phase_ = Phase::voting;
  if (!tally_) tally_ = rules_of(kind_).attempt_tally(shape(value_));
  tally_->reset(core_.nodes().size());
  // t0 is read before the first request is queued, so everything that
  // delays the requests counts against validity.
  attempt_.open(core_.config().nodes, core_.clock().now(), TimePoint::max(), part_count());
  send_attempt();
}

void AcquireOperation::send_attempt() {
  auto& nodes = core_.nodes();
  auto self = shared_from_this();
  if (kind_ == LockKind::mutex) {
    // A waiter that turns fair at its first refusal waits in the fair
    // queue, not in the mutex's line: it takes no place there.
    const bool lining_up = (!may_turn_fair_ || in_line_) && line_up();
    // The first character says whether an earlier attempt may hold a place.
    if (lining_up) line_argument_[0] = in_line_ ? '1' : '0';
    const std::string_view line = lining_up ? std::string_view(line_argument_) : std::string_view();
    // Without a fence counter to read or a place in line to keep, the
    // acquire needs no script: it goes as plain commands in one transaction
    // (scripts.hpp, acquire_set), which costs a node less than half the
    // script's work; a node that requires replicas keeps the script, whose
    // call WAIT follows.
    const bool plain = !lining_up && !fenced_;
    const bool needs_marker = defence_flag_ == "1";
    bool script_set = false;
    ScriptCall call;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      auto& node = nodes[i];
      if (plain && node->min_replicas() == 0 && !node->refused_transaction() &&
          (!needs_marker || core_.seen_marked(i))) {
        send_to(*node,
                AcquireSetCall{.lock_key = lock_key_,
                               .marker_key = marker_key_,
                               .recovering_key = recovering_key_,
                               .value = value_.str(),
                               .ttl_ms = ttl_text_,
                               .amnesia_defence = needs_marker},
                true, attempt_.started(), self, attempt_.tag());
        continue;
      }
      // The kind's call (kinds/mutex.cpp): this attempt's value and place,
      // built when the first node needs it (most attempts go as the plain
      // transaction: this is the acquire's hot path).
      if (!script_set) {
        call = attempt_call(AttemptSetup{
            .value = value_.str(), .ttl_text = ttl_text_, .fenced = fenced_, .line = line});
        script_set = true;
      }
      node->send_call(call, true, attempt_.started(), self, attempt_.tag());
    }
    in_line_ = in_line_ || lining_up;
    return;
  }
  AttemptSetup setup{.value = value_.str(), .ttl_text = ttl_text_, .fenced = fenced_};
  std::string ticket;
  std::string first_permit;
  if (kind_ == LockKind::fair) {
    if (ticket_) ticket = std::to_string(*ticket_);
    setup.ticket = ticket;
    // Without a ticket, a refusal draws one (a try-lock never waits, so
    // it draws none).
    if (!ticket_ && plan_.max_retries != 0) setup.counter_field = ticket_field_;
    attempt_draws_ = 0;
    attempt_draw_max_ = 0;
  }
  if (kind_ == LockKind::permit) {
    // Each attempt tries a random permit first, so that two clients taking
    // permits at once mostly take different ones instead of splitting the
    // nodes over the same one; the nodes still agree on it when they agree
    // on which permits are free.
    // The attempt's fresh value is random already: its first hex digits
    // choose, with no further getrandom(2).
    const std::string& value = value_.str();
    std::uint32_t bits = 0;
    (void)std::from_chars(value.data(), value.data() + std::min<std::size_t>(7, value.size()), bits,
                          16);
    first_permit = std::to_string(bits % permits_);
    setup.first_permit = first_permit;
  }
  const MemberCalls calls = attempt_calls(setup);
  for (auto& node : nodes) send_calls(*node, calls, true, attempt_.started(), self, attempt_.tag());
}

void AcquireOperation::on_response(std::size_t node, std::uint32_t tag,
                                   const NodeResponse& response) {
  if (tag == kCleanupTag) return;
  if ((tag & kFenceTagBit) != 0) {
    if (!fencing_.counts(tag, response)) {
      // A node awaiting its second merge answers after its round was
      // decided as well as before: either way a recovery round merges it.
      if (answers_unmerged(response)) request_recovery();
      if (claiming_ && tag == claim_record_tag_ && response.kind == NodeResponse::Kind::reply) {
        on_late_record(node, response);
      }
      return;
    }
    if (phase_ == Phase::ticketing) {
      on_ticket_response(node, response);
    } else {
      on_fence_response(node, response);
    }
    return;
  }
  if (!attempt_.counts(tag, response)) {
    handle_stale(tag, node, response);
    return;
  }
  on_vote(node, response);
}

void AcquireOperation::on_vote(std::size_t node, const NodeResponse& response) {
  NodeOutcome& part = attempt_.answer(node, response);
  std::int64_t drawn = 0;
  parse_acquire_response(response, core_.nodes()[node]->min_replicas(), part,
                         kind_ == LockKind::fair ? &drawn : nullptr);
  // (Each part: the merge below may hide a slot without its marker behind
  // another part's failure.)
  if (!parts_.empty()) note_if_unmarked(part);
  NodeOutcome* whole = attempt_.whole(node, part);
  if (whole == nullptr) return;  // (a set's part: the node's other parts are to come)
  NodeOutcome& outcome = *whole;
  if (drawn > 0) {
    ++attempt_draws_;
    attempt_draw_max_ = std::max(attempt_draw_max_, static_cast<std::uint64_t>(drawn));
  }
  note_if_unmarked(outcome);
  note_marker(node, outcome);
  if (outcome.status == NodeStatus::granted && core_.config().lock.strict_persistence &&
      core_.nodes()[node]->persistence() != Persistence::aof_always) {
    // Granted, but by a node that may forget it: not a vote in strict mode.
    // The unlock of a failed attempt still reaches it (status error).
    outcome.status = NodeStatus::error;
    outcome.detail = "persistence " + std::string(to_string(core_.nodes()[node]->persistence())) +
                     " cannot keep fencing promises (strict_persistence is on)";
  }
  // A node that answered "busy" or "recovering" provably did not store this
  // attempt's fresh value; every other node might (a grant, or a reply
  // still on its way).
  if (outcome.status != NodeStatus::granted && attempt_.some_part_stored(node)) {
    // A set refused (or failed, or unanswered) on this node in one slot
    // and stored in another: what it may have stored is undone before its
    // refusal counts, so that the set is all or nothing on every node
    // (slot_parts.hpp).
    undo_partial_set(node);
    attempt_.unchanged(node);
  } else if (outcome.status == NodeStatus::busy || outcome.status == NodeStatus::recovering) {
    attempt_.unchanged(node);
  }
  if (outcome.status == NodeStatus::busy) {
    ++busy_;
    refused_latest_[node] = true;
  }
  const bool granted = outcome.status == NodeStatus::granted;
  (void)attempt_.vote(granted);
  if (granted) {
    tally_->grant(outcome.permit);
  } else if (outcome.status == NodeStatus::permits_differ) {
    tally_->conflict();
  } else {
    tally_->refuse();
  }
  if (tally_->decision() != Decision::pending) decide();
}

void AcquireOperation::decide() {
  const RoundTiming timing = attempt_.close(core_.clock().now());
  last_round_trip_ = timing.elapsed();
  const Decision decision = tally_->decision();
  // The kind's tally says whether the nodes were split (a rival racing for
  // the same majority; for a semaphore, grants of different permits) and
  // how many are held elsewhere; a node that records another permit count
  // ends the acquire (fail_attempt).
  split_ = decision != Decision::won && tally_->split(busy_);
  if (decision != Decision::won) {
    fail_attempt(acquire_failure_reason(attempt_.votes().nodes(), tally_->held_elsewhere(busy_)));
    return;
  }
  if (kind_ == LockKind::permit) {
    permit_ = tally_->winner();
    undo_other_permits();
  }
  // (A set across slots: a node's parts still to answer are checked as
  // they come, handle_stale.)
  if (!parts_.empty()) won_tag_ = attempt_.tag();
  if (fenced_) {
    begin_fencing();
    return;
  }
  hand_out_if_valid();
}

Microseconds AcquireOperation::validity_now() const {
  return validity_left(ttl_, elapsed_between(attempt_.started(), core_.clock().now()),
                       core_.drift_for(ttl_));
}

void AcquireOperation::hand_out_if_valid() {
  // Measured after everything the attempt did, phase 2 included.
  const Microseconds validity = validity_now();
  if (validity_sufficient(validity, core_.config().lock.min_validity)) {
    succeed(validity);
    return;
  }
  fail_attempt(make_error_code(errc::validity_too_short));
}

void AcquireOperation::begin_fencing() {
  std::uint64_t highest = 0;
  for (const NodeOutcome& outcome : attempt_.outcomes()) {
    // A permit's counter is its own: a node that granted another permit
    // read that one's.
    if (kind_ == LockKind::permit && outcome.permit != permit_) continue;
    if (outcome.status == NodeStatus::granted && outcome.fence_counter > 0) {
      highest = std::max(highest, static_cast<std::uint64_t>(outcome.fence_counter));
    }
  }
  fence_rounds_ = 0;
  const auto proposal = first_proposal(highest);
  if (!proposal) {
    fail_attempt(make_error_code(errc::fencing_failed));
    return;
  }
  propose(*proposal);
}

void AcquireOperation::propose(std::uint64_t token) {
  ++fence_rounds_;
  phase_ = Phase::fencing;
  fencing_.open(core_.config().nodes, core_.clock().now(), TimePoint::max(), part_count());
  proposal_.emplace(core_.nodes().size(), token);
  const std::string token_text = std::to_string(token);
  auto self = shared_from_this();
  if (kind_ == LockKind::multi) {
    // One token for every resource: larger than each one's counter, so it
    // orders this holder after every earlier holder of each of them.
    const MemberCalls calls = fence_all_calls(core_, resources_, token);
    for (auto& node : core_.nodes()) {
      send_calls(*node, calls, false, fencing_.started(), self, fencing_.tag());
    }
    return;
  }
  const std::string field =
      kind_ == LockKind::permit ? permit_fence_prefix_ + std::to_string(permit_) : resource_.str();
  const FenceCall call{.fence_key = fence_key_,
                       .marker_key = marker_key_,
                       .recovering_key = recovering_key_,
                       .field = field,
                       .token = token_text,
                       .amnesia_defence = defence_flag_ == "1"};
  for (auto& node : core_.nodes()) {
    send_to(*node, call, false, fencing_.started(), self, fencing_.tag());
  }
}

void AcquireOperation::on_fence_response(std::size_t node, const NodeResponse& response) {
  bool unmerged = false;
  const bool counted = count_fence_answer(fencing_, node, response, *proposal_,
                                          &attempt_.outcomes()[node], &unmerged);
  // Recovered after data loss and awaiting its second merge: a recovery
  // round merges it (its delay is over), this round goes without it.
  if (unmerged) request_recovery();
  if (!counted) return;
  const Decision decision = proposal_->decision();
  if (decision == Decision::pending) return;
  (void)fencing_.close(core_.clock().now());
  if (decision == Decision::won) {
    token_ = proposal_->proposal();
    hand_out_if_valid();
    return;
  }
  const auto next = next_proposal(*proposal_, fence_rounds_, kMaxFenceRounds);
  if (next && validity_sufficient(validity_now(), core_.config().lock.min_validity)) {
    propose(*next);
    return;
  }
  fail_attempt(make_error_code(errc::fencing_failed));
}

void AcquireOperation::note_marker(std::size_t node, const NodeOutcome& outcome) {
  // Let through by the node rules: the node is marked (scripts.hpp,
  // acquire_set); refused for want of its marker: it is not.
  if (outcome.status == NodeStatus::granted || outcome.status == NodeStatus::busy) {
    core_.note_marked(node, true);
  } else if (outcome.status == NodeStatus::recovering && outcome.holder_ttl_ms < 0) {
    core_.note_marked(node, false);
  }
}

void AcquireOperation::note_if_unmarked(const NodeOutcome& outcome) {
  // A node without its identity marker: recover it whatever this attempt's
  // outcome — also when its answer came after the decision (the core runs
  // one round at a time for all its operations).
  if (outcome.status != NodeStatus::recovering || outcome.holder_ttl_ms >= 0) return;
  request_recovery();
}

void AcquireOperation::request_recovery() {
  if (recovery_requested_) return;
  recovery_requested_ = true;
  recover([](bool) {});
}

void AcquireOperation::recover(std::function<void(bool progressed)> done) {
  // A set's every slot: which part's answer asked for it is not kept.
  if (parts_.size() < 2) return core_.recovery().request(keys_, std::move(done));
  recover_parts(core_.recovery(), parts_, std::move(done));
}

bool AcquireOperation::saw_unmarked_node() {
  const auto& outcomes = attempt_.outcomes();
  return std::any_of(outcomes.begin(), outcomes.end(), [](const NodeOutcome& outcome) {
    return outcome.status == NodeStatus::recovering && outcome.holder_ttl_ms < 0;
  });
}

void AcquireOperation::fail_attempt(std::error_code why) {
  last_failure_ = why;
  if (claiming_) {
    // A claim that won too late to be valid: it goes, and the next record
    // makes a new one.
    abandon_claim(false);
    retry_or_finish(why, next_pause());
    return;
  }
  if (tally_ && tally_->conflicted()) {
    // Another count is recorded while a permit is held: this client's
    // count is wrong (or theirs), and retrying cannot change it.
    unlock_attempt(true);
    core_.metrics().acquire_losses.fetch_add(1, std::memory_order_relaxed);
    complete(make_error_code(errc::invalid_argument));
    return;
  }
  if (saw_unmarked_node()) {
    unlock_attempt(true);
    // Some node has no identity marker: start (or join) a recovery round.
    // When it marks the nodes at once (a brand-new quorum), try again right
    // away, once per call, outside the retry budget.
    phase_ = Phase::recovering;
    auto self = std::static_pointer_cast<AcquireOperation>(shared_from_this());
    recover([self, why](bool progressed) {
      if (self->phase_ != Phase::recovering) return;
      for (NodeOutcome& outcome : self->attempt_.outcomes()) {
        if (outcome.status == NodeStatus::recovering && outcome.holder_ttl_ms < 0) {
          outcome.detail += " (recovery: " + self->core_.recovery().report() + ")";
        }
      }
      if (progressed && !self->recovery_attempt_used_) {
        self->recovery_attempt_used_ = true;
        ++self->free_attempts_;
        self->begin_attempt();
        return;
      }
      self->retry_or_finish(why, self->next_pause());
    });
    return;
  }
  const std::optional<Microseconds> pause = next_pause();
  // The unlock of a split vote that is retried shortly is not announced as
  // a release: the lock was never held, and waking every waiter of every
  // client would only start the next collision (the splitters retry on
  // their own, see split_retry_pause). Any other failed attempt is
  // announced, since its grants may be what the waiters saw as "held".
  // A node still to answer when the others refused may grant after the
  // decision: that late grant makes the vote a split too, and its undo is
  // not announced while the acquire goes on (undo_all_awaited announces
  // what is left when it ends). Announced, it named the next waiter in that
  // node's line while this waiter, named first and refused only by nodes
  // the release had not reached yet, was about to win: the line's order
  // was lost whenever the nodes answered unevenly.
  unlock_attempt(!(split_ && pause), true, !(split_ || busy_ > 0));
  // A mutex acquire that may wait in the fair queue does so from its first
  // refusal: it draws its ticket (a round of its own: the mutex's refusal
  // drew none) and records it with a claim.
  if (may_turn_fair_ && pause && busy_ > 0) {
    become_fair();
    keep_retry_budget_as_wait();
    attempt_draws_ = 0;
  }
  if (kind_ == LockKind::fair && !ticket_ && pause && busy_ > 0) {
    begin_ticket(why, *pause);
    return;
  }
  retry_or_finish(why, pause);
}

std::optional<Microseconds> AcquireOperation::next_pause() const {
  std::optional<Microseconds> pause = next_retry_delay(plan_, result_.attempts - free_attempts_,
                                                       core_.clock().now(), random_unit());
  if (pause && split_) pause = std::min(*pause, split_retry_pause(last_round_trip_, random_unit()));
  // A waiter in line renews its place by attempting.
  if (pause && ticket_) pause = std::min(*pause, kFairRefresh);
  return pause;
}

void AcquireOperation::retry_or_finish(std::error_code why, std::optional<Microseconds> delay) {
  if (!delay) {
    core_.metrics().acquire_losses.fetch_add(1, std::memory_order_relaxed);
    complete(why);
    return;
  }
  // Named while voting by a node that then refused, or refused and then
  // named: that node has freed the lock since.
  const bool renamed = (refused_latest_ & named_while_voting_).any();
  if (woken_while_voting_ || renamed) delay = Microseconds(0);
  woken_while_voting_ = false;
  pause_then_attempt(*delay);
  if (busy_ > 0) wait_for_release();
}

void AcquireOperation::succeed(Microseconds validity) {
  const TimePoint started = attempt_.started();
  Lock lock = shape(value_);
  lock.started = started;
  lock.valid_until = started + validity;
  lock.fence = token_;
  if (kind_ == LockKind::multi && token_) lock.fences.assign(resources_.size(), *token_);
  if (kind_ == LockKind::permit) lock.permit = permit_;
  if (kind_ == LockKind::fair) {
    queued_ = false;    // the place goes with the lock's release
    claiming_ = false;  // the claim is the lock
  }
  // The nodes that granted this attempt took the waiter out of their line;
  // one that refused it put it back at the end. (A waiter that turned fair
  // and won by its claim left its place in the mutex's line: it goes too.)
  if (busy_ > 0 || (kind_ == LockKind::fair && in_line_)) leave_queue();
  in_line_ = false;
  result_.validity = std::chrono::floor<Milliseconds>(validity);
  result_.lock = std::move(lock);
  Metrics& metrics = core_.metrics();
  metrics.acquire_wins.fetch_add(1, std::memory_order_relaxed);
  const TimePoint now = core_.clock().now();
  metrics.acquire_wait.observe(elapsed_between(called_at_, now));
  // How many retries this acquire needed decides whether the next one of
  // the resource lets the waiters woken by this lock's release go first.
  // A wait in a rejoined place, or with a ticket its release drew, stands
  // for the refused attempt that would otherwise have put this waiter in
  // line or drawn its ticket.
  const int retries = result_.attempts - free_attempts_ - 1 + (rejoined_ || predrawn_ ? 1 : 0);
  core_.wakeups().recent_contention().note(channel_, now, retries, last_round_trip_);
  complete({});
}

void AcquireOperation::complete(std::error_code error) {
  // The core may hold the last reference; keep this alive to the end.
  auto keep = shared_from_this();
  undo_all_awaited(true);
  if (error) leave_queue();
  stop_waiting_for_release();
  core_.finished(this);
  finish(error);
}

void AcquireOperation::finish(std::error_code error) {
  phase_ = Phase::done;
  result_.error = error;
  result_.nodes = attempt_.take_outcomes();
  deliver(callback_, std::move(result_));
}

void AcquireOperation::cancel() {
  if (phase_ == Phase::done) return;
  undo_all_awaited(true);
  leave_queue();
  if (in_flight()) {
    (void)attempt_.close(core_.clock().now());
    unlock_attempt(true);
  }
  // (Also a fair waiter's ticket round: its late answers are then not
  // counted.)
  if (fencing_.is_open()) (void)fencing_.close(core_.clock().now());
  phase_ = Phase::done;
  core_.timers().cancel(retry_timer_);
  retry_timer_ = TimerQueue::kNone;
  stop_waiting_for_release();
  core_.turn().post(
      [self = shared_from_this(), this] { complete(make_error_code(errc::cancelled)); });
}

void AcquireOperation::abort(std::error_code why) {
  if (phase_ == Phase::done) return;
  undo_all_awaited(true);
  leave_queue();
  if (in_flight()) {
    (void)attempt_.close(core_.clock().now());
    unlock_attempt(true);
  }
  if (fencing_.is_open()) (void)fencing_.close(core_.clock().now());
  core_.timers().cancel(retry_timer_);
  retry_timer_ = TimerQueue::kNone;
  stop_waiting_for_release();
  finish(why);
}

}  // namespace redlock::detail
