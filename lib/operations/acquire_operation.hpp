// One acquire (docs/algorithm.md, "Acquire"), possibly over several attempts.
#pragma once

#include <bitset>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "kinds/fair.hpp"
#include "kinds/multi.hpp"
#include "operations/client_core.hpp"
#include "operations/operation.hpp"
#include "operations/quorum_round.hpp"
#include "operations/slot_parts.hpp"
#include "protocol/attempt_tally.hpp"
#include "protocol/fence_round.hpp"
#include "protocol/quorum.hpp"
#include "protocol/retry_policy.hpp"
#include "redlock/config.hpp"
#include "scripts/reply_parse.hpp"

namespace redlock::detail {

// Phase-2 (fencing) requests carry this bit, so they never match an
// attempt's tag.
inline constexpr std::uint32_t kFenceTagBit = 0x80000000u;

// The release script publishes on the channel it is given, and not at all
// for the empty name: an unlock sent with it wakes no one.
inline constexpr std::string_view kNoChannel = "";

// The most bytes of AcquireOptions::payload (Election::kMaxPayloadBytes).
inline constexpr std::size_t kMaxPayloadBytes = 4096;

class AcquireOperation final : public Operation, public Wakeable {
 public:
  // A lock on one resource.
  AcquireOperation(ClientCore& core, Resource resource, const AcquireOptions& options,
                   AsyncClient::AcquireCallback callback);
  // A lock over every one of `resources` at once (acquire_all).
  AcquireOperation(ClientCore& core, std::vector<Resource> resources, const AcquireOptions& options,
                   AsyncClient::AcquireCallback callback);
  // One permit of `semaphore` (permit_acquire).
  AcquireOperation(ClientCore& core, const Semaphore& semaphore, const AcquireOptions& options,
                   AsyncClient::AcquireCallback callback);

  void start();
  // A member of a set that waits its turn (set_turn_operation.hpp): no
  // courtesy pause before its first attempt, since the set has waited
  // already and the pause would only let the member's line grow. Before
  // start().
  void skip_courtesy() noexcept { courtesy_ = false; }
  void on_response(std::size_t node, std::uint32_t tag, const NodeResponse& response) override;
  void cancel() override;
  void abort(std::error_code why) override;
  bool wake() override;
  // Named in line by `node` (or, outside a line, `node`'s copy of a
  // release on the resource's channel whose first copy woke this waiter).
  // A first copy wakes as wake() does. A later copy of the same release
  // wakes only when `node` refused this waiter's latest attempt: that node
  // freed the lock after the attempt reached it (and took the waiter's
  // place out of its line), so no other word of it will come from that
  // node. Received while voting, it makes a failed attempt retry at once.
  bool named(std::size_t node, bool first_copy) override;
  // Fair: `node`'s release granted the claim tagged `claim` to the place it
  // lists at `ticket`: a vote for the current claim's value when that is
  // the waiter's ticket, else given back (a pre-claimed place a node
  // recorded at a count below the ticket: out of order there). Any other
  // tag is ignored (that claim's release undoes it).
  void granted(std::size_t node, std::string_view claim, std::uint64_t ticket) override;

 private:
  // A fair waiter's place in the queue lives this long on a node unless its
  // waiter renews it, which every attempt does, at least every
  // kFairRefresh: a waiter that died holds the queue up for at most the
  // entry's life (docs/safety.md, "Fair locks").
  static constexpr Milliseconds kQueueEntryTtl = kFairQueueEntryTtl;
  static constexpr Microseconds kFairRefresh{std::chrono::milliseconds(100)};
  // A mutex waiters' line outlives the longest pause between a waiter's
  // attempts (twice the mean retry delay) by this much: while any waiter
  // lives, its refusals keep the line; a dead waiter's place goes when a
  // release names it, or with the line.
  static constexpr Milliseconds kLineLeaseSlack{100};

  // Where the acquire stands; exactly one at a time.
  enum class Phase {
    pausing,     // before the first attempt (courtesy) or between attempts
    voting,      // an attempt's acquire round is open
    fencing,     // a fenced attempt's proposal round is open
    ticketing,   // a fair waiter's ticket round (draw, then enqueue) is open
    recovering,  // waiting for the recovery round an attempt asked for
    done,        // the callback has run or is posted; nothing more happens
  };

