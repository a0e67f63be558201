#include "cluster_member.hpp"

#include <algorithm>
#include <set>
#include <thread>

namespace redlock::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr int kSlots = 16384;

// Polls `condition` every 20 ms until it holds or `timeout` passes.
template <typename Condition>
bool within(milliseconds timeout, Condition condition) {
  const auto deadline = steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
}

// The value of `field` in an INFO-style "field:value\r\n" text.
std::string info_field(const std::string& text, const std::string& field) {
  const std::string prefix = field + ":";
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.starts_with(prefix)) return line.substr(prefix.size());
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return {};
}

// How many lines of CLUSTER NODES name a server that finished its
// handshake (no "handshake" or "noaddr" flag).
std::size_t known_nodes(RedisServer& server) {
  const Reply nodes = server.probe().command({"CLUSTER", "NODES"});
  if (nodes.failed()) return 0;
  std::size_t known = 0;
  std::size_t at = 0;
  while (at < nodes.text.size()) {
    const std::size_t end = nodes.text.find('\n', at);
    const std::string line = nodes.text.substr(at, end - at);
    if (!line.empty() && line.find("handshake") == std::string::npos &&
        line.find("noaddr") == std::string::npos) {
      ++known;
    }
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return known;
}

// The port of the master that `server`'s CLUSTER SLOTS names for `slot`;
// 0 when it names none.
long long master_port_for(RedisServer& server, int slot) {
  const Reply slots = server.probe().command({"CLUSTER", "SLOTS"});
  if (slots.kind != Reply::Kind::array) return 0;
  for (const Reply& range : slots.elements) {
    if (range.elements.size() < 3) continue;
    if (range.elements[0].integer <= slot && slot <= range.elements[1].integer &&
        range.elements[2].elements.size() >= 2) {
      return range.elements[2].elements[1].integer;
    }
  }
  return 0;
}

}  // namespace

ShardedMember::ShardedMember(ShardedMemberOptions options) {
  if (options.shards == 0) throw RedisServerError("a cluster needs at least one shard");
  RedisServerOptions server = options.server;
  server.cluster_node_timeout = options.node_timeout;
  server.master_port.reset();
  for (std::size_t shard = 0; shard < options.shards; ++shard) {
    Shard made;
    made.first = static_cast<int>(shard * kSlots / options.shards);
    made.last = static_cast<int>((shard + 1) * kSlots / options.shards) - 1;
    for (std::size_t i = 0; i <= options.replicas_per_shard; ++i) {
      made.servers.push_back(std::make_unique<RedisServer>(server));
    }
    shards_.push_back(std::move(made));
  }
  form(options);
}

void ShardedMember::form(const ShardedMemberOptions& options) {
  const auto fail = [](const std::string& step, RedisServer& server, const Reply& reply) {
    throw RedisServerError("cluster: " + step + " on " + server.address() + ": " + reply.text +
                           "\n" + server.log_tail());
  };
  for (Shard& shard : shards_) {
    RedisServer& master = *shard.servers.front();
    const Reply added = master.probe().command(
        {"CLUSTER", "ADDSLOTSRANGE", std::to_string(shard.first), std::to_string(shard.last)});
    if (!added.is_ok()) fail("ADDSLOTSRANGE", master, added);
  }
  std::vector<RedisServer*> all = servers();
  RedisServer& first = *all.front();
  for (RedisServer* other : all) {
    if (other == &first) continue;
    const Reply met =
        first.probe().command({"CLUSTER", "MEET", "127.0.0.1", std::to_string(other->port()),
                               std::to_string(other->cluster_port())});
    if (!met.is_ok()) fail("MEET", first, met);
  }
  const bool everyone_known = within(options.form_timeout, [&] {
    return std::all_of(all.begin(), all.end(),
                       [&](RedisServer* s) { return known_nodes(*s) == all.size(); });
  });
  if (!everyone_known) {
    throw RedisServerError("cluster: the servers did not all meet within the form timeout");
  }
  for (Shard& shard : shards_) {
    const std::string master_id = ShardedMember::node_id(*shard.servers.front());
    for (std::size_t i = 1; i < shard.servers.size(); ++i) {
      RedisServer& replica = *shard.servers[i];
      // A replica must know the master's id first; MEET spreads it by gossip.
      Reply replicated;
      const bool done = within(options.form_timeout, [&] {
        replicated = replica.probe().command({"CLUSTER", "REPLICATE", master_id});
        return replicated.is_ok();
      });
      if (!done) fail("REPLICATE", replica, replicated);
    }
  }
  for (Shard& shard : shards_) {
    for (std::size_t i = 1; i < shard.servers.size(); ++i) {
      RedisServer& replica = *shard.servers[i];
      const bool linked = within(options.form_timeout, [&] {
        const Reply info = replica.probe().command({"INFO", "replication"});
        return !info.failed() && info_field(info.text, "master_link_status") == "up";
      });
      if (!linked) {
        throw RedisServerError("cluster: replica " + shard.servers[i]->address() +
                               " never linked to its master\n" + shard.servers[i]->log_tail());
      }
    }
  }
  if (!settled(options.form_timeout)) {
    throw RedisServerError("cluster: cluster_state never became ok");
  }
}

