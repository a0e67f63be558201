#include "transport/cluster_link.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "protocol/hash_slot.hpp"
#include "transport/cluster_slots.hpp"
#include "transport/loop_context.hpp"

namespace redlock::detail {

namespace {

constexpr Microseconds kTryAgainPause{20000};
// At most one map read in this long for masters that do not answer: a
// shard that stays down fails every request sent to it.
constexpr Microseconds kSilentMasterMapInterval{100000};

std::string server_key(const std::string& host, std::uint16_t port, const std::string& unix_path) {
  return unix_path.empty() ? host + " " + std::to_string(port) : "unix " + unix_path;
}

std::string_view error_text(const NodeResponse& response) {
  if (response.kind != NodeResponse::Kind::reply || response.reply_count == 0) return {};
  const redisReply* first = response.replies[0];
  if (first == nullptr || first->type != REDIS_REPLY_ERROR) return {};
  return {first->str, first->len};
}

}  // namespace

// A request on its way, with what it needs to go again after a redirect:
// its script, keys and arguments owned, its slot, and the caller's sink.
struct ClusterLink::Routed final : ResponseSink {
  ClusterLink* link = nullptr;
  std::weak_ptr<Routed> self;
  ScriptCall call;
  std::vector<std::string> command;  // a plain command (call.script null)
  bool require_replicas = false;
  bool cleanup = false;
  TimePoint sent_at{};
  TimePoint expires_at{};
  std::shared_ptr<ResponseSink> sink;
  std::uint32_t tag = 0;
  std::uint16_t slot = 0;
  bool keyless = false;
  // The host of the server it went to last: an empty host in a redirect
  // ("MOVED 42 :7001") is that server's.
  std::string sent_host;
  // The server it went to last, "host:port" (a shard's name in metrics).
  std::string sent_to;
  int redirects = 0;
  bool asking = false;   // the next send goes after ASKING
  std::string ask_host;  // where an ASK sends it
  std::uint16_t ask_port = 0;
  bool answered = false;  // the caller's sink had its non-late response

  void on_response(std::size_t, std::uint32_t, const NodeResponse& response) override {
    if (auto kept = self.lock()) link->on_answer(kept, response);
  }
};

// Hands the answers of the link's own plain commands (CLUSTER SLOTS, a
// keyed command) to one of its methods, until the link detaches it (a
// connection may answer after the link closed).
class ClusterLink::OwnAnswers final : public ResponseSink {
 public:
  using Handler = void (ClusterLink::*)(const NodeResponse&);
  OwnAnswers(ClusterLink* link, Handler handler) : link_(link), handler_(handler) {}
  void on_response(std::size_t, std::uint32_t, const NodeResponse& response) override {
    if (link_ != nullptr && !response.late) (link_->*handler_)(response);
  }
  void detach() noexcept { link_ = nullptr; }