  // Mutex: takes a place in line this client's release of the lock left
  // (WakeupHub::take_rejoined); true when the acquire then waits to be
  // named before its first attempt (a majority of lines hold the place).
  [[nodiscard]] bool wait_in_rejoined_place();
  // Fair: records the ticket this client's release of the lock drew
  // (WakeupHub::take_drawn_ticket) instead of a first attempt that would be
  // refused and draw it; true when it did.
  [[nodiscard]] bool enqueue_drawn_ticket();
  // Takes the place and claim the release that drew the ticket recorded
  // (WakeupHub::PreClaim) as this acquire's; false when it cannot (the
  // acquire makes no claim, or another TTL, payload or resource).
  [[nodiscard]] bool adopt_pre_claim(const WakeupHub::DrawnTicket& drawn);
  // How many nodes' names a waiter asleep in line waits for before it
  // attempts, and for how long at most (about a round trip).
  [[nodiscard]] std::size_t copies_needed() const;
  [[nodiscard]] Microseconds copies_wait() const;
  static constexpr Microseconds kCopiesWaitDefault{1000};
  // Schedules the first attempt after a courtesy pause when this client
  // finds the resource contended (courtesy_pause); false when it may start
  // at once.
  [[nodiscard]] bool defer_first_attempt();
  // The settings every kind shares; the kind's keys are set up by its
  // constructor.
  void configure(const AcquireOptions& options);
  // The lock this acquire would hand out, with `value` and no times or
  // token: its kind's fields (resources, permit count, shared, queue id)
  // set, so that its kind's calls (kinds/kind.hpp) apply to it.
  [[nodiscard]] Lock shape(const LockValue& value) const;
  // This attempt's call (its value value_), from the kind's rules
  // (KindRules::attempt_call); a set's is one per part.
  [[nodiscard]] ScriptCall attempt_call(const AttemptSetup& setup) const;
  [[nodiscard]] MemberCalls attempt_calls(const AttemptSetup& setup) const;
  // How many calls each node's request of a round is (parts_).
  [[nodiscard]] std::uint32_t part_count() const noexcept {
    return parts_.empty() ? 1 : static_cast<std::uint32_t>(parts_.size());
  }
  // Sets the acquire up as a fair waiter's (the fair queue's script and
  // keys, its id in the queue).
  void become_fair();
  // For a mutex acquire turning fair: a retry budget becomes the wait
  // those retries could have taken (a fair waiter's records count as
  // attempts, at least every 100 ms).
  void keep_retry_budget_as_wait();
  void send_attempt();
  // A permit won: undoes the grants of other permits the attempt may have
  // made on the nodes that did not grant the winning one.
  void undo_other_permits();
  // The same on one node whose answer did not say what it did.
  void undo_other_permits_on(std::size_t node);
  // The call that undoes this kind's grant of `value` on a node: for a
  // permit, of the permit the node granted (`permit`), or of every permit
  // when it is not known.
  [[nodiscard]] MemberCalls undo_calls(const LockValue& value, bool announce,
                                       std::int64_t permit) const;
  // The release of `value` from every permit but `except` (release_all):
  // the undo where which permit a node granted is not known.
  [[nodiscard]] ScriptCall permits_release_call(const LockValue& value, bool announce,
                                                std::optional<std::uint32_t> except) const;
  void begin_attempt();
  void on_vote(std::size_t node, const NodeResponse& response);
  void decide();
  void hand_out_if_valid();
  void begin_fencing();
  // Fair: a waiter refused at `why` draws a ticket from the quorum and
  // records it on the nodes, then waits `pause` as after any refusal.
  void begin_ticket(std::error_code why, Microseconds pause);
  void send_ticket_round();
  void on_ticket_response(std::size_t node, const NodeResponse& response);
  // Fair claims (docs/algorithm.md, "Fair locks", the claim): an unfenced
  // fair waiter that may wait records its ticket with a claim, a value the
  // release that frees the lock on a node grants it there. The claim is an
  // attempt whose round (attempt_, opened as the claim is made, so its t0
  // comes before any node could have set the value) collects its votes
  // from the records' answers and the grants the releases publish.
  [[nodiscard]] bool claims() const noexcept;
  // A new claim: a fresh value and tag, attempt_ opened, counted as an
  // attempt.
  void open_claim();
  // The ticket's record again (renewing the place and the claim, and
  // granted at once where the waiter is first and the lock free), instead
  // of an attempt: with a new claim when the current one is too old to
  // leave a useful validity.
  void record_again();
  // `node` holds the claim's value: a vote; a majority wins the lock.
  void claim_vote(std::size_t node);
  // A record's answer after its round was decided (the grants a majority's
  // answers did not include).
  void on_late_record(std::size_t node, const NodeResponse& response);
  // Gives the claim up on every node (fair_release of its value, the
  // place kept unless `leave`): a node that granted it serves its next
  // waiter, one that kept it forgets it.
  void abandon_claim(bool leave);
  [[nodiscard]] ScriptCall claim_release_call(bool leave) const;
  // Gives `node`'s grant of the claim back (the claim's release there,
  // the place kept) and no longer counts its vote.
  void give_back(std::size_t node);
  // A record's answer from `node` for the current claim: a grant is a
  // vote; a node that puts another waiter first gets its grant back.
  void note_record(std::size_t node, QueueState state);
  // The pause before the next record while some nodes granted the claim.
  [[nodiscard]] Microseconds quick_record_pause();
  // While asleep between records: the next record about a round trip from
  // now (quick_record_pause), its doubling begun again when asked.
  void record_soon(bool restart_doubling);
  // Gives up the waiter's place on every node: a fair waiter's in the
  // queue, a mutex waiter's in the waiting line (an acquire that ends
  // without the lock, or won while some node lined it up again).
  void leave_queue();
  // Mutex: whether this attempt takes a place in the waiting line when it
  // is refused (whenever the acquire may retry); names the waiter the first
  // time.
  [[nodiscard]] bool line_up();
  // How long the nodes keep the line unless a refusal renews it: twice the
  // mean retry delay, the longest pause between a waiter's attempts, plus
  // kLineLeaseSlack.
  [[nodiscard]] Milliseconds line_lease() const;
  // Subscribes to the release channels (once per acquire).
  void wait_for_release();
  void propose(std::uint64_t token);
  void on_fence_response(std::size_t node, const NodeResponse& response);
  [[nodiscard]] Microseconds validity_now() const;
  [[nodiscard]] bool in_flight() const noexcept {
    return phase_ == Phase::voting || phase_ == Phase::fencing;
  }
  void fail_attempt(std::error_code why);
  // `announce`: publish the deletions as a release, to wake waiters.
  // Failed attempts whose late grants must still be undone: the attempt's
  // tag and value, whether its undo is announced, and the nodes (of the
  // first 64) that had not answered at the decision, whose undo waits for
  // their answer (unlock_attempt).
  struct Abandoned {
    std::uint32_t tag = 0;
    LockValue value{""};
    bool announce = false;
    std::uint64_t awaiting = 0;
  };  // (abandoned_).
  // Undoes the attempt on every node it may have changed. `after_answers`:
  // a node that had not answered at the decision is undone only if its
  // answer says it may have stored the value (a grant, or no answer at
  // all), instead of at once: most such answers are refusals, and an undo
  // sent for each would cost the nodes a script call per refused attempt.
  // `announce_late`: whether the undos that wait for an answer are
  // announced while the acquire goes on (fail_attempt: not after
  // refusals); when it ends they are (undo_all_awaited).
  void unlock_attempt(bool announce, bool after_answers = false, bool announce_late = true);
  // `node` answered an abandoned attempt whose undo awaited that answer:
  // the undo goes if the answer says the node may have stored the value.
  void settle_awaited(Abandoned& attempt, std::size_t node, bool may_have_stored,
                      std::int64_t permit);
  // Every undo the abandoned attempt still awaits, sent now.
  void undo_awaited(Abandoned& attempt);
  // Every undo still awaiting an answer, sent now (the next attempt
  // starts, or the acquire ends: `ending`, and then announced).
  void undo_all_awaited(bool ending = false);
  // Sends the compare-and-delete of `value` to `node`, to be sent again
  // after a reconnect until `expires_at` (grant_expiry), when the value
  // cannot live there any more.
  void undo_grant(std::size_t node, const LockValue& value, bool announce, TimePoint expires_at,
                  std::int64_t permit = -1);
  // A set across slots that `node` refused in some slot (or whose answer
  // there is unknown): what its other slots granted goes (this attempt's
  // value on every part), so that the set is all or nothing on each node
  // (slot_parts.hpp).
  void undo_partial_set(std::size_t node);
  [[nodiscard]] TimePoint grant_expiry() const;
  void succeed(Microseconds validity);
  void complete(std::error_code error);
  void finish(std::error_code error);
  void handle_stale(std::uint32_t tag, std::size_t node, const NodeResponse& response);
  // The pause before the next attempt; nullopt when none remains.
  [[nodiscard]] std::optional<Microseconds> next_pause() const;
  void retry_or_finish(std::error_code why, std::optional<Microseconds> delay);
  void pause_then_attempt(Microseconds delay);
  void stop_waiting_for_release();
  [[nodiscard]] bool saw_unmarked_node();
  // What a counted answer shows of the node's identity marker,
  // kept for the node's current session (ClientCore::seen_marked).
  void note_marker(std::size_t node, const NodeOutcome& outcome);
  void note_if_unmarked(const NodeOutcome& outcome);
  // Starts (or joins) a recovery round, once per acquire, not waiting for it.
  void request_recovery();
  // A recovery round of the acquire's key space (a set's: of each of its
  // parts'); `done` once it has ended.
  void recover(std::function<void(bool progressed)> done);
  void fail_later(std::error_code why);

