#include "node_supervisor.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <system_error>

#include "test_certificates.hpp"

namespace redlock::chaos {
namespace {

test::Persistence fixture_persistence(NodePersistence persistence) {
  switch (persistence) {
    case NodePersistence::none:
      return test::Persistence::none;
    case NodePersistence::everysec:
      return test::Persistence::aof_everysec;
    case NodePersistence::always:
      return test::Persistence::aof_always;
  }
  return test::Persistence::none;
}

// One atomic step per jump: every expiring key of the prefix moves by the
// same amount, as it would if the node's clock had.
constexpr const char* kJumpScript = R"lua(
local delta = tonumber(ARGV[2])
local moved = 0
for _, key in ipairs(redis.call('KEYS', ARGV[1])) do
  local left = redis.call('PTTL', key)
  if left > 0 then
    local now = left - delta
    if now <= 0 then redis.call('DEL', key) else redis.call('PEXPIRE', key, now) end
    moved = moved + 1
  end
end
return moved
)lua";

std::vector<std::filesystem::path> incremental_aof_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "appendonlydir", error)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".incr.aof") != std::string::npos) files.push_back(entry.path());
  }
  return files;
}

std::unique_ptr<FaketimeClocks> make_clocks(const std::optional<FaketimeLibraries>& faketime,
                                            int nodes) {
  if (!faketime) return nullptr;
  return std::make_unique<FaketimeClocks>(*faketime, nodes);
}

test::RedisServerOptions server_options(const NodesSpec& nodes) {
  test::RedisServerOptions one;
  one.persistence = fixture_persistence(nodes.persistence);
  if (nodes.tls) {
    const test::TestCertificates& certs = test::TestCertificates::shared();
    one.tls = test::TlsServerOptions{certs.server_cert(), certs.server_key(), certs.ca_file()};
  }
  return one;
}

// The single-server nodes, in node order.
std::vector<test::RedisServerOptions> single_options(const NodesSpec& nodes,
                                                     const FaketimeClocks* clocks) {
  std::vector<test::RedisServerOptions> options;
  for (int i = 0; i < nodes.count; ++i) {
    if (nodes.is_cluster(i)) continue;
    test::RedisServerOptions one = server_options(nodes);
    if (clocks != nullptr) one.environment = clocks->environment(i);
    options.push_back(std::move(one));
  }
  return options;
}

std::map<int, std::size_t> single_indices(const NodesSpec& nodes) {
  std::map<int, std::size_t> out;
  for (int i = 0; i < nodes.count; ++i) {
    if (!nodes.is_cluster(i)) out.emplace(i, out.size());
  }
  return out;
}

}  // namespace

std::string NodeSupervisor::tls_ca_file() const {
  return spec_.tls ? test::TestCertificates::shared().ca_file() : std::string();
}

NodeSupervisor::NodeSupervisor(const NodesSpec& nodes, std::string key_prefix,
                               std::uint16_t lock_slot,
                               const std::optional<FaketimeLibraries>& faketime)
    : spec_(nodes),
      key_prefix_(std::move(key_prefix)),
      clocks_(make_clocks(faketime, nodes.count)),
      lock_slot_(lock_slot),
      single_of_(single_indices(nodes)),
      singles_(single_options(nodes, clocks_.get())),
      members_(static_cast<std::size_t>(nodes.count)),
      resource_(test::Persistence::none),
      state_(static_cast<std::size_t>(nodes.count)),
      last_tick_(std::chrono::steady_clock::now()),
      last_sync_note_(last_tick_) {
  for (const int index : nodes.clusters) {
    test::ShardedMemberOptions options;
    options.shards = static_cast<std::size_t>(nodes.shards);
    options.replicas_per_shard = static_cast<std::size_t>(nodes.replicas);
    options.node_timeout = nodes.cluster_node_timeout;
    options.server = server_options(nodes);
    // A shard whose master is down leaves the others serving their slots,
    // as a member's vote is lost for that shard's slots only.
    options.server.extra_arguments = {"--cluster-require-full-coverage", "no"};
    members_.at(static_cast<std::size_t>(index)) = std::make_unique<test::ShardedMember>(options);
  }
  for (int i = 0; i < count(); ++i) note_sync_points(i);
}

std::vector<std::string> NodeSupervisor::seeds(int index) const {
  return members_.at(static_cast<std::size_t>(index))->seeds();
}

std::size_t NodeSupervisor::lock_shard(int index) {
  test::ShardedMember& cluster = member(index);
  cluster.follow_roles();
  return cluster.shard_of(lock_slot_);
}

std::string NodeSupervisor::shard_name(int index, std::size_t shard) {
  return "shard " + std::to_string(shard) + " (master " + member(index).master(shard).address() +
         ")";
}

