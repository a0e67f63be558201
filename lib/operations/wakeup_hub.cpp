#include "operations/wakeup_hub.hpp"

#include <algorithm>
#include <charconv>

#include "kinds/fair.hpp"
#include "scripts/script_calls.hpp"
#include "scripts/scripts.hpp"

namespace redlock::detail {

namespace {
// Releases remembered per channel. A release's copies arrive within about
// one round trip of each other, during which only a few other releases of
// the same resource can happen.
constexpr std::size_t kReleasesRemembered = 16;
}  // namespace

WakeupHub::WakeupHub(LoopContext& loop, const QuorumConfig& config, KeyLayout layout,
                     Metrics& metrics, std::vector<std::unique_ptr<NodeLink>>& commands,
                     LinkFactory make_link)
    : loop_(loop),
      config_(config),
      layout_(layout),
      metrics_(metrics),
      client_id_(LockValue::random().str().substr(0, 16)),
      commands_(commands),
      make_link_(std::move(make_link)) {}

void WakeupHub::ensure_connections() {
  if (!subscribers_.empty() || closed_) return;
  for (std::size_t i = 0; i < config_.nodes.size(); ++i) {
    std::unique_ptr<NodeLink> connection = make_link_(loop_, metrics_.node(config_.nodes[i].name),
                                                      i, config_.nodes[i], config_.lock, {});
    connection->set_push_handler([this, i](std::string_view channel, std::string_view value) {
      on_message(i, channel, value);
    });
    NodeLink* raw = connection.get();
    // After every (re)connect the node has forgotten our subscriptions
    // (on a cluster member: any of its servers, or a new slot map).
    connection->set_ready_handler([this, raw] {
      for (const std::string& channel : wake_channels_) subscribe(*raw, channel, true);
      for (const auto& entry : waiters_) subscribe(*raw, entry.first, true);
    });
    connection->start();
    subscribers_.push_back(std::move(connection));
  }
}

WakeupHub::~WakeupHub() {
  for (auto& [name, channel] : waiters_) loop_.timers().cancel(channel.linger);
  for (auto& [name, kept] : marks_) loop_.timers().cancel(kept.refresh);
  for (Drawn& drawn : drawn_) loop_.timers().cancel(drawn.lapse);
}

void WakeupHub::wait(const std::string& channel, const std::shared_ptr<Wakeable>& waiter) {
  if (closed_) return;
  ensure_connections();
  auto [entry, inserted] = waiters_.try_emplace(channel);
  entry->second.waiters.push_back(waiter);
  // Lingering since its last waiter left: still subscribed.
  loop_.timers().cancel(entry->second.linger);
  entry->second.linger = TimerQueue::kNone;
  if (inserted) {
    subscribe_everywhere(channel, true);
    mark(channel);
  }
}

void WakeupHub::send_mark(NodeLink& connection, const std::string& channel) {
  static const std::string ttl = std::to_string(kListeningMarkTtl.count());
  // A key of the channel's own name: on a cluster member, its slot's master.
  connection.send_keyed_command(channel, {"SET", channel, "1", "PX", ttl});
}

void WakeupHub::watch_command_sessions() {
  if (watching_commands_) return;
  watching_commands_ = true;
  for (auto& connection : commands_) {
    NodeLink* raw = connection.get();
    raw->set_ready_handler([this, raw] {
      for (const auto& [channel, kept] : marks_) send_mark(*raw, channel);
    });
  }
}

void WakeupHub::mark(const std::string& channel) {
  if (closed_) return;
  if (marks_[channel].users++ == 0) set_mark(channel);
}

void WakeupHub::unmark(const std::string& channel) {
  auto kept = marks_.find(channel);
  if (kept == marks_.end()) return;
  if (--kept->second.users > 0) return;
  // Left to expire: a release meanwhile publishes to no one, as before.
  loop_.timers().cancel(kept->second.refresh);
  marks_.erase(kept);
}

void WakeupHub::set_mark(const std::string& channel) {
  auto kept = marks_.find(channel);
  if (kept == marks_.end() || closed_) return;
  // On the sessions that are ready; one that is not sets every mark kept
  // once it is (watch_command_sessions). Never queued behind a connect: a
  // node that does not answer would keep its connection reconnecting for
  // nothing.
  watch_command_sessions();
  for (auto& connection : commands_) send_mark(*connection, channel);
  kept->second.refresh = loop_.timers().schedule_after(kListeningMarkRefresh,
                                                       [this, name = channel] { set_mark(name); });
}

void WakeupHub::unsubscribe_if_unused(const std::string& channel) {
  auto entry = waiters_.find(channel);
  if (entry == waiters_.end() || !entry->second.waiters.empty()) return;
  waiters_.erase(entry);
  unmark(channel);
  if (!closed_) subscribe_everywhere(channel, false);
}

void WakeupHub::leave(const std::string& channel, const Wakeable* waiter) {
  auto entry = waiters_.find(channel);
  if (entry == waiters_.end()) return;
  auto& list = entry->second.waiters;
  list.erase(std::remove_if(list.begin(), list.end(),
                            [waiter](const std::weak_ptr<Wakeable>& candidate) {
                              auto locked = candidate.lock();
                              return !locked || locked.get() == waiter;
                            }),
             list.end());
  if (!list.empty()) return;
  if (closed_) {
    waiters_.erase(entry);
    return;
  }
  loop_.timers().cancel(entry->second.linger);
  entry->second.linger = loop_.timers().schedule_after(
      kChannelLinger, [this, name = channel] { unsubscribe_if_unused(name); });
}

void WakeupHub::subscribe(NodeLink& connection, const std::string& channel, bool on) const {
  // Per slot a shard channel, through the server that owns its slot (for
  // one server, that server).
  const bool shard = layout_ == KeyLayout::per_slot;
  const std::string_view command =
      on ? (shard ? "SSUBSCRIBE" : "SUBSCRIBE") : (shard ? "SUNSUBSCRIBE" : "UNSUBSCRIBE");
  connection.send_keyed_command(channel, {command, channel});
}

void WakeupHub::subscribe_everywhere(const std::string& channel, bool on) {
  for (auto& connection : subscribers_) subscribe(*connection, channel, on);
}

WakeupHub::LinePlace WakeupHub::line_place(const KeySpace& keys) {
  const std::uint64_t number = next_number_++;
  return {number, wake_channel(keys.key_prefix(), client_id_) + " " + std::to_string(number)};
}

void WakeupHub::wait_in_line(const LinePlace& place, const std::shared_ptr<Wakeable>& waiter) {
  if (closed_) return;
  subscribe_wake_channel(place);
  line_.insert_or_assign(place.number, waiter);
}

void WakeupHub::subscribe_wake_channel(const LinePlace& place) {
  ensure_connections();
  // The id is "<wake channel> <number>".
  const std::string channel = place.id.substr(0, place.id.find(' '));
  // Kept from the first waiter on: one subscription per node (per slot)
  // for the client's life, instead of one per waiter.
  if (!wake_channels_.insert(channel).second) return;
  subscribe_everywhere(channel, true);
}

void WakeupHub::on_message(std::size_t node, std::string_view channel, std::string_view message) {
  if (wake_channels_.find(channel) != wake_channels_.end()) {
    on_named(node, message);
    return;
  }
  auto entry = waiters_.find(channel);
  if (entry == waiters_.end()) return;
  auto& recent = entry->second.recent_releases;
  const auto heard = std::find_if(recent.begin(), recent.end(), [message](const HeardRelease& r) {
    return r.message == message;
  });
  if (heard == recent.end()) {
    recent.push_back(HeardRelease{std::string(message), false, {}});
    if (recent.size() > kReleasesRemembered) recent.pop_front();
    wake_one(entry, recent.size() - 1);
    return;
  }
  // Another node's copy. A release no waiter acted on yet is still to be
  // served, as a first copy would be.
  if (!heard->served) {
    wake_one(entry, static_cast<std::size_t>(heard - recent.begin()));
    return;
  }
  // Served: copy the waiters first, since waking may end a waiter's
  // acquire, and it then leaves, which edits the list (and may erase the
  // channel).
  const std::shared_ptr<Wakeable> woken = heard->woken.lock();
  std::vector<std::shared_ptr<Wakeable>> others;
  for (const auto& candidate : entry->second.waiters) {
    auto locked = candidate.lock();
    if (locked && locked != woken) others.push_back(std::move(locked));
  }
  if (woken) (void)woken->named(node, false);
  for (const auto& waiter : others) waiter->heard_again();
}

void WakeupHub::wake_one(Channels::iterator entry, std::size_t heard_index) {
  // Copies of the channel's name and of the release: a waking waiter may
  // leave and erase the entry they live in.
  const std::string channel = entry->first;
  std::vector<std::shared_ptr<Wakeable>> candidates;
  for (const auto& candidate : entry->second.waiters) {
    if (auto locked = candidate.lock()) candidates.push_back(std::move(locked));
  }
  const std::string message = entry->second.recent_releases[heard_index].message;
  for (auto waiter = candidates.begin(); waiter != candidates.end(); ++waiter) {
    if (!(*waiter)->wake()) continue;
    // The ones after it are not woken, but a leader observer among them
    // still reads.
    for (auto rest = std::next(waiter); rest != candidates.end(); ++rest) (*rest)->heard_again();
    // The waiter may have left (and the channel gone) meanwhile; the
    // release may have been pushed out of the remembered ones.
    auto again = waiters_.find(channel);
    if (again == waiters_.end()) return;
    for (HeardRelease& release : again->second.recent_releases) {
      if (release.message != message) continue;
      release.served = true;
      release.woken = *waiter;
    }
    return;
  }
}

void WakeupHub::on_named(std::size_t node, std::string_view message) {
  // "number value": the copies of one release that name the same waiter
  // are one message. Later copies still reach the waiter, marked so: the
  // copy of a node that refused the waiter's attempt before the release
  // came is news (that node took the place out of its line), whichever
  // node's copy came first (acquire_operation.hpp). Only a message naming
  // a waiter here is remembered: garbage does not push real names out.
  const std::size_t space = message.find(' ');
  if (space == std::string_view::npos) return;
  std::uint64_t number = 0;
  const char* const end = message.data() + space;
  const auto parsed = std::from_chars(message.data(), end, number);
  if (parsed.ec != std::errc{}) return;  // not a number
  if (parsed.ptr != end) {
    // "number+claim value": a fair waiter's claim granted by this node.
    if (*parsed.ptr != '+') return;
    const std::string_view claim(parsed.ptr + 1, static_cast<std::size_t>(end - parsed.ptr - 1));
    const std::size_t colon = claim.rfind(':');
    std::uint64_t ticket = 0;
    if (colon == std::string_view::npos) return;
    const auto scored = std::from_chars(claim.data() + colon + 1, end, ticket);
    if (scored.ec != std::errc{} || scored.ptr != end) return;
    const std::string_view tag = claim.substr(0, colon);
    const auto waiting = line_.find(number);
    if (waiting != line_.end()) {
      if (auto waiter = waiting->second.lock()) waiter->granted(node, tag, ticket);
      return;
    }
    // A pre-claim no acquire adopted yet: kept for the one that will (a
    // pre-claim withdrawn or adopted and ended is undone on the node by its
    // release, which follows the place on the same connection).
    const auto pre = pre_claims_.find(number);
    if (pre == pre_claims_.end()) return;
    const std::shared_ptr<PreClaim> held = pre->second.lock();
    if (held && held->tag == tag && node < held->granted.size()) held->granted[node] = ticket;
    return;
  }
  const auto found = line_.find(number);
  if (found == line_.end()) {
    // An offered place no acquire took: the turn goes on at once, on every
    // node that names it (each took the place out of its line).
    const auto offer = offered_.find(number);
    if (offer != offered_.end()) pass_turn(node, offer->second, message.substr(space + 1));
    return;  // no longer waiting
  }
  const bool first_copy = !seen_before(named_seen_, message);
  if (auto waiter = found->second.lock()) (void)waiter->named(node, first_copy);
}

bool WakeupHub::seen_before(std::deque<std::string>& recent, std::string_view message) {
  if (std::find(recent.begin(), recent.end(), message) != recent.end()) return true;
  recent.emplace_back(message);
  if (recent.size() > kReleasesRemembered) recent.pop_front();
  return false;
}

Milliseconds WakeupHub::rejoin_lease() const {
  // As AcquireOperation::line_lease for the configured retry delay.
  return 2 * config_.lock.retry_delay + Milliseconds(100);
}

void WakeupHub::forget_expired_offers(TimePoint now) {
  for (auto offer = offered_.begin(); offer != offered_.end();) {
    if (offer->second.expires > now) {
      ++offer;
      continue;
    }
    unmark(offer->second.channel);
    offer = offered_.erase(offer);
  }
}

std::optional<WakeupHub::LinePlace> WakeupHub::offer_rejoin(const std::string& channel,
                                                            std::string_view resource,
                                                            TimePoint now) {
  if (closed_ || !recent_contention_.contended_round_trip(channel, now)) return std::nullopt;
  forget_expired_offers(now);
  if (offered_.size() >= kMaxRejoins) return std::nullopt;
  // The place is named on the wake channel: subscribed before any node can
  // name it (the release that offers it names someone else first).
  const KeySpace keys(config_.lock, layout_, resource);
  LinePlace place = line_place(keys);
  subscribe_wake_channel(place);
  mark(channel);
  offered_.emplace(place.number, Offered{channel,
                                         lock_key(keys, resource),
                                         waiting_key(keys.key_prefix(), resource),
                                         place.id,
                                         {},
                                         now + rejoin_lease()});
  return place;
}

void WakeupHub::rejoined(std::uint64_t number, std::size_t node) {
  const auto offer = offered_.find(number);
  if (offer != offered_.end() && node < kMaxNodes) offer->second.nodes.set(node);
}

std::optional<WakeupHub::Rejoined> WakeupHub::take_rejoined(const std::string& channel,
                                                            TimePoint now) {
  if (offered_.empty()) return std::nullopt;
  forget_expired_offers(now);
  for (auto offer = offered_.begin(); offer != offered_.end(); ++offer) {
    Offered& entry = offer->second;
    if (entry.channel != channel || entry.passed || entry.nodes.none()) continue;
    Rejoined taken{LinePlace{offer->first, std::move(entry.id)}, entry.nodes};
    // (The acquire that takes it keeps a mark of its own.)
    unmark(entry.channel);
    offered_.erase(offer);
    return taken;
  }
  return std::nullopt;
}

void WakeupHub::note_drawn_ticket(const std::string& channel, DrawnTicket drawn, TimePoint now) {
  while (!drawn_.empty() && drawn_.front().expires <= now) forget_drawn(drawn_.begin(), true);
  if (closed_ || drawn_.size() >= kMaxRejoins) {
    if (drawn.claim) withdraw(*drawn.claim);
    return;
  }
  drawn_.push_back(Drawn{channel, drawn, now + kDrawnTicketLife});
  if (!drawn.claim) return;
  // Granted and not adopted, a pre-claim would hold the lock on that node
  // for its TTL: it goes once it lapses, at once, not at the next call.
  const std::weak_ptr<PreClaim> claim = drawn.claim;
  drawn_.back().lapse = loop_.timers().schedule_after(kDrawnTicketLife, [this, claim] {
    const std::shared_ptr<PreClaim> held = claim.lock();
    for (auto entry = drawn_.begin(); entry != drawn_.end(); ++entry) {
      if (held && entry->drawn.claim == held) {
        entry->lapse = TimerQueue::kNone;
        forget_drawn(entry, true);
        return;
      }
    }
  });
}

void WakeupHub::forget_drawn(std::deque<Drawn>::iterator entry, bool withdraw_claim) {
  loop_.timers().cancel(entry->lapse);
  if (withdraw_claim && entry->drawn.claim) withdraw(*entry->drawn.claim);
  drawn_.erase(entry);
}

std::optional<WakeupHub::DrawnTicket> WakeupHub::take_drawn_ticket(const std::string& channel,
                                                                   TimePoint now) {
  while (!drawn_.empty() && drawn_.front().expires <= now) forget_drawn(drawn_.begin(), true);
  for (auto entry = drawn_.begin(); entry != drawn_.end(); ++entry) {
    if (entry->channel != channel) continue;
    DrawnTicket taken = entry->drawn;
    // From here on the acquire hears the pre-claim's grants (wait_in_line).
    if (taken.claim) pre_claims_.erase(taken.claim->place.number);
    forget_drawn(entry, false);
    return taken;
  }
  return std::nullopt;
}

std::shared_ptr<WakeupHub::PreClaim> WakeupHub::pre_claim(Resource resource, Milliseconds ttl,
                                                          TimePoint started) {
  for (auto entry = pre_claims_.begin(); entry != pre_claims_.end();) {
    entry = entry->second.expired() ? pre_claims_.erase(entry) : std::next(entry);
  }
  if (closed_ || pre_claims_.size() >= kMaxRejoins) return nullptr;
  // Its grants come on the wake channel: subscribed before any node can
  // grant it (the release that makes it serves someone else first).
  auto claim = std::make_shared<PreClaim>();
  claim->place = line_place(KeySpace(config_.lock, layout_, resource.str()));
  subscribe_wake_channel(claim->place);
  claim->resource = std::move(resource);
  claim->value = LockValue::random();
  claim->tag = LockValue::random().str();
  claim->ttl = ttl;
  claim->started = started;
  claim->counts.assign(config_.nodes.size(), 0);
  claim->granted.assign(config_.nodes.size(), 0);
  pre_claims_[claim->place.number] = claim;
  return claim;
}

void WakeupHub::withdraw(const PreClaim& claim) {
  pre_claims_.erase(claim.place.number);
  const KeySpace keys(config_.lock, layout_, claim.resource.str());
  const ScriptCall call =
      claim_release_call(claim.resource, claim.value, claim.ttl, claim.place.id, keys, true);
  // Whatever a node set lives at most a TTL (and its drift) from now.
  const TimePoint expires_at =
      loop_.clock().now() + claim.ttl + lock_drift(config_.lock, claim.ttl);
  for (auto& node : commands_) node->send_cleanup(call, expires_at);
}

void WakeupHub::pass_turn(std::size_t node, Offered& offer, std::string_view value) {
  offer.passed = true;
  if (node >= commands_.size() || node >= kMaxNodes || offer.passed_on.test(node)) return;
  offer.passed_on.set(node);
  send_cleanup_to(
      *commands_[node],
      PassTurnCall{.lock_key = offer.lock_key, .waiting_set = offer.waiting_key, .value = value},
      loop_.clock().now() + rejoin_lease());
}

void WakeupHub::close() {
  if (closed_) return;
  closed_ = true;
  offered_.clear();
  // (A pre-claim's withdrawal is sent while the connections still take it;
  // one that does not leave lapses with its place, and a grant of it no
  // one hears any more is taken back.)
  while (!drawn_.empty()) forget_drawn(drawn_.begin(), true);
  pre_claims_.clear();
  for (auto& [name, channel] : waiters_) loop_.timers().cancel(channel.linger);
  waiters_.clear();
  for (auto& [name, kept] : marks_) loop_.timers().cancel(kept.refresh);
  marks_.clear();
  if (watching_commands_) {
    for (auto& connection : commands_) connection->set_ready_handler({});
  }
  line_.clear();
  for (auto& connection : subscribers_) connection->close();
}

}  // namespace redlock::detail