  LockKind kind_ = LockKind::mutex;
  // The resource (multi: the first; permit: the semaphore's name).
  Resource resource_;
  // multi: every resource.
  std::vector<Resource> resources_;
  // Where the resource's keys live (multi: the first resource's).
  KeySpace keys_;
  // multi: the set's parts, one per slot its resources are in
  // (slot_parts.hpp); each attempt, fence round and undo is one call per
  // part on each node. Empty for every other kind (one call).
  std::vector<SlotPart> parts_;
  // permit: the count, the permits' key and fence prefixes.
  std::uint32_t permits_ = 0;
  std::string permit_prefix_;
  std::string permit_fence_prefix_;
  // Every channel a release of something this acquire waits for is
  // published on (single and permit: one; multi: one per resource).
  std::vector<std::string> channels_;
  std::string lock_key_;
  std::string fence_key_;
  std::string marker_key_;
  std::string recovering_key_;
  std::string_view defence_flag_;
  std::string channel_;
  Milliseconds ttl_;
  std::string ttl_text_;
  RetryPlan plan_;
  std::error_code argument_problem_;
  AsyncClient::AcquireCallback callback_;
  bool fenced_ = false;
  bool courtesy_ = true;  // skip_courtesy()
  // A mutex acquire that turns fair at its first refusal (the caller left
  // AcquireOptions::fair unset; exclusive, unfenced, may wait).
  bool may_turn_fair_ = false;
  // ":" + AcquireOptions::payload, appended to each attempt's value; empty
  // without one.
  std::string payload_;
  // fair: the waiter's id in the queue, its queue keys and ticket counter
  // field, and its ticket once recorded on a majority; the ticket round in
  // progress (on fencing_'s round, which is free until the lock is won).
  std::string queue_id_;
  std::string queue_key_;
  std::string queue_due_key_;
  std::string ticket_field_;
  std::optional<std::uint64_t> ticket_;
  bool queued_ = false;  // a ticket round was started: the nodes may list us
  bool enqueueing_ = false;
  std::string queue_claims_key_;
  // The current claim (claiming_): its tag (random, secret: a grant
  // names it), the nodes that hold its value and the latest record round's
  // tag.
  bool claiming_ = false;
  std::string claim_tag_;
  std::bitset<kMaxNodes> claim_granted_;
  std::uint32_t claim_record_tag_ = 0;
  // Records made since the claim's first grant without a majority.
  int claim_quick_records_ = 0;
  // Nodes that list an adopted pre-claim's place below the ticket, until a
  // record lists it at the ticket there (adopt_pre_claim).
  std::bitset<kMaxNodes> claim_out_of_order_;
  // Nodes where this claim's grant was given back: a grant message from
  // such a node may have been published before the give-back and travel
  // on the subscriber connection past it, so none is counted again; a
  // grant there counts only through the answer of a record sent after the
  // give-back (the lock connection runs it on the node after the
  // give-back's release). claim_given_back_tag_ is the latest record
  // round's tag at the give-back: that round's answer may predate it.
  std::bitset<kMaxNodes> claim_given_back_;
  std::vector<std::uint32_t> claim_given_back_tag_;
  std::uint64_t ticket_drawn_ = 0;
  TimePoint ticket_drawn_at_{};
  // The tickets the nodes drew in refusing the latest attempt: how many
  // nodes drew, and the highest (fair_acquire draws on a refusal).
  std::size_t attempt_draws_ = 0;
  std::uint64_t attempt_draw_max_ = 0;
  std::error_code ticket_why_;
  Microseconds ticket_pause_{0};

