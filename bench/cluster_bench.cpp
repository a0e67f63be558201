// What a Redis Cluster member costs and buys against one server per member,
// in one run (docs/performance.md, "Cluster members"):
//
//   BM_SingleServerMembers/D  three members, each one redis-server
//   BM_ClusterMembers/D       three members, each a Redis Cluster of three
//                             masters (no replicas: replication costs the
//                             masters the same in either shape)
//
// D cycles in flight (1 and 64), worker w locking "bench:<w>" every cycle,
// so the 64 resources spread over the shards' slots as a service's would.
// Counters, beside the cycle harness's (p50_us, p99_us, ops_per_s,
// node_cpu_us: the CPU of every server per cycle): busiest_cpu_us, the CPU
// per cycle of the one server that used most, which is what bounds one
// member's capacity: a cluster member gains what its busiest shard saves.
//
// Servers: started once per process by the test fixture on free loopback
// ports. Before timing, every worker's resource is locked once on every
// member, so each slot's first use (its marker on every member) is behind.
//
//   BM_CycleAfterSlotMoved     one acquire and release right after the
//                              resource's slot moved on every member
//                              (moved_us), and one more once the map
//                              settled (settled_us)
//
//   BM_ClusterSet/A            one acquire and release of a set of three
//                              resources over the cluster members: A = 0
//                              in one slot (one call per member), A = 1
//                              each in its own shard (one call per slot)
//
//   BM_CheckSlotMarkersScan/N/R one check_slot_markers call, the first
//                              word of every session, on a server that
//                              shows a promotion and holds N keys (N/16 of
//                              them slot markers). R = 0: the promotion's
//                              first check, which SCANs the whole keyspace
//                              for markers while the server answers
//                              nothing else; R = 1: a later session's,
//                              which finds the first one's record and
//                              scans nothing. ms_per_call per call.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_nodes.hpp"
#include "client_driver.hpp"
#include "cluster_member.hpp"
#include "cycle_harness.hpp"
#include "protocol/hash_slot.hpp"
#include "redis_probe.hpp"
#include "redlock/redlock.hpp"
#include "scripts/scripts.hpp"