test::RedisServer& NodeSupervisor::lock_master(int index, std::string& name) {
  const std::size_t shard = lock_shard(index);
  name = shard_name(index, shard);
  return member(index).master(shard);
}

NodeSupervisor::~NodeSupervisor() {
  // The nodes (destroyed before clocks_) stop with SIGTERM, a
  // clean exit that removes libfaketime's files, but with SIGKILL after a
  // timeout.
  if (clocks_) {
    for (const auto& [index, single] : single_of_) {
      clocks_->sweep_on_destruction(singles_.node(single).pid());
    }
  }
}

void NodeSupervisor::kill9(int index) {
  const pid_t pid = node(index).pid();
  node(index).kill9();
  if (clocks_) FaketimeClocks::remove_leftovers(pid);
  NodeState& state = state_.at(static_cast<std::size_t>(index));
  state.killed = true;
  state.pending_jump_ms = 0;  // a stopped clock does not run on while the node is down
}

std::string NodeSupervisor::kill(int index) {
  if (is_cluster(index)) {
    NodeState& state = state_.at(static_cast<std::size_t>(index));
    if (state.killed_server != nullptr) return "a master is down already";
    std::string name;
    state.killed_server = &lock_master(index, name);
    state.killed_server->kill9();
    return "kill -9 of " + name;
  }
  kill9(index);
  return "kill -9";
}

std::string NodeSupervisor::power_loss(int index) {
  NodeState& state = state_.at(static_cast<std::size_t>(index));
  kill9(index);
  if (spec_.persistence != NodePersistence::everysec) {
    return "kill -9 (power loss: nothing unsynced to drop)";
  }
  std::uintmax_t dropped = 0;
  for (const auto& file : incremental_aof_files(node(index).directory())) {
    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(file, error);
    if (error) continue;
    auto noted = state.synced_sizes.find(file);
    const std::uintmax_t keep = noted == state.synced_sizes.end() ? 0 : noted->second;
    if (size > keep) {
      std::filesystem::resize_file(file, keep, error);
      if (!error) dropped += size - keep;
    }
  }
  return "kill -9, power loss: dropped " + std::to_string(dropped) + " unsynced AOF bytes";
}

std::string NodeSupervisor::restart(int index) {
  NodeState& state = state_.at(static_cast<std::size_t>(index));
  if (is_cluster(index)) {
    if (state.killed_server == nullptr) return "not down";
    test::RedisServer& server = *state.killed_server;
    try {
      server.restart();
    } catch (const std::exception& error) {
      return std::string("restart failed: ") + error.what();
    }
    state.killed_server = nullptr;
    // (It rejoins as its shard's master, or as the replica of the one the
    // cluster promoted meanwhile.)
    return "restarted " + server.address();
  }
  // The fixture's restart stops a running node first; a restart step (or a
  // kill's scheduled end) must never do that to a live node.
  if (!state.killed) return "not down";
  try {
    node(index).restart();
  } catch (const std::exception& error) {
    return std::string("restart failed: ") + error.what();
  }
  state.killed = false;
  state.synced_sizes.clear();
  note_sync_points(index);
  return "restarted on port " + std::to_string(port(index));
}

std::string NodeSupervisor::pause(int index) {
  if (down(index)) return "not running";
  if (is_cluster(index)) {
    NodeState& state = state_.at(static_cast<std::size_t>(index));
    if (state.paused_server != nullptr) return "paused already";
    std::string name;
    state.paused_server = &lock_master(index, name);
    state.paused_server->pause();
    return "SIGSTOP of " + name;
  }
  node(index).pause();
  return "SIGSTOP";
}

std::string NodeSupervisor::resume(int index) {
  if (is_cluster(index)) {
    NodeState& state = state_.at(static_cast<std::size_t>(index));
    if (state.paused_server == nullptr) return "not paused";
    state.paused_server->resume();
    const std::string name = state.paused_server->address();
    state.paused_server = nullptr;
    return "SIGCONT of " + name;
  }
  if (!node(index).paused()) return "not paused";
  node(index).resume();
  return "SIGCONT";
}

// A replica that lags must not receive what its master takes from now on:
// one only stopped (SIGSTOP) would read it from its socket once resumed. So
// the replica is stopped and its master drops its link (CLIENT KILL TYPE
// replica), as a link that broke would: what the master takes next stays in
// the master's backlog, and the replica keeps everything it had, its own
// backlog included.
std::string NodeSupervisor::begin_lag(int index) {
  NodeState& state = state_.at(static_cast<std::size_t>(index));
  test::ShardedMember& cluster = member(index);
  const std::size_t shard = lock_shard(index);
  const std::vector<test::RedisServer*> replicas = cluster.replicas(shard);
  if (state.lagging != nullptr || replicas.empty() || !replicas.front()->running()) {
    return "no replica to stop";
  }
  state.lagging = replicas.front();
  state.lagging->pause();
  const test::Reply dropped =
      cluster.master(shard).probe().command({"CLIENT", "KILL", "TYPE", "replica"});
  return "replica " + state.lagging->address() + " of " + shard_name(index, shard) +
         " stopped, its link dropped (" +
         (dropped.kind == test::Reply::Kind::integer ? std::to_string(dropped.integer)
                                                     : dropped.text) +
         "): it misses every write from now";
}

