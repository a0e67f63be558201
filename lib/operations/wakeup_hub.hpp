// Release wake-ups (docs/engine.md, "Waiting for a release"): waiters subscribe to
// `{prefix}released:{resource}` on every node and retry as soon as a release
// is published, instead of sleeping out their retry delay. One subscriber
// connection per node serves every waiter of the client; a channel is
// subscribed while it has waiters and unsubscribed kChannelLinger after the
// last one left (unless another came meanwhile), so subscriptions do not
// accumulate beyond the channels waited on within that time. A waiter stays
// from its first "held" answer until its acquire completes, also while it
// is attempting: leaving and coming back after every attempt would cost a
// SUBSCRIBE and an UNSUBSCRIBE per node per attempt, and would forget which
// release was already acted on. The retry timer stays armed as the fallback for a missed
// message.
//
// A release wakes one waiter of all the clients': waking them all would
// only have them collide on the nodes (a thundering herd), and the next
// release wakes the next. A mutex waiter joins its client's line: it gets
// an id, a member of the nodes' waiting lines (scripts.hpp, waiting_key)
// made of the client's wake channel and a number, and each attempt the
// nodes refuse puts it at the back of their line. A release names the first
// live waiter in line by publishing "number value" on that waiter's client's
// wake channel, which the hub subscribes on every node once, at the first
// waiter, and keeps: only that client hears it, and it wakes only that
// waiter. Waiters in line do not listen on the resource's channel, so the
// other clients hear nothing of the release.
//
// A release publishes and names a waiter only where someone may listen
// (scripts.hpp, the release): while the hub listens on a channel, and
// while a waiter of the client is in the resource's line or a place is
// offered there, it keeps a key of the channel's own name (its listening
// mark) on every node, set with a kListeningMarkTtl expiry when the first
// of them comes and again every kListeningMarkRefresh on the lock
// connections, until the last goes; a release that finds no mark wakes no
// one. A mark a node lost (it restarted, or its connection was down at a
// refresh) is back within one refresh; meanwhile the retry timer wakes the
// waiter, as for any missed message.
//
// The resource's channel still carries every release, for the waiters
// outside any line (the other lock kinds, leader observers): one release
// wakes this client's first sleeping waiter of them, in the order they
// started waiting. The N nodes each publish the same release; the released
// value identifies it, so it counts once, even when copies of two releases
// interleave; a copy that names another waiter of this client (the nodes'
// lines differ) wakes that waiter as well. A later copy of a release heard
// on a resource's channel goes to the waiter its first copy woke as a later
// copy of a name (Wakeable::named: it wakes again only if that node refused
// its latest attempt, as in line), to every other waiter as heard_again(),
// for the observers that read the lock's state rather than retry, and, if
// no waiter acted on the first copy, wakes one as a first copy would.
//
// A client that releases a mutex it found contended (RecentContention) and
// will likely want again rejoins the line in the same call: the release
// offers a new place, which each node that named a waiter puts at the back
// of its line (docs/algorithm.md, "Waiting in line", rejoining). The hub keeps the
// offered places; the client's next acquire of the resource takes one and
// waits to be named instead of sending an attempt that the named waiter's
// grant would refuse. A place no acquire took by the time a node names it
// is handed on at once: the hub sends that node pass_turn, which names the
// next waiter if the lock is still free there.
//
// Per slot (a quorum with a Redis Cluster member: key_space.hpp) every
// channel is a shard channel: the hub subscribes it with SSUBSCRIBE at the
// server that owns its slot (on a cluster member, the slot's master, and
// again where a new map puts it), the sessions send the scripts' twins that
// publish with SPUBLISH (scripts.hpp, shard_publishing), and a release
// wakes its waiters through the resource's shard alone instead of every
// server of the cluster. A script may publish only on a channel of its own
// slot, so the client has a wake channel per slot it waited in (kept, as
// the one wake channel is, for the client's life: at most one per slot).
//
// The hub also keeps the client's RecentContention: which resources it
// recently had to wait for (retry_policy.hpp).
#pragma once

#include <bitset>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/retry_policy.hpp"
#include "scripts/key_space.hpp"
#include "transport/loop_context.hpp"
#include "transport/node_link.hpp"