namespace redlock::bench {
namespace {

constexpr std::size_t kMembers = 3;
constexpr std::uint64_t kWarmupCycles = 200;

// The servers of one shape: the members' addresses, and every server's
// process for the CPU counters.
struct Shape {
  std::vector<std::string> addresses;
  std::vector<BenchNode> servers;
};

const Shape& single_servers() {
  static const Shape shape = [] {
    Shape made;
    made.servers = started_nodes(kMembers);
    for (const BenchNode& node : made.servers) made.addresses.push_back(node.address());
    return made;
  }();
  return shape;
}

// The three cluster members, formed once per process.
std::vector<std::unique_ptr<test::ShardedMember>>& clusters() {
  static std::vector<std::unique_ptr<test::ShardedMember>> members = [] {
    std::vector<std::unique_ptr<test::ShardedMember>> made;
    for (std::size_t i = 0; i < kMembers; ++i) {
      test::ShardedMemberOptions options;
      options.shards = 3;
      options.replicas_per_shard = 0;
      made.push_back(std::make_unique<test::ShardedMember>(options));
    }
    return made;
  }();
  return members;
}

const Shape& cluster_members() {
  static const Shape shape = [] {
    Shape made;
    for (const auto& member : clusters()) {
      made.addresses.push_back(member->address());
      for (test::RedisServer* server : member->servers()) {
        made.servers.push_back(BenchNode{"127.0.0.1", server->port(), server->pid()});
      }
    }
    return made;
  }();
  return shape;
}

std::vector<double> each_cpu(const std::vector<BenchNode>& servers) {
  std::vector<double> out;
  for (const BenchNode& server : servers) out.push_back(node_cpu_seconds({server}).value_or(0));
  return out;
}

void run_cycles(benchmark::State& state, const Shape& (*shape_of)()) {
  const auto depth = static_cast<std::size_t>(state.range(0));
  const Shape* shape = nullptr;
  try {
    shape = &shape_of();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  BenchLoop loop;
  ClientDriver driver(loop.get(), shape->addresses, depth);
  const auto timed = [&](Pipeline& pipeline) {
    const std::vector<double> before = each_cpu(shape->servers);
    const std::uint64_t first = pipeline.completed();
    time_cycles(state, pipeline, [shape] { return node_cpu_seconds(shape->servers); });
    const auto cycles = static_cast<double>(pipeline.completed() - first);
    const std::vector<double> after = each_cpu(shape->servers);
    double busiest = 0;
    for (std::size_t i = 0; i < before.size(); ++i) {
      busiest = std::max(busiest, after[i] - before[i]);
    }
    if (cycles > 0) state.counters["busiest_cpu_us"] = busiest * 1e6 / cycles;
  };
  warm_up_and_time(state, loop, driver, depth, std::max<std::uint64_t>(kWarmupCycles, 2 * depth),
                   timed);
}

// The quorum of the three cluster members, one attempt per acquire; none
// (the benchmark skipped, saying why) when they cannot be formed.
std::optional<QuorumConfig> cluster_quorum(benchmark::State& state) {
  const Shape* shape = nullptr;
  try {
    shape = &cluster_members();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return std::nullopt;
  }
  ConfigResult parsed = config_from_addresses(shape->addresses);
  if (!parsed.ok()) {
    state.SkipWithError(parsed.error.to_string().c_str());
    return std::nullopt;
  }
  parsed.config->lock.retry_count = 0;
  return *parsed.config;
}

// Fills `probe`'s server with `count` keys in the per-slot layout, one in
// 16 a slot's marker naming another server, the rest lock keys.
bool fill_keys(test::RedisProbe& probe, long long count) {
  static constexpr const char* kFill = R"lua(
for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do
  local tag = '{' .. (i % 4096) .. '}'
  if i % 16 == 0 then
    redis.call('SET', 'redlock:' .. tag .. 'node' .. i, 'redlock-node run_id=0')
  else
    redis.call('SET', 'redlock:' .. tag .. 'lock:r' .. i, 'v')
  end
end
return 0
)lua";
  constexpr long long kChunk = 20000;
  for (long long first = 0; first < count; first += kChunk) {
    const long long last = std::min(count, first + kChunk) - 1;
    const test::Reply filled =
        probe.command({"EVAL", kFill, "0", std::to_string(first), std::to_string(last)});
    if (filled.failed()) return false;
  }
  return true;
}

void BM_CheckSlotMarkersScan(benchmark::State& state) {
  const long long count = state.range(0);
  test::RedisServer server;
  test::RedisProbe probe(server.port(), std::chrono::seconds(30));
  if (!fill_keys(probe, count)) {
    state.SkipWithError("could not fill the server");
    return;
  }
  // The evidence of a promotion: a replica turned master (its master was
  // never reached, so it kept its keys).
  (void)probe.command({"REPLICAOF", "127.0.0.1", "1"});
  (void)probe.command({"REPLICAOF", "NO", "ONE"});
  const test::Reply info = probe.command({"INFO", "replication"});
  if (test::info_field(info.text, "second_repl_offset").value_or("-1") == "-1") {
    state.SkipWithError("the server shows no promotion");
    return;
  }
  const detail::Script& check = detail::script(detail::ScriptId::check_slot_markers);
  const std::string body(check.body);
  const bool recorded = state.range(1) == 1;
  const std::vector<std::string> call{"EVAL", body, "0", "redlock:", "0th"};
  if (recorded) (void)probe.command(call);
  double total_ms = 0;
  for (auto _ : state) {
    // Untimed: the first check's record taken away, so that each call is
    // a promotion's first.
    if (!recorded) (void)probe.command({"DEL", "redlock:{0th}checked"});
    const auto started = std::chrono::steady_clock::now();
    const test::Reply reply = probe.command(call);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    if (reply.failed()) {
      state.SkipWithError(("check_slot_markers: " + reply.text).c_str());
      return;
    }
    state.SetIterationTime(took.count());
    total_ms += took.count() * 1e3;
  }
  state.counters["ms_per_call"] = total_ms / static_cast<double>(state.iterations());
}

// One acquire and release of a resource whose slot just moved to another
// shard on every member, against the same right after (the map settled):
// the first call to each member meets the old master's MOVED, reads the
// map again and follows. moved_us and settled_us per cycle (the moves
// themselves are not timed); redone: iterations made again (below).
void BM_CycleAfterSlotMoved(benchmark::State& state) {
  const std::optional<QuorumConfig> quorum = cluster_quorum(state);
  if (!quorum) return;
  std::vector<std::unique_ptr<test::ShardedMember>>& members = clusters();
  BlockingClient client(*quorum);
  const Resource resource("bench:moved");
  const std::uint16_t slot = detail::hash_slot(resource.str());
  std::string failure;  // the last failed cycle's members' answers
  const auto cycle = [&]() -> std::optional<double> {
    const auto started = std::chrono::steady_clock::now();
    const AcquireResult held = client.acquire(resource);
    if (!held.ok()) {
      failure = "acquire: " + held.error.message();
      for (const NodeOutcome& node : held.nodes) failure += "; " + node.name + " " + node.detail;
      return std::nullopt;
    }
    if (client.release(*held.lock).error) {
      failure = "release";
      return std::nullopt;
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  if (!cycle()) {
    state.SkipWithError("the first cycle failed");
    return;
  }
  // Moves the slot on to the next shard on every member. A move that
  // gossip undid half way (a master claiming the slot back with a newer
  // config epoch) is settled and made again: a cluster is not built for
  // moves many times a second.
  const auto move_everywhere = [&]() -> bool {
    for (auto& member : members) {
      bool moved = false;
      for (int tries = 0; tries < 3 && !moved; ++tries) {
        moved = member->move_slot(slot, (member->shard_of(slot) + 1) % member->shards());
        if (!moved && !member->settle_slot(slot)) break;
      }
      if (!moved) {
        state.SkipWithError(("a slot move was refused: " + member->refusal()).c_str());
        return false;
      }
    }
    return true;
  };
  double moved_total = 0;
  double settled_total = 0;
  int redone = 0;
  for (auto _ : state) {
    std::optional<double> moved;
    std::optional<double> settled;
    // A cycle that failed met masters that still disagreed on the slot
    // (each redirecting to the other up to the redirect limit): the slot
    // is settled and the iteration made again.
    for (int tries = 0; tries < 3 && !(moved && settled); ++tries) {
      if (tries > 0) {
        ++redone;
        for (auto& member : members) (void)member->settle_slot(slot);
      }
      if (!move_everywhere()) return;
      moved = cycle();
      settled = cycle();
    }
    if (!moved || !settled) {
      state.SkipWithError(("a cycle failed three times: " + failure).c_str());
      return;
    }
    state.SetIterationTime(*moved);
    moved_total += *moved;
    settled_total += *settled;
  }
  const auto n = static_cast<double>(state.iterations());
  state.counters["moved_us"] = moved_total * 1e6 / n;
  state.counters["settled_us"] = settled_total * 1e6 / n;
  state.counters["redone"] = redone;
}

// One acquire and release of a set of three resources, one at a time,
// over the cluster members: in one slot (a shared hash tag: one call per
// member), or each in its own shard (one call per slot on every member,
// slot_parts.hpp). What splitting a set per slot costs against naming its
// resources with one tag.
void BM_ClusterSet(benchmark::State& state) {
  const bool across = state.range(0) == 1;
  const std::optional<QuorumConfig> quorum = cluster_quorum(state);
  if (!quorum) return;
  BlockingClient client(*quorum);
  std::vector<Resource> set;
  if (across) {
    std::vector<std::size_t> shards;
    for (int i = 0; set.size() < 3 && i < 1000; ++i) {
      const std::string name = "bench:set:" + std::to_string(i);
      const std::size_t shard = clusters().front()->shard_of(detail::hash_slot(name));
      if (std::find(shards.begin(), shards.end(), shard) != shards.end()) continue;
      shards.push_back(shard);
      set.emplace_back(name);
    }
  } else {
    for (int i = 0; i < 3; ++i) set.emplace_back("{bench:set}:" + std::to_string(i));
  }
  const auto cycle = [&]() -> bool {
    const AcquireResult held = client.acquire(set);
    return held.ok() && !client.release(*held.lock).error;
  };
  // (Each slot's first use, its marker on every member, is behind.)
  if (!cycle()) {
    state.SkipWithError("the first cycle failed");
    return;
  }
  for (auto _ : state) {
    if (!cycle()) {
      state.SkipWithError("a cycle failed");
      return;
    }
  }
}

void BM_SingleServerMembers(benchmark::State& state) { run_cycles(state, single_servers); }
void BM_ClusterMembers(benchmark::State& state) { run_cycles(state, cluster_members); }

BENCHMARK(BM_SingleServerMembers)->Arg(1)->Arg(64)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ClusterMembers)->Arg(1)->Arg(64)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ClusterSet)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CycleAfterSlotMoved)->Iterations(50)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CheckSlotMarkersScan)
    ->ArgsProduct({{10000, 100000, 1000000}, {0, 1}})
    ->Iterations(5)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace redlock::bench

BENCHMARK_MAIN();