std::pair<int, int> ShardedMember::slots_of(std::size_t shard) const {
  return {shards_.at(shard).first, shards_.at(shard).last};
}

RedisServer& ShardedMember::master(std::size_t shard) { return *shards_.at(shard).servers.front(); }

std::vector<RedisServer*> ShardedMember::replicas(std::size_t shard) {
  std::vector<RedisServer*> out;
  auto& servers = shards_.at(shard).servers;
  for (std::size_t i = 1; i < servers.size(); ++i) out.push_back(servers[i].get());
  return out;
}

std::vector<RedisServer*> ShardedMember::servers() {
  std::vector<RedisServer*> out;
  for (Shard& shard : shards_) {
    for (auto& server : shard.servers) out.push_back(server.get());
  }
  return out;
}

std::vector<std::string> ShardedMember::seeds() const {
  std::vector<std::string> out;
  for (const Shard& shard : shards_) {
    for (const auto& server : shard.servers) out.push_back(server->address());
  }
  return out;
}

RedisServer* ShardedMember::server_on(std::uint16_t port) {
  for (RedisServer* server : servers()) {
    if (server->port() == port) return server;
  }
  return nullptr;
}

std::string ShardedMember::address() const {
  std::string out = "redis+cluster://";
  const std::vector<std::string> all = seeds();
  for (std::size_t i = 0; i < all.size(); ++i) out += (i > 0 ? "," : "") + all[i];
  return out;
}

std::string ShardedMember::node_id(RedisServer& server) {
  return server.probe().command({"CLUSTER", "MYID"}).text;
}

std::size_t ShardedMember::shard_of(std::uint16_t slot) const {
  if (auto moved = moved_.find(slot); moved != moved_.end()) return moved->second;
  for (std::size_t shard = 0; shard < shards_.size(); ++shard) {
    if (slot >= shards_[shard].first && slot <= shards_[shard].last) return shard;
  }
  return 0;  // (every slot is some shard's)
}

void ShardedMember::follow_roles() {
  for (Shard& shard : shards_) {
    int slot = shard.first;
    while (slot < shard.last && moved_.contains(static_cast<std::uint16_t>(slot))) ++slot;
    long long port = 0;
    for (RedisServer* server : servers()) {
      if (!server->running() || server->paused()) continue;
      port = master_port_for(*server, slot);
      if (port != 0) break;
    }
    for (auto& server : shard.servers) {
      if (server->port() == port) {
        std::swap(server, shard.servers.front());
        break;
      }
    }
  }
}