namespace redlock::detail {

class Wakeable {
 public:
  // Loop thread: a release was published on the channel being waited on.
  // Returns whether the waiter acted on it (it was sleeping before a retry).
  virtual bool wake() = 0;
  // Loop thread: node `node` named this waiter in line, or sent a later
  // copy of a release on a resource's channel whose first copy woke this
  // waiter. `first_copy`: no other node's copy of the same release came
  // before. By default only a first copy wakes.
  virtual bool named(std::size_t /*node*/, bool first_copy) { return first_copy && wake(); }
  // Loop thread: node `node`'s release granted this (fair) waiter the claim
  // whose tag is `claim` (fair_scripts.hpp, fair_release): the node set the
  // lock key to the claim's value, for the place it lists at `ticket`. Every node's copy comes
  // here, each a vote if the tag is the waiter's current claim's (a random secret the node learnt
  // from the claim: no one who can only publish can forge it).
  virtual void granted(std::size_t /*node*/, std::string_view /*claim*/, std::uint64_t /*ticket*/) {
  }
  // Loop thread: another node's copy of a release already heard on the
  // channel. A waiter that acts on the first copy (it retries) ignores the
  // rest; one that reads the lock's state (a leader observer) must not: the
  // first node's copy can come before the release reached a majority, so a
  // read it starts may still find the lock held by a majority.
  virtual void heard_again() {}

 protected:
  ~Wakeable() = default;
};

class WakeupHub {
 public:
  // `loop`, `config`, `metrics` and `commands` (the client's lock
  // connections, on which a turn is passed) must outlive the hub (the
  // client core owns them all). `make_link` makes its subscriber links.
  WakeupHub(LoopContext& loop, const QuorumConfig& config, KeyLayout layout, Metrics& metrics,
            std::vector<std::unique_ptr<NodeLink>>& commands, LinkFactory make_link);
  ~WakeupHub();
  WakeupHub(const WakeupHub&) = delete;
  WakeupHub& operator=(const WakeupHub&) = delete;

  // `waiter` is woken (at most once per call) when a release is published on
  // `channel`, until leave().
  void wait(const std::string& channel, const std::shared_ptr<Wakeable>& waiter);
  void leave(const std::string& channel, const Wakeable* waiter);
  // A listening mark for `channel` (above) kept until as many unmark()
  // calls: for a waiter in the resource's line, which listens on its
  // client's wake channel instead. Its first SET goes ahead of whatever
  // the lock connections send next.
  void mark(const std::string& channel);
  void unmark(const std::string& channel);
  // A new waiter's place in this client's line: a number no other waiter of
  // this client has, and the id the nodes' waiting lines know it by (a
  // member of waiting_key's sorted set: this client's wake channel, a
  // space, the number). Costs no I/O: an acquire takes one before its
  // first attempt, which may already line it up.
  struct LinePlace {
    std::uint64_t number = 0;
    std::string id;
  };
  // For a waiter on a resource whose keys are `keys` (its wake channel is
  // under their prefix: per slot, the resource's slot's).
  [[nodiscard]] LinePlace line_place(const KeySpace& keys);
  // The waiter with place `number` is woken (at most once per release
  // naming it) when a node's release names it, until leave_line(). The
  // first call subscribes the wake channel on every node; a release that
  // names the waiter before that subscription reached a node is missed
  // there, and the waiter's retry timer stands in.
  void wait_in_line(const LinePlace& place, const std::shared_ptr<Wakeable>& waiter);
  void leave_line(std::uint64_t number) { line_.erase(number); }

  // Rejoining. A place for the release of the mutex on `resource` (whose
  // release channel is `channel`) to offer, when this client finds the
  // resource contended; none otherwise, and none beyond kMaxRejoins.
  [[nodiscard]] std::optional<LinePlace> offer_rejoin(const std::string& channel,
                                                      std::string_view resource, TimePoint now);
  // `node` took the offered place `number` into its line.
  void rejoined(std::uint64_t number, std::size_t node);
  // The oldest offered place of `channel` that some node took and no
  // acquire took yet or passed, for an acquire to wait in: the place and the
  // nodes whose lines hold it. It is the acquire's from now on (a name
  // wakes it through wait_in_line).
  struct Rejoined {
    LinePlace place;
    std::bitset<kMaxNodes> nodes;
  };
  [[nodiscard]] std::optional<Rejoined> take_rejoined(const std::string& channel, TimePoint now);
  // How long an offered place is kept: the line's lease for the configured
  // retry delay (the nodes' lines go with it unless a waiter renews them).
  [[nodiscard]] Milliseconds rejoin_lease() const;
  static constexpr std::size_t kMaxRejoins = 256;