 private:
  ClusterLink* link_;
  Handler handler_;
};

NodeConfig member_server(const NodeConfig& member, std::string_view host, std::uint16_t port,
                         std::string_view unix_path) {
  NodeConfig server = member;
  server.cluster.clear();
  server.host = host;
  server.port = port;
  server.unix_path = unix_path;
  server.db = 0;
  return server;
}

ClusterLink::ClusterLink(LoopContext& loop, NodeMetrics& stats, std::size_t index,
                         const NodeConfig& member, const LockConfig& lock, SessionSetup setup)
    : loop_(loop),
      stats_(stats),
      index_(index),
      member_(member),
      lock_(lock),
      setup_(std::move(setup)),
      map_reader_(std::make_shared<OwnAnswers>(this, &ClusterLink::on_map)),
      keyed_answers_(std::make_shared<OwnAnswers>(this, &ClusterLink::on_keyed_answer)) {
  setup_.one_slot_per_call = true;
}

ClusterLink::~ClusterLink() {
  map_reader_->detach();
  keyed_answers_->detach();
  loop_.timers().cancel(map_timer_);
}

NodeConnection& ClusterLink::connection_in(Servers& list, const std::string& host,
                                           std::uint16_t port, const std::string& unix_path,
                                           const SessionSetup& setup, bool& made) {
  const std::string key = server_key(host, port, unix_path);
  made = false;
  for (auto& [known, connection] : list) {
    if (known == key) return *connection;
  }
  SessionSetup session = setup;
  // The opening's slot: one of this server's own in the map of the moment
  // (the link owns its connections, so `this` outlives them).
  if (session.opening) {
    session.opening_slot_tag = [this, host, port]() -> std::string_view {
      if (!map_) return {};
      const std::optional<std::uint16_t> slot = map_->first_slot_of(host, port);
      return slot ? slot_tag(*slot) : std::string_view();
    };
  }
  list.emplace_back(key, std::make_unique<NodeConnection>(
                             loop_, stats_, index_, member_server(member_, host, port, unix_path),
                             lock_, std::move(session)));
  made = true;
  NodeConnection& added = *list.back().second;
  if (started_ && !closed_) added.start();
  return added;
}

NodeConnection& ClusterLink::connection_to(const std::string& host, std::uint16_t port,
                                           const std::string& unix_path) {
  bool made = false;
  NodeConnection& connection = connection_in(servers_, host, port, unix_path, setup_, made);
  if (made) hand_over_events(connection);
  return connection;
}

void ClusterLink::hand_over_events(NodeConnection& connection) {
  // Every server's: a shard channel's messages come from the server that
  // owns its slot, and a subscription is sent again on the server whose
  // session begins (the links own their connections: `this` outlives them).
  connection.set_ready_handler([this] {
    if (ready_handler_) ready_handler_();
  });
  connection.set_servers_handler([this] {
    if (servers_handler_) servers_handler_();
  });
  if (!push_handler_) return;
  connection.set_push_handler([this](std::string_view channel, std::string_view payload) {
    if (push_handler_) push_handler_(channel, payload);
  });
  // The channel's slot moved: the map says where to, and the ready handler
  // then subscribes it there.
  connection.set_unsubscribed_handler([this](std::string_view) { read_map_soon(); });
}

NodeConnection& ClusterLink::map_connection(const ClusterSeed& seed) {
  // A subscriber's sessions to the masters are in subscribe mode, where a
  // server answers no CLUSTER SLOTS: its map is read on a session of its
  // own.
  if (!push_handler_) return connection_to(seed.host, seed.port, seed.unix_path);
  bool made = false;
  return connection_in(map_servers_, seed.host, seed.port, seed.unix_path, SessionSetup{}, made);
}

void ClusterLink::on_keyed_answer(const NodeResponse& response) {
  // A redirect says the map is out of date.
  const std::string_view error = error_text(response);
  if (error.substr(0, 6) == "MOVED " || error.substr(0, 4) == "ASK ") read_map_soon();
}

void ClusterLink::read_map_soon() {
  if (closed_) return;
  const TimePoint now = loop_.clock().now();
  if (now >= last_prompted_map_read_ + kSilentMasterMapInterval) {
    last_prompted_map_read_ = now;
    map_wanted_ = true;
    read_map();
    return;
  }
  if (map_timer_ != TimerQueue::kNone) return;
  map_timer_ =
      loop_.timers().schedule_at(last_prompted_map_read_ + kSilentMasterMapInterval, [this] {
        map_timer_ = TimerQueue::kNone;
        read_map_soon();
      });
}

NodeConnection& ClusterLink::seed_connection() {
  const ClusterSeed& seed = member_.cluster.front();
  return connection_to(seed.host, seed.port, seed.unix_path);
}

void ClusterLink::start() {
  if (started_ || closed_) return;
  // Connections made from here on start as they are made.
  for (auto& [key, connection] : servers_) connection->start();
  for (auto& [key, connection] : map_servers_) connection->start();
  started_ = true;
  (void)seed_connection();
  read_map();
}

void ClusterLink::read_map() {
  if (reading_map_ || closed_ || member_.cluster.empty()) return;
  reading_map_ = true;
  map_wanted_ = false;
  const ClusterSeed& seed = member_.cluster[next_seed_ % member_.cluster.size()];
  static constexpr std::array<std::string_view, 2> kSlots{"CLUSTER", "SLOTS"};
  Request request;
  request.command = kSlots;
  request.sent_at = loop_.clock().now();
  request.sink = map_reader_;
  map_connection(seed).send(std::move(request));
}

void ClusterLink::count_takeovers(const SlotMap& next) {
  if (!map_) return;
  // Each master that took slots another master held, counted once per map.
  std::vector<const ShardEndpoint*> took;
  for (std::uint32_t slot = 0; slot < kClusterSlots; ++slot) {
    const ShardEndpoint* before = map_->master_of(static_cast<std::uint16_t>(slot));
    const ShardEndpoint* now = next.master_of(static_cast<std::uint16_t>(slot));
    if (before == nullptr || now == nullptr || before->same_server(*now)) continue;
    if (std::none_of(took.begin(), took.end(),
                     [now](const ShardEndpoint* each) { return each->same_server(*now); })) {
      took.push_back(now);
    }
  }
  for (const ShardEndpoint* master : took) {
    stats_.count_shard_event(master->host + ":" + std::to_string(master->port),
                             NodeMetrics::ShardEvent::took_over);
  }
}

// A session already open to a server that serves no slot in the map (or
// before the first map: a seed's, which read it) may have begun while the
// server was a replica, or a restarted replica not yet following its
// master (which reports itself a master for a moment): its first word,
// check_slot_markers, then ran before the promotion it would have seen.
// Once the server serves slots, a new session runs it again (docs/
// safety.md, "A cluster as a member"); so a member's first map costs its
// seed one new session.
void ClusterLink::renew_if_newly_master(const ShardEndpoint& server) {
  if (map_) {
    const std::vector<ShardEndpoint>& masters = map_->masters();
    if (std::any_of(masters.begin(), masters.end(),
                    [&](const ShardEndpoint& each) { return each.same_server(server); })) {
      return;
    }
  }
  const std::string key = server_key(server.host, server.port, {});
  for (auto& [known, connection] : servers_) {
    if (known == key) connection->renew_session("the server now serves slots: a new session");
  }
}

void ClusterLink::on_map(const NodeResponse& response) {
  reading_map_ = false;
  if (closed_) return;
  const ClusterSeed& seed = member_.cluster[next_seed_ % member_.cluster.size()];
  std::string problem;
  if (response.kind == NodeResponse::Kind::reply && response.reply_count > 0) {
    // A server reached by a Unix socket has no host to lend a master
    // announced without one: such a map is refused (a TCP seed is needed).
    const std::string answering = seed.unix_path.empty() ? seed.host : std::string();
    std::string error;
    if (auto ranges = slot_ranges_from(*response.replies[0], answering, error)) {
      if (auto map = SlotMap::from_ranges(*ranges, error)) {
        count_takeovers(*map);
        for (const ShardEndpoint& master : map->masters()) renew_if_newly_master(master);
        map_ = std::move(map);
        ++maps_read_;
        stats_.map_reads.fetch_add(1, std::memory_order_relaxed);
        seeds_tried_ = 0;
        for (const ShardEndpoint& master : map_->masters()) {
          (void)connection_to(master.host, master.port, {});
        }
        // (The handler may refuse this member's votes: before the waiting
        // requests leave.)
        if (servers_handler_) servers_handler_();
        std::vector<std::shared_ptr<Routed>> waiting = std::exchange(waiting_, {});
        for (const auto& routed : waiting) route(routed);
        // What the layer above keeps on the servers by key (subscriptions,
        // listening marks) goes where the new map puts it.
        if (ready_handler_) ready_handler_();
        if (map_wanted_) read_map();
        return;
      }
    }
    problem = "its slot map: " + error;
  } else {
    problem = std::string(response.detail);
  }
  // This seed did not give a map: the next one is asked, once around.
  last_seed_problem_ = "seed " + server_key(seed.host, seed.port, seed.unix_path) + ": " + problem;
  next_seed_ = (next_seed_ + 1) % member_.cluster.size();
  if (++seeds_tried_ < member_.cluster.size()) {
    read_map();
    return;
  }
  seeds_tried_ = 0;
  std::vector<std::shared_ptr<Routed>> waiting = std::exchange(waiting_, {});
  for (const auto& routed : waiting) {
    fail(routed, "no seed of the cluster gave its slot map (" + last_seed_problem_ + ")");
  }
}

void ClusterLink::send(Request request) {
  auto routed = std::make_shared<Routed>();
  routed->link = this;
  routed->self = routed;
  routed->require_replicas = request.require_replicas;
  routed->cleanup = request.cleanup;
  routed->sent_at = request.sent_at;
  routed->expires_at = request.expires_at;
  routed->sink = std::move(request.sink);
  routed->tag = request.tag;
  routed->call.script = request.script;
  if (request.script == nullptr) {
    routed->command.assign(request.command.begin(), request.command.end());
    routed->keyless = true;
  } else if (request.call != nullptr) {
    routed->call.keys = request.call->keys;
    routed->call.args = request.call->args;
  } else if (request.prepared != nullptr) {
    // "numkeys key... arg...", as this client encoded it.
    const std::string_view tail = request.prepared->tail();
    std::size_t offset = 0;
    (void)next_tail_bulk(tail, offset);
    for (std::size_t i = 0; offset < tail.size(); ++i) {
      const std::string bytes(next_tail_bulk(tail, offset).bytes);
      (i < request.prepared->key_count() ? routed->call.keys : routed->call.args).push_back(bytes);
    }
  } else {
    routed->call.keys.assign(request.keys.begin(), request.keys.end());
    routed->call.args.assign(request.args.begin(), request.args.end());
  }
  if (!routed->keyless) {
    if (routed->call.keys.empty()) {
      routed->keyless = true;
    } else {
      routed->slot = hash_slot(routed->call.keys.front());
      for (const std::string& key : routed->call.keys) {
        if (hash_slot(key) != routed->slot) {
          fail(routed, "the request's keys span hash slots (a cluster runs a call in one slot)");
          return;
        }
      }
    }
  }
  if (closed_) {
    fail(routed, "connection closed");
    return;
  }
  if (!map_ && !routed->keyless) {
    if (waiting_.size() >= kMaxWaitingForMap) {
      fail(routed, "too many requests waiting for the cluster's slot map");
      return;
    }
    waiting_.push_back(routed);
    if (started_) read_map();
    return;
  }
  route(routed);
}

void ClusterLink::route(const std::shared_ptr<Routed>& routed) {
  if (!refused_.empty() && !routed->cleanup) {
    fail(routed, refused_);
    return;
  }
  NodeConnection* target = nullptr;
  if (routed->keyless) {
    target = &seed_connection();
  } else if (routed->asking) {
    target = &connection_to(routed->ask_host, routed->ask_port, {});
  } else {
    const ShardEndpoint* master = map_->master_of(routed->slot);
    if (master == nullptr) {
      fail(routed, "no master serves hash slot " + std::to_string(routed->slot) +
                       " in the cluster's slot map");
      return;
    }
    target = &connection_to(master->host, master->port, {});
  }
  routed->sent_host = target->config().unix_path.empty() ? target->config().host : std::string();
  routed->sent_to = target->config().unix_path.empty()
                        ? target->config().host + ":" + std::to_string(target->config().port)
                        : target->config().unix_path;
  if (routed->asking) {
    routed->asking = false;
    static constexpr std::array<std::string_view, 1> kAsking{"ASKING"};
    Request asking;
    asking.command = kAsking;
    asking.sent_at = routed->sent_at;
    target->send(std::move(asking));
  }
  Request request;
  request.sent_at = routed->sent_at;
  request.tag = routed->tag;
  std::vector<std::string_view> words;
  if (routed->call.script == nullptr) {
    words.assign(routed->command.begin(), routed->command.end());
    request.command = words;
  } else {
    request.script = routed->call.script;
    request.call = &routed->call;
    request.require_replicas = routed->require_replicas;
  }
  if (routed->cleanup) {
    request.cleanup = true;
    request.expires_at = routed->expires_at;
  } else {
    request.sink = routed;
  }
  target->send(std::move(request));
}

void ClusterLink::on_answer(const std::shared_ptr<Routed>& routed, const NodeResponse& response) {
  if (routed->answered) {
    // A late answer after the caller was told `timeout`: passed on as such.
    if (response.late && routed->sink) routed->sink->on_response(index_, routed->tag, response);
    return;
  }
  const std::string_view error = error_text(response);
  // The request's own deadline, as its connection counts it.
  Microseconds timeout = effective_node_timeout(lock_, member_);
  if (routed->call.script != nullptr) {
    timeout = std::max<Microseconds>(timeout, routed->call.script->min_timeout);
  }
  const bool in_time = loop_.clock().now() < routed->sent_at + timeout;
  if (!error.empty() && !closed_ && !routed->keyless && routed->redirects < kMaxRedirects &&
      in_time) {
    const std::optional<Redirect> redirect = parse_redirect(error);
    // An empty host is the answering server's; one reached by a Unix
    // socket has no host to give, and the redirect is not followed.
    if (redirect && (!redirect->host.empty() || !routed->sent_host.empty())) {
      ++routed->redirects;
      stats_.count_shard_event(routed->sent_to, redirect->kind == Redirect::Kind::moved
                                                    ? NodeMetrics::ShardEvent::moved
                                                    : NodeMetrics::ShardEvent::asked);
      const std::string host = redirect->host.empty() ? routed->sent_host : redirect->host;
      if (redirect->kind == Redirect::Kind::moved) {
        renew_if_newly_master(ShardEndpoint{host, redirect->port, {}});
        map_->move_slot(redirect->slot, ShardEndpoint{host, redirect->port, {}});
        map_wanted_ = true;
        read_map();
      } else {
        routed->asking = true;
        routed->ask_host = host;
        routed->ask_port = redirect->port;
      }
      route(routed);
      return;
    }
    if (error.starts_with("TRYAGAIN")) {
      // Kept here while it pauses: nothing else holds it then.
      ++routed->redirects;
      stats_.count_shard_event(routed->sent_to, NodeMetrics::ShardEvent::try_again);
      const TimerQueue::Id timer = loop_.timers().schedule_after(kTryAgainPause, [this, routed] {
        std::erase_if(pausing_, [&](const auto& entry) { return entry.second == routed; });
        route(routed);
      });
      pausing_.emplace_back(timer, routed);
      return;
    }
  }
  // A master of the map that does not answer may have been replaced: its
  // replica promoted, and the old master back as a replica that refuses
  // the session's first word, so no MOVED would ever say so. The map is
  // read again for the requests that follow (one read at a time, and at
  // most one per kSilentMasterMapInterval).
  if (response.kind == NodeResponse::Kind::unreachable && !routed->keyless && !closed_) {
    read_map_soon();
  }
  routed->answered = !response.late;
  if (routed->sink) routed->sink->on_response(index_, routed->tag, response);
}

void ClusterLink::fail_now(const std::shared_ptr<Routed>& routed, std::string_view why) {
  if (routed->cleanup || !routed->sink || routed->answered) return;
  routed->answered = true;
  NodeResponse response;
  response.kind = NodeResponse::Kind::unreachable;
  response.detail = why;
  response.may_have_run = false;
  routed->sink->on_response(index_, routed->tag, response);
}

void ClusterLink::fail(const std::shared_ptr<Routed>& routed, std::string why) {
  if (routed->cleanup || !routed->sink) return;
  routed->answered = true;
  loop_.turn().post([sink = routed->sink, tag = routed->tag, index = index_, why = std::move(why)] {
    NodeResponse response;
    response.kind = NodeResponse::Kind::unreachable;
    response.detail = why;
    response.may_have_run = false;
    sink->on_response(index, tag, response);
  });
}

void ClusterLink::send_command(std::initializer_list<std::string_view> argv) {
  if (!closed_) seed_connection().send_command(argv);
}

void ClusterLink::send_keyed_command(std::string_view key,
                                     std::initializer_list<std::string_view> argv) {
  if (closed_ || !map_) return;
  const ShardEndpoint* master = map_->master_of(hash_slot(key));
  if (master == nullptr) return;
  // Only on a ready session, as send_command: the ready handler sends it
  // once the session is (never queued behind a connect).
  NodeConnection& target = connection_to(master->host, master->port, {});
  if (!target.ready()) return;
  // Its answer is read for a redirect only: a map that named the wrong
  // master is read again, and the ready handler then sends it anew.
  const std::vector<std::string_view> words(argv);
  Request request;
  request.command = words;
  request.sent_at = loop_.clock().now();
  request.sink = keyed_answers_;
  target.send(std::move(request));
}

void ClusterLink::set_push_handler(
    std::function<void(std::string_view channel, std::string_view payload)> handler) {
  push_handler_ = std::move(handler);
  for (auto& [key, connection] : servers_) hand_over_events(*connection);
}

void ClusterLink::set_ready_handler(std::function<void()> handler) {
  ready_handler_ = std::move(handler);
}

void ClusterLink::close() {
  if (closed_) return;
  closed_ = true;
  map_reader_->detach();
  keyed_answers_->detach();
  // Answered here, not from a posted task: close() runs after the loop
  // turn has stopped taking tasks (LoopContext::close), and it is not
  // send(). The connections fail what they hold the same way.
  std::vector<std::shared_ptr<Routed>> waiting = std::exchange(waiting_, {});
  for (const auto& routed : waiting) fail_now(routed, "connection closed");
  std::vector<std::pair<TimerQueue::Id, std::shared_ptr<Routed>>> pausing =
      std::exchange(pausing_, {});
  for (auto& [timer, routed] : pausing) {
    loop_.timers().cancel(timer);
    fail_now(routed, "connection closed");
  }
  loop_.timers().cancel(map_timer_);
  map_timer_ = TimerQueue::kNone;
  for (auto& [key, connection] : servers_) connection->close();
  for (auto& [key, connection] : map_servers_) connection->close();
}

const NodeConnection* ClusterLink::connection_of(const ShardEndpoint& master) const noexcept {
  const std::string key = server_key(master.host, master.port, {});
  const auto found = std::find_if(servers_.begin(), servers_.end(),
                                  [&](const auto& entry) { return entry.first == key; });
  return found == servers_.end() ? nullptr : found->second.get();
}

bool ClusterLink::ready() const noexcept {
  if (!map_) return false;
  return std::all_of(map_->masters().begin(), map_->masters().end(),
                     [this](const ShardEndpoint& master) {
                       const NodeConnection* connection = connection_of(master);
                       return connection != nullptr && connection->ready();
                     });
}

std::uint64_t ClusterLink::session() const noexcept {
  std::uint64_t sum = maps_read_;
  for (const auto& [key, connection] : servers_) sum += connection->session();
  return sum;
}

bool ClusterLink::refused_transaction() const noexcept {
  return std::any_of(servers_.begin(), servers_.end(),
                     [](const auto& entry) { return entry.second->refused_transaction(); });
}

Persistence ClusterLink::persistence() const noexcept {
  if (!map_ || map_->masters().empty()) return Persistence::unknown;
  std::optional<Persistence> common;
  for (const ShardEndpoint& master : map_->masters()) {
    const NodeConnection* connection = connection_of(master);
    if (connection == nullptr) return Persistence::unknown;
    const Persistence mine = connection->persistence();
    if (common && *common != mine) return Persistence::unknown;
    common = mine;
  }
  return common.value_or(Persistence::unknown);
}

MemberServers ClusterLink::servers() const {
  MemberServers out;
  out.cluster = true;
  for (const auto& [name, connection] : servers_)
    out.run_ids.push_back(connection->health().run_id);
  if (map_) {
    for (const ShardEndpoint& master : map_->masters()) out.node_ids.push_back(master.id);
  }
  return out;
}

NodeHealth ClusterLink::health() const {
  if (servers_.empty()) {
    NodeHealth health;
    health.name = member_.name;
    health.last_error = "not started";
    return health;
  }
  return servers_.front().second->health();
}

}  // namespace redlock::detail