std::string NodeSupervisor::end_lag(int index) {
  NodeState& state = state_.at(static_cast<std::size_t>(index));
  if (state.lagging == nullptr) return "no replica stopped";
  test::RedisServer& replica = *state.lagging;
  state.lagging = nullptr;
  replica.resume();
  return "replica " + replica.address() + " resumed, not promoted";
}

std::string NodeSupervisor::fail_over(int index) {
  NodeState& state = state_.at(static_cast<std::size_t>(index));
  test::ShardedMember& cluster = member(index);
  const std::size_t shard = lock_shard(index);
  test::RedisServer& old_master = cluster.master(shard);
  if (state.killed_server != nullptr || state.paused_server != nullptr) {
    if (state.lagging != nullptr) end_lag(index);
    return "not failed over: a server of the member is down or paused";
  }
  if (state.lagging == nullptr) {
    if (!cluster.fail_over(shard)) return "CLUSTER FAILOVER did not complete";
    return "replica " + cluster.master(shard).address() + " promoted (CLUSTER FAILOVER), " +
           old_master.address() + " its replica";
  }
  // The master goes first, so nothing it took reaches the replica, which
  // (replicas().front(), the one fail_over promotes) takes over as it is.
  old_master.kill9();
  test::RedisServer& replica = *state.lagging;
  state.lagging = nullptr;
  replica.resume();
  const bool promoted = cluster.fail_over(shard, test::ShardedMember::Failover::takeover);
  std::string restarted;
  try {
    old_master.restart();
    restarted = old_master.address() + " restarted to rejoin as its replica";
  } catch (const std::exception& error) {
    state.killed_server = &old_master;
    restarted = "restart of " + old_master.address() + " failed: " + error.what();
  }
  if (!promoted) return "master killed, CLUSTER FAILOVER TAKEOVER did not complete; " + restarted;
  return "master killed, replica " + cluster.master(shard).address() +
         " resumed and promoted with lag (CLUSTER FAILOVER TAKEOVER); " + restarted;
}

std::string NodeSupervisor::migrate(int index) {
  test::ShardedMember& cluster = member(index);
  const std::size_t from = lock_shard(index);
  const std::size_t to = (from + 1) % cluster.shards();
  const std::string what = "slot " + std::to_string(lock_slot_) + " from shard " +
                           std::to_string(from) + " to shard " + std::to_string(to);
  if (down(index) || paused(index)) return what + ": not moved, its master is down or paused";
  if (!cluster.move_slot(lock_slot_, to)) return what + ": a server refused the move";
  return what + ": moved, keys and all";
}

bool NodeSupervisor::down(int index) const {
  const NodeState& state = state_.at(static_cast<std::size_t>(index));
  return state.killed || state.killed_server != nullptr;
}

bool NodeSupervisor::paused(int index) const {
  if (is_cluster(index)) return state_.at(static_cast<std::size_t>(index)).paused_server != nullptr;
  return single(index).paused();
}

std::optional<std::string> NodeSupervisor::apply_jump(int index, long long delta_ms) {
  if (delta_ms == 0) return std::nullopt;
  if (clocks_) {
    // The machine's clock moves whether or not its server is up.
    if (!clocks_->shift(index, static_cast<double>(delta_ms))) return std::nullopt;
    char text[64];
    std::snprintf(text, sizeof text, "libfaketime offset now %+.3f s",
                  clocks_->offset_ms(index) / 1000.0);
    return text;
  }
  if (down(index) || paused(index)) return std::nullopt;
  test::RedisProbe probe = node(index).probe(std::chrono::milliseconds(500));
  const test::Reply reply =
      probe.command({"EVAL", kJumpScript, "0", key_prefix_ + "*", std::to_string(delta_ms)});
  if (reply.kind != test::Reply::Kind::integer) return std::nullopt;
  return std::to_string(reply.integer) + " keys moved";
}

std::string NodeSupervisor::clock_jump(int index, std::chrono::milliseconds delta) {
  const auto done = apply_jump(index, delta.count());
  const std::string what = "clock jump " + std::to_string(delta.count()) + " ms: ";
  if (!done) return what + (clocks_ ? "cannot write the offset file" : "node not reachable");
  return what + *done;
}