  // Fair locks: the next ticket a release by this client drew on a
  // majority (the highest of their counters) and when that release began,
  // for the client's next acquire of the resource, if it comes within
  // kDrawnTicketLife (a worker that releases and at once waits again);
  // none beyond kMaxRejoins.
  // A pre-claim: the release also recorded the releaser's next place at
  // the count each node drew, with a claim (fair_scripts.hpp,
  // fair_release), for that next acquire to adopt: the place, the claim's
  // resource, value, tag and TTL, t0 (read before the release was sent),
  // and per node the count its place was recorded at and the ticket of a
  // grant heard before the adoption (0: none). The release fills the
  // counts as its answers come; the hub the grants.
  struct PreClaim {
    LinePlace place;
    Resource resource{""};
    LockValue value{""};
    std::string tag;
    Milliseconds ttl{0};
    TimePoint started{};
    std::vector<std::uint64_t> counts;
    std::vector<std::uint64_t> granted;
    // A node that answered its place first with the key free: no release
    // there will grant it, so the adopting acquire records at once.
    bool first_and_free = false;
  };
  struct DrawnTicket {
    std::uint64_t ticket = 0;
    TimePoint drawn_at{};
    std::shared_ptr<PreClaim> claim{};
  };
  // A pre-claim the drawn ticket carries is given up on every node
  // (withdraw) unless an acquire takes it within kDrawnTicketLife.
  void note_drawn_ticket(const std::string& channel, DrawnTicket drawn, TimePoint now);
  [[nodiscard]] std::optional<DrawnTicket> take_drawn_ticket(const std::string& channel,
                                                             TimePoint now);
  static constexpr Microseconds kDrawnTicketLife{std::chrono::milliseconds(10)};
  // A pre-claim's release on every node (its place and claim go; a node
  // that granted it serves its next waiter): one no acquire adopts.
  void withdraw(const PreClaim& claim);
  // A pre-claim's release that made no ticket (fewer than a majority
  // drew) registers it here, so that grants of it are heard until it is
  // withdrawn.
  [[nodiscard]] std::shared_ptr<PreClaim> pre_claim(Resource resource, Milliseconds ttl,
                                                    TimePoint started);

  void close();

  // How long a resource's channel stays subscribed after its last waiter
  // left: a client that waits on a resource again soon (a worker looping
  // over acquire and release) finds it subscribed, instead of paying an
  // UNSUBSCRIBE and a SUBSCRIBE on every node for each acquire, and of
  // missing a release that comes before its new SUBSCRIBE took effect.
  static constexpr Microseconds kChannelLinger{std::chrono::seconds(1)};
  // A listening mark's expiry, and how often the hub sets it again while
  // it listens: a mark outlives its refresh by more than a lost refresh.
  static constexpr Milliseconds kListeningMarkTtl{10000};
  static constexpr Microseconds kListeningMarkRefresh{std::chrono::seconds(4)};

  // Channels subscribed right now, lingering ones included (for tests and
  // diagnosis).
  [[nodiscard]] std::size_t channels() const noexcept { return waiters_.size(); }

  [[nodiscard]] RecentContention& recent_contention() noexcept { return recent_contention_; }

 private:
  void ensure_connections();
  // Subscribes the wake channel `place` is named on, on every node, once
  // for the client's life (a waiter in line, an offered place, a
  // pre-claim).
  void subscribe_wake_channel(const LinePlace& place);
  void on_message(std::size_t node, std::string_view channel, std::string_view message);
  // SUBSCRIBE or UNSUBSCRIBE; per slot, SSUBSCRIBE or SUNSUBSCRIBE sent to
  // the server that owns the channel's slot.
  void subscribe(NodeLink& connection, const std::string& channel, bool on) const;
  void subscribe_everywhere(const std::string& channel, bool on);
  // Sets the channel's listening mark on every node (the lock connections
  // that are ready) and arms its next refresh.
  void set_mark(const std::string& channel);
  // The listening marks kept, with how many keep each (a subscribed
  // channel, a waiter in line, an offered place) and its refresh.
  struct Mark {
    std::size_t users = 0;
    TimerQueue::Id refresh = TimerQueue::kNone;
  };
  std::map<std::string, Mark, std::less<>> marks_;
  // Has every lock connection set the marks kept when its session becomes
  // ready (after a connect or a reset)? Set up at the first mark.
  void watch_command_sessions();
  // One listening mark's SET on one lock connection (dropped unless its
  // session is ready).
  static void send_mark(NodeLink& connection, const std::string& channel);
  bool watching_commands_ = false;