  Phase phase_ = Phase::pausing;
  // The attempt in progress (or the last one): its value and its round.
  LockValue value_{""};
  QuorumRound attempt_;
  std::size_t busy_ = 0;
  // From the attempt's t0 to its decision (phase 1 only).
  Microseconds last_round_trip_{0};
  // The attempt lost a split vote: some grants, some nodes held by a rival.
  bool split_ = false;
  // How the kind decides an attempt (KindRules::attempt_tally), and the
  // permit a semaphore's won attempt holds.
  std::unique_ptr<AttemptTally> tally_;
  std::uint32_t permit_ = 0;
  // The tag of the attempt that won a permit: its late answers may still
  // be grants of other permits, to undo.
  std::uint32_t won_tag_ = 0;

  // Phase 2 (fenced acquires only): its round (tags apart from the
  // attempts') and the proposal's tally.
  QuorumRound fencing_{kFenceTagBit, false};
  int fence_rounds_ = 0;
  std::optional<FenceRound> proposal_;
  std::optional<std::uint64_t> token_;

  std::deque<Abandoned> abandoned_;
  TimerQueue::Id retry_timer_ = TimerQueue::kNone;
  std::error_code last_failure_;
  TimePoint called_at_{};
  // One attempt per call may follow a recovery round at once, outside the
  // retry budget, so a brand-new quorum is initialised transparently.
  bool recovery_attempt_used_ = false;
  // A recovery was asked for on seeing a node without its marker (once).
  bool recovery_requested_ = false;
  // Subscribed to the resource's release channel (until the acquire ends).
  bool waiting_for_release_ = false;
  // Mutex: the waiting line on the nodes (waiting_key), this waiter's place
  // in it (taken when it first lines up), the attempts' place-in-line
  // argument (line_argument), and whether an attempt may have taken a
  // place.
  std::string waiting_key_;
  std::optional<WakeupHub::LinePlace> line_place_;
  std::string line_argument_;
  bool in_line_ = false;
  // Whether this acquire keeps its resource's listening mark (a waiter in
  // line: wakeup_hub.hpp), released when it stops waiting.
  bool line_marked_ = false;
  void keep_line_mark();
  // The place came from this client's release (wait_in_rejoined_place),
  // and how many nodes took it.
  bool rejoined_ = false;
  std::size_t rejoined_places_ = 0;
  // Fair: the ticket came from this client's release (enqueue_drawn_ticket).
  bool predrawn_ = false;
  // Asleep in line since the latest attempt: the nodes that named this
  // waiter, and whether it is waiting for more of them (named()).
  std::bitset<kMaxNodes> named_by_;
  bool awaiting_copies_ = false;
  // A release woke this waiter while its attempt was out: retry at once if
  // that attempt fails.
  bool woken_while_voting_ = false;
  // Per node, for the latest attempt: whether it answered busy, and whether
  // it named this waiter while the attempt was out (in place: no
  // allocation on the acquire path).
  std::bitset<kMaxNodes> refused_latest_;
  std::bitset<kMaxNodes> named_while_voting_;
  int free_attempts_ = 0;
  AcquireResult result_;
};

}  // namespace redlock::detail