void NodeSupervisor::set_clock_rate(int index, double rate) {
  NodeState& state = state_.at(static_cast<std::size_t>(index));
  state.rate = rate;
  state.pending_jump_ms = 0;
}

void NodeSupervisor::tick() {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed_ms = std::chrono::duration<double, std::milli>(now - last_tick_).count();
  last_tick_ = now;
  for (int i = 0; i < count(); ++i) {
    NodeState& state = state_.at(static_cast<std::size_t>(i));
    if (state.rate == 1.0) continue;
    state.pending_jump_ms += (state.rate - 1.0) * elapsed_ms;
    const double whole = std::trunc(state.pending_jump_ms);
    if (whole != 0 && apply_jump(i, static_cast<long long>(whole))) {
      state.pending_jump_ms -= whole;
    }
  }
  if (now - last_sync_note_ >= std::chrono::seconds(1)) {
    last_sync_note_ = now;
    for (int i = 0; i < count(); ++i) note_sync_points(i);
  }
}

void NodeSupervisor::sync_now() {
  last_sync_note_ = std::chrono::steady_clock::now();
  for (int i = 0; i < count(); ++i) note_sync_points(i);
}

void NodeSupervisor::note_sync_points(int index) {
  if (spec_.persistence != NodePersistence::everysec || is_cluster(index) || down(index)) return;
  NodeState& state = state_.at(static_cast<std::size_t>(index));
  for (const auto& file : incremental_aof_files(node(index).directory())) {
    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(file, error);
    if (!error) state.synced_sizes[file] = size;
  }
}

std::string NodeSupervisor::heal() {
  std::string done;
  for (int i = 0; i < count(); ++i) {
    const std::string name = "n" + std::to_string(i);
    if (paused(i)) done += name + " " + resume(i) + "; ";
    if (state_.at(static_cast<std::size_t>(i)).lagging != nullptr) {
      done += name + " " + end_lag(i) + "; ";
    }
    if (down(i)) done += name + " " + restart(i) + "; ";
    NodeState& state = state_.at(static_cast<std::size_t>(i));
    if (state.rate != 1.0) {
      set_clock_rate(i, 1.0);
      done += name + " clock rate 1; ";
    }
  }
  return done;
}

namespace {

// The lock and permit keys on one server, in either key layout
// (docs/algorithm.md, "Key layout"): under the prefix, or under the prefix
// and a slot's hash tag.
bool add_lock_keys(test::RedisProbe& probe, const std::string& prefix, std::vector<NodeKey>& keys) {
  if (!probe.ping()) return false;
  for (const char* pattern : {"lock:*", "sem:*", "{*}lock:*", "{*}sem:*"}) {
    for (const std::string& key : probe.keys(prefix + pattern)) {
      NodeKey entry;
      entry.key = key;
      entry.value = probe.get(key).value_or("");
      entry.pttl_ms = probe.pttl(key);
      keys.push_back(std::move(entry));
    }
  }
  return true;
}

}  // namespace

std::optional<std::vector<NodeKey>> NodeSupervisor::lock_keys(int index) {
  if (down(index) || paused(index)) return std::nullopt;
  if (is_cluster(index)) return member_lock_keys(index);
  test::RedisProbe probe = node(index).probe();
  std::vector<NodeKey> keys;
  if (!add_lock_keys(probe, key_prefix_, keys)) return std::nullopt;
  return keys;
}

// Every shard master's keys; nullopt when the lock shard's cannot be read.
std::optional<std::vector<NodeKey>> NodeSupervisor::member_lock_keys(int index) {
  test::ShardedMember& cluster = member(index);
  const std::size_t locked = lock_shard(index);
  std::vector<NodeKey> keys;
  for (std::size_t shard = 0; shard < cluster.shards(); ++shard) {
    test::RedisServer& master = cluster.master(shard);
    if (!master.running() || master.paused()) {
      if (shard == locked) return std::nullopt;
      continue;
    }
    test::RedisProbe probe = master.probe();
    if (!add_lock_keys(probe, key_prefix_, keys) && shard == locked) return std::nullopt;
  }
  return keys;
}

bool NodeSupervisor::resource_state(const std::string& counter_key, const std::string& log_key,
                                    long long& counter, std::vector<std::string>& log) {
  test::RedisProbe probe = resource_.probe();
  const auto value = probe.get(counter_key);
  counter = value ? std::atoll(value->c_str()) : 0;
  const test::Reply reply = probe.command({"LRANGE", log_key, "0", "-1"});
  if (reply.kind != test::Reply::Kind::array) return false;
  log.clear();
  for (const test::Reply& element : reply.elements) log.push_back(element.text);
  return true;
}

}  // namespace redlock::chaos