  LoopContext& loop_;
  const QuorumConfig& config_;
  // Where a resource's keys live (scripts/key_space.hpp).
  KeyLayout layout_;
  Metrics& metrics_;
  std::vector<std::unique_ptr<NodeLink>> subscribers_;
  // A release heard on a resource's channel: its message (the released
  // value), and the waiter its first copy woke, if one acted on it.
  struct HeardRelease {
    std::string message;
    bool served = false;
    std::weak_ptr<Wakeable> woken;
  };
  struct Channel {
    std::vector<std::weak_ptr<Wakeable>> waiters;  // in the order they came
    std::deque<HeardRelease> recent_releases;      // newest last
    // Armed while the channel has no waiter: its unsubscription.
    TimerQueue::Id linger = TimerQueue::kNone;
  };

  // Whether `message` (a released value, or a named release's "number
  // value") is among the `recent` ones; remembers it if not.
  static bool seen_before(std::deque<std::string>& recent, std::string_view message);

  using Channels = std::map<std::string, Channel, std::less<>>;
  Channels waiters_;
  // Wakes the first of the channel's sleeping waiters that acts on its
  // release recent_releases[heard_index] (a new one, or one no waiter acted
  // on yet) and remembers it there; the waiters after it hear it again.
  void wake_one(Channels::iterator entry, std::size_t heard_index);
  // The channel's last waiter left `kChannelLinger` ago and none came.
  void unsubscribe_if_unused(const std::string& channel);
  // The line: this client's id in its wake channels' names (under the
  // release channels' pattern; per slot one channel per slot, since a
  // script may publish only on a shard channel of its own slot), the wake
  // channels subscribed, its waiters by number, and the named releases
  // already acted on.
  std::string client_id_;
  std::set<std::string, std::less<>> wake_channels_;
  std::uint64_t next_number_ = 0;
  std::map<std::uint64_t, std::weak_ptr<Wakeable>> line_;
  std::deque<std::string> named_seen_;
  void on_named(std::size_t node, std::string_view message);
  // Offered places no acquire took yet, by number.
  struct Offered {
    std::string channel;
    std::string lock_key;
    std::string waiting_key;
    std::string id;
    std::bitset<kMaxNodes> nodes;
    TimePoint expires;
    bool passed = false;  // named while no acquire waited: handed on
    // The nodes it was handed on at: a node names a place once (it takes
    // it out of its line), so a node that names it again gets nothing (a
    // hostile node's repeated names cost it one pass, not one each).
    std::bitset<kMaxNodes> passed_on{};
  };
  std::map<std::uint64_t, Offered> offered_;
  // Drawn tickets no acquire took yet, with the instant they lapse.
  struct Drawn {
    std::string channel;
    DrawnTicket drawn;
    TimePoint expires;
    TimerQueue::Id lapse = TimerQueue::kNone;  // a pre-claim's withdrawal
  };
  std::deque<Drawn> drawn_;
  // Pre-claims made and not yet adopted or withdrawn, by place number:
  // a grant of one before its acquire adopts it is kept there.
  std::map<std::uint64_t, std::weak_ptr<PreClaim>> pre_claims_;
  void forget_drawn(std::deque<Drawn>::iterator entry, bool withdraw_claim);
  void forget_expired_offers(TimePoint now);
  // `node` named the offered place `number` while no acquire waits in it.
  void pass_turn(std::size_t node, Offered& offer, std::string_view value);
  std::vector<std::unique_ptr<NodeLink>>& commands_;
  LinkFactory make_link_;
  RecentContention recent_contention_;
  bool closed_ = false;
};

}  // namespace redlock::detail