bool ShardedMember::epochs_distinct(milliseconds timeout) {
  // A new cluster's masters start with config epoch 0 and resolve their
  // collisions over the first seconds, each taking a new epoch with the
  // slots it had then: one that does so in the middle of a slot move
  // claims the slot back from the target with a newer epoch.
  const auto deadline = steady_clock::now() + timeout;
  for (;;) {
    std::set<std::string> epochs;
    bool distinct = true;
    for (const Shard& shard : shards_) {
      RedisServer& owner = *shard.servers.front();
      if (!owner.running() || owner.paused()) continue;
      const Reply info = owner.probe().command({"CLUSTER", "INFO"});
      const std::string epoch = info_field(info.text, "cluster_my_epoch");
      if (epoch.empty() || !epochs.insert(epoch).second) distinct = false;
    }
    if (distinct) return true;
    if (steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
}

bool ShardedMember::begin_slot_move(std::uint16_t slot, std::size_t to) {
  if (!epochs_distinct(std::chrono::seconds(20))) {
    refusal_ = "the masters' config epochs never became distinct";
    return false;
  }
  RedisServer& source = master(shard_of(slot));
  RedisServer& target = master(to);
  const std::string text = std::to_string(slot);
  for (const auto& [server, words] :
       {std::pair{&target, std::vector<std::string>{"CLUSTER", "SETSLOT", text, "IMPORTING",
                                                    node_id(source)}},
        std::pair{&source, std::vector<std::string>{"CLUSTER", "SETSLOT", text, "MIGRATING",
                                                    node_id(target)}}}) {
    const Reply marked = server->probe().command(words);
    if (!marked.is_ok()) {
      refusal_ = words[3] + ": " + marked.text;
      return false;
    }
  }
  return true;
}

bool ShardedMember::migrate_keys(std::uint16_t slot, std::size_t to,
                                 const std::vector<std::string>& keys) {
  if (keys.empty()) return true;
  std::vector<std::string> migrate{
      "MIGRATE", "127.0.0.1", std::to_string(master(to).port()), "", "0", "5000", "KEYS"};
  migrate.insert(migrate.end(), keys.begin(), keys.end());
  // NOKEY: every key named had expired since it was listed (a key past its
  // expiry is listed until the server reclaims it), so none is left.
  const Reply moved = master(shard_of(slot)).probe().command(migrate);
  if (moved.is_ok() || moved.text == "NOKEY") return true;
  refusal_ = "MIGRATE: " + moved.text;
  return false;
}

bool ShardedMember::end_slot_move(std::uint16_t slot, std::size_t to) {
  const std::string target = node_id(master(to));
  // The target first, then the source: the order the cluster's own
  // resharding uses, so no master ever names a slot nobody serves.
  std::vector<std::size_t> order{to, shard_of(slot)};
  for (std::size_t shard = 0; shard < shards_.size(); ++shard) {
    if (shard != order[0] && shard != order[1]) order.push_back(shard);
  }
  for (const std::size_t shard : order) {
    if (shard == order[1] && order[1] == order[0]) continue;
    RedisServer& owner = master(shard);
    if (!owner.running() || owner.paused()) continue;
    const Reply given =
        owner.probe().command({"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", target});
    if (!given.is_ok()) {
      refusal_ = "NODE: " + given.text;
      return false;
    }
  }
  moved_[slot] = to;
  // Until every server names the target, a server that has not heard may
  // redirect a call back to the source, and the next move of the slot
  // would start from a master that does not own it yet.
  return all_name(slot, to);
}

bool ShardedMember::all_name(std::uint16_t slot, std::size_t shard) {
  const auto deadline = steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    bool agreed = true;
    for (RedisServer* server : servers()) {
      if (server->running() && !server->paused() &&
          master_port_for(*server, slot) != master(shard).port()) {
        agreed = false;
      }
    }
    if (agreed) return true;
    if (steady_clock::now() >= deadline) {
      refusal_ = "the servers' maps did not agree on the slot's master";
      return false;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
}

bool ShardedMember::settle_slot(std::uint16_t slot) {
  const std::string text = std::to_string(slot);
  // The master that holds the slot's keys (they moved, and the slot was
  // claimed back), else the one most masters name.
  std::size_t owner = shards_.size();
  int most = 0;
  for (std::size_t shard = 0; shard < shards_.size(); ++shard) {
    int naming = 0;
    for (const Shard& each : shards_) {
      RedisServer& server = *each.servers.front();
      if (server.running() && !server.paused() &&
          master_port_for(server, slot) == master(shard).port()) {
        ++naming;
      }
    }
    if (naming > most) {
      owner = shard;
      most = naming;
    }
  }
  for (std::size_t shard = 0; shard < shards_.size(); ++shard) {
    RedisServer& server = master(shard);
    if (server.running() && !server.paused() &&
        server.probe().command({"CLUSTER", "COUNTKEYSINSLOT", text}).integer > 0) {
      owner = shard;
    }
  }
  if (owner == shards_.size()) {
    refusal_ = "no master is named for the slot";
    return false;
  }
  // Every mark of a move cleared, the slot given to it everywhere (itself
  // first), and its epoch made the newest, so that its claim wins.
  for (const Shard& shard : shards_) {
    (void)shard.servers.front()->probe().command({"CLUSTER", "SETSLOT", text, "STABLE"});
  }
  const std::string id = node_id(master(owner));
  (void)master(owner).probe().command({"CLUSTER", "SETSLOT", text, "NODE", id});
  (void)master(owner).probe().command({"CLUSTER", "BUMPEPOCH"});
  for (std::size_t shard = 0; shard < shards_.size(); ++shard) {
    if (shard != owner) {
      (void)master(shard).probe().command({"CLUSTER", "SETSLOT", text, "NODE", id});
    }
  }
  moved_[slot] = owner;
  return all_name(slot, owner);
}

bool ShardedMember::move_slot(std::uint16_t slot, std::size_t to) {
  if (!begin_slot_move(slot, to)) return false;
  for (;;) {
    const Reply in_slot = master(shard_of(slot))
                              .probe()
                              .command({"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), "100"});
    if (in_slot.kind != Reply::Kind::array) {
      refusal_ = "GETKEYSINSLOT: " + in_slot.text;
      return false;
    }
    if (in_slot.elements.empty()) break;
    std::vector<std::string> keys;
    for (const Reply& key : in_slot.elements) keys.push_back(key.text);
    if (!migrate_keys(slot, to, keys)) return false;
  }
  return end_slot_move(slot, to);
}

bool ShardedMember::fail_over(std::size_t shard, Failover how, milliseconds timeout) {
  Shard& target = shards_.at(shard);
  if (target.servers.size() < 2) return false;
  RedisServer& promoted = *target.servers[1];
  std::vector<std::string> command{"CLUSTER", "FAILOVER"};
  if (how == Failover::force) command.emplace_back("FORCE");
  if (how == Failover::takeover) command.emplace_back("TAKEOVER");
  const auto names_promoted = [&] {
    for (RedisServer* server : servers()) {
      if (!server->running() || server->paused()) continue;
      if (master_port_for(*server, target.first) != promoted.port()) return false;
    }
    return true;
  };
  // A manual failover that does not end within its own limit (5 s: the
  // replica must first catch up with the paused master) is abandoned by
  // the server; it is asked again while time is left.
  const auto deadline = steady_clock::now() + timeout;
  bool named = false;
  while (!named && steady_clock::now() < deadline) {
    // (Refused once the replica is a master already, whose map is still
    // spreading: the wait below sees it.)
    (void)promoted.probe().command(command);
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - steady_clock::now());
    named = within(std::min(left, milliseconds(6000)), names_promoted);
  }
  if (!named) return false;
  std::swap(target.servers[0], target.servers[1]);
  return true;
}

bool ShardedMember::settled(milliseconds timeout) {
  return within(timeout, [&] {
    for (RedisServer* server : servers()) {
      if (!server->running() || server->paused()) continue;
      const Reply info = server->probe().command({"CLUSTER", "INFO"});
      if (info.failed() || info_field(info.text, "cluster_state") != "ok") return false;
    }
    return true;
  });
}

}  // namespace redlock::test
