#include "node_supervisor.hpp"

#include <cmath>
#include <cstdio>
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

std::vector<test::RedisServerOptions> node_options(const NodesSpec& nodes,
                                                   const FaketimeClocks* clocks) {
  std::vector<test::RedisServerOptions> options(static_cast<std::size_t>(nodes.count));
  for (int i = 0; i < nodes.count; ++i) {
    test::RedisServerOptions& one = options[static_cast<std::size_t>(i)];
    one.persistence = fixture_persistence(nodes.persistence);
    if (clocks != nullptr) one.environment = clocks->environment(i);
    if (nodes.tls) {
      const test::TestCertificates& certs = test::TestCertificates::shared();
      one.tls = test::TlsServerOptions{certs.server_cert(), certs.server_key(), certs.ca_file()};
    }
  }
  return options;
}

}  // namespace

std::string NodeSupervisor::tls_ca_file() const {
  return spec_.tls ? test::TestCertificates::shared().ca_file() : std::string();
}

NodeSupervisor::NodeSupervisor(const NodesSpec& nodes, std::string key_prefix,
                               const std::optional<FaketimeLibraries>& faketime)
    : spec_(nodes),
      key_prefix_(std::move(key_prefix)),
      clocks_(make_clocks(faketime, nodes.count)),
      cluster_(node_options(nodes, clocks_.get())),
      resource_(test::Persistence::none),
      state_(static_cast<std::size_t>(nodes.count)),
      last_tick_(std::chrono::steady_clock::now()),
      last_sync_note_(last_tick_) {
  for (int i = 0; i < count(); ++i) note_sync_points(i);
}

NodeSupervisor::~NodeSupervisor() {
  // The cluster (destroyed before clocks_) stops its nodes with SIGTERM, a
  // clean exit that removes libfaketime's files, but with SIGKILL after a
  // timeout.
  if (clocks_) {
    for (int i = 0; i < count(); ++i) clocks_->sweep_on_destruction(node(i).pid());
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
  node(index).pause();
  return "SIGSTOP";
}

std::string NodeSupervisor::resume(int index) {
  if (!node(index).paused()) return "not paused";
  node(index).resume();
  return "SIGCONT";
}

bool NodeSupervisor::down(int index) const {
  return state_.at(static_cast<std::size_t>(index)).killed;
}

bool NodeSupervisor::paused(int index) const {
  return cluster_.node(static_cast<std::size_t>(index)).paused();
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
  if (spec_.persistence != NodePersistence::everysec || down(index)) return;
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
    if (down(i)) done += name + " " + restart(i) + "; ";
    NodeState& state = state_.at(static_cast<std::size_t>(i));
    if (state.rate != 1.0) {
      set_clock_rate(i, 1.0);
      done += name + " clock rate 1; ";
    }
  }
  return done;
}

std::optional<std::vector<NodeKey>> NodeSupervisor::lock_keys(int index) {
  if (down(index) || paused(index)) return std::nullopt;
  test::RedisProbe probe = node(index).probe();
  if (!probe.ping()) return std::nullopt;
  std::vector<NodeKey> keys;
  for (const char* pattern : {"lock:*", "sem:*"}) {
    for (const std::string& key : probe.keys(key_prefix_ + pattern)) {
      NodeKey entry;
      entry.key = key;
      entry.value = probe.get(key).value_or("");
      entry.pttl_ms = probe.pttl(key);
      keys.push_back(std::move(entry));
    }
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
