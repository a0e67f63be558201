// Chaos scenarios are data: a TOML file names the nodes, the clients and
// their workload, a timed nemesis schedule, and what each variant (fenced,
// unfenced) expects of every invariant. docs/chaos.md has the format; a
// new scenario made of the primitives below needs no new code.
//
// Parsing never throws: errors come back as "file:line:col: message".
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checker.hpp"
#include "fault_proxy.hpp"
#include "redlock/types.hpp"
#include "report.hpp"

namespace redlock::chaos {

enum class NodePersistence { none, everysec, always };

[[nodiscard]] std::string_view to_string(NodePersistence persistence) noexcept;

struct NodesSpec {
  int count = 5;
  NodePersistence persistence = NodePersistence::none;
  // The clients reach the nodes over TLS (certificates made with the
  // openssl command when the run starts); `redlock-chaos --tls` sets it for
  // every scenario.
  bool tls = false;
  // The members that are Redis Clusters (docs/chaos.md, "Cluster
  // members"), by node index: each is `shards` masters with `replicas`
  // replicas apiece, started by the harness and formed into one cluster.
  // The clients reach a cluster's servers directly (its slot map announces
  // their own ports), so no link fault acts on them.
  std::vector<int> clusters{};
  int shards = 3;
  int replicas = 1;
  // The clusters' cluster-node-timeout: how long a master may be
  // unreachable before a replica is promoted without it.
  Milliseconds cluster_node_timeout{1000};

  [[nodiscard]] bool is_cluster(int node) const {
    return std::find(clusters.begin(), clusters.end(), node) != clusters.end();
  }
};

// What the clients lock (docs/chaos.md, "Lock kinds"): one mutex, one
// permit of a semaphore, a lock over several resources at once, or the
// leadership of an election (a fenced lock whose token is the term).
enum class LockKind { mutex, semaphore, multi, election };

[[nodiscard]] std::string_view to_string(LockKind kind) noexcept;

// The name of the run's mutex and of its semaphore.
inline constexpr std::string_view kLockName = "chaos";

struct LockSpec {
  LockKind kind = LockKind::mutex;
  // semaphore: its count, 1..1024 (required).
  std::uint32_t permits = 0;
  // multi: the resources every client locks at once, unless its override
  // names its own set (required; a set of one name is a plain lock).
  std::vector<std::string> resources;
  Milliseconds ttl{1000};
  Milliseconds retry_delay{20};
  // How long one acquire may wait (retries included) before the worker
  // records a failure and tries again. Zero: the TTL.
  Milliseconds wait{0};
  Milliseconds node_timeout{0};  // zero: the library's automatic value
  double drift_factor = 0.01;
  bool amnesia_defence = true;
  // The library's release_at_majority: a release reports at a majority.
  bool release_at_majority = false;
  Milliseconds max_ttl{0};
  // Holders renew at ttl/3 while in the critical section.
  bool renew = false;
  int max_renewals = 0;  // 0: unlimited
  // Reentrant holds (docs/chaos.md): every client holds the mutex through a
  // reentrant guard (BlockingClient::lock), which renews by itself, and
  // takes a nested hold of it inside its critical section. Mutex only.
  bool reentrant = false;
  // Every client waits in line (AcquireOptions::fair). Mutex only.
  bool fair = false;
};

struct ClientSpec {
  // Work inside the lock: read, `critical_section` of "work", write.
  Milliseconds critical_section{10};
  // Pause between a release and the next acquire.
  Milliseconds think{0};
  // The client's clock runs at this rate (1 = true time); its lock
  // arithmetic reads that clock. Emulates a fast or slow client clock.
  double clock_rate = 1.0;
  // The client starts this long after the common barrier.
  Milliseconds start_delay{0};
  // multi: this client's resource set (empty: the lock's).
  std::vector<std::string> resources;
  // mutex: the client takes the read side of the mutex's read-write lock
  // (docs/chaos.md, "Lock kinds"): it reads the protected resource and
  // writes nothing; the others are its writers.
  bool shared = false;
};

struct ClientsSpec {
  int count = 2;
  ClientSpec defaults;
  // Per-client overrides, by index.
  std::map<int, ClientSpec> overrides;
  [[nodiscard]] const ClientSpec& spec(int index) const {
    auto found = overrides.find(index);
    return found == overrides.end() ? defaults : found->second;
  }
};

enum class NemesisAction {
  kill,        // node: kill -9 (restarted when duration_ms is given)
  power_loss,  // node: kill -9 and drop the AOF bytes written since the last
               // fsync point (restarted when duration_ms is given)
  restart,     // node: start again (after kill / power_loss)
  pause,       // node or client: SIGSTOP (SIGCONT after duration_ms); a
               // client may pause at a point of its work (see `point`)
  resume,      // node or client: SIGCONT
  link,        // proxy link(s): mode, direction, delay_ms
  clock_jump,  // node: jump its clock by delta_ms (emulated on lock keys)
  clock_rate,  // node: run its clock at `rate` (emulated on lock keys)
  heal,        // everything back to normal
  failover,    // cluster node: the lock's shard's replica promoted; with
               // lag, one that stopped replicating at `at` and takes over
               // from its killed master once the step's condition holds
  migrate,     // cluster node: the lock's slot moved to the next shard
};

[[nodiscard]] std::string_view to_string(NemesisAction action) noexcept;

// Where a client pauses itself when a pause targets it.
enum class PausePoint {
  now,             // at once (SIGSTOP from the nemesis)
  in_flight,       // an acquire's requests are written, replies not read
  after_acquire,   // just after an acquire succeeded
  before_write,    // in the critical section, after the validity check,
                   // right before the resource write (Kleppmann's GC pause)
  before_release,  // after the critical section, right before the release
  after_release,   // right after a release completed, before anything else
                   // (a fair release's pre-claim not yet adopted or withdrawn)
  after_nest,      // reentrant: just after a nested hold began, before the
                   // work and the validity check under it
};

[[nodiscard]] std::string_view to_string(PausePoint point) noexcept;

struct NemesisStep {
  Milliseconds at{0};  // from the barrier
  NemesisAction action = NemesisAction::heal;
  // "n2" (node), "c0" (client), or a link "c0->n3" where either side may
  // be "*" (every client / every node). Empty for heal.
  std::string target;
  // The fault ends by itself after this long (restart, SIGCONT, link back
  // to pass, clock rate back to 1).
  std::optional<Milliseconds> duration;
  // link
  LinkMode mode = LinkMode::pass;
  Direction direction = Direction::both;
  Milliseconds delay{0};
  // clock_jump / clock_rate
  Milliseconds delta{0};
  double rate = 1.0;
  // failover: the promoted replica missed the writes since `at`.
  bool lag = false;
  // pause of a client
  PausePoint point = PausePoint::now;
  // Wait (from `at`) until this client holds the lock before acting; -1: no
  // wait. Gives up after `when_timeout` and records that it did.
  int when_holding = -1;
  Milliseconds when_timeout{5000};
  // With when_holding: act this long after the client started holding
  // (while it still holds), e.g. in the middle of its critical section.
  Milliseconds after_holding{0};
  // A link step with a duration: once the fault ends, every client it cuts
  // off must complete an acquire within this long (checked as part of C11).
  std::optional<Milliseconds> progress_within;
  std::uint32_t line = 0;  // where the step is written, for messages
};

enum class Variant { unfenced, fenced };

[[nodiscard]] std::string_view to_string(Variant variant) noexcept;
// "up", "down", "both": as scenario files write it.
[[nodiscard]] std::string_view to_string(Direction direction) noexcept;

using Expectations = std::array<Expectation, kInvariantCount>;

struct Scenario {
  std::string name;
  std::string description;
  std::filesystem::path file;
  Milliseconds duration{3000};  // the workload's length, from the barrier
  NodesSpec nodes;
  LockSpec lock;
  ClientsSpec clients;
  std::vector<NemesisStep> nemesis;  // ordered by `at`
  // The variants to run and what each expects; every invariant not named
  // in a variant's table must hold.
  std::vector<Variant> variants;
  std::map<Variant, Expectations> expectations;

  // The names client `index` locks: the mutex's or the semaphore's name,
  // or its resource set (multi).
  [[nodiscard]] std::vector<std::string> resources_of(int index) const;
  // Every resource any client locks, each once, in the order first named.
  [[nodiscard]] std::vector<std::string> all_resources() const;
};

// The protected resource's storage for one thing a lock protects: a
// counter and a log. The mutex has one (chaos:counter, chaos:log); a
// semaphore one per permit (chaos:counter:permit<j>); a lock over several
// resources one per resource (chaos:counter:<name>).
struct ResourceKeys {
  std::string counter;
  std::string log;
  friend bool operator==(const ResourceKeys&, const ResourceKeys&) = default;
};
[[nodiscard]] ResourceKeys mutex_resource_keys();
[[nodiscard]] ResourceKeys permit_resource_keys(std::uint32_t permit);
[[nodiscard]] ResourceKeys named_resource_keys(std::string_view resource);
// Every storage the scenario's clients may use, for the final snapshot.
[[nodiscard]] std::vector<ResourceKeys> resource_keys(const Scenario& scenario);

struct ScenarioParseResult {
  std::optional<Scenario> scenario;
  std::string error;  // "file:line:col: message" when !scenario
};

[[nodiscard]] ScenarioParseResult parse_scenario(std::string_view toml_text,
                                                 std::string_view source_name);
[[nodiscard]] ScenarioParseResult load_scenario(const std::filesystem::path& file);

// The scenario files of a catalog directory (*.toml), sorted by name.
[[nodiscard]] std::vector<std::filesystem::path> catalog_files(const std::filesystem::path& dir);

// A link target "c0->n3", "c*->n3", "c0->n*", or "c0->r" (the client's
// link to the protected resource): the clients and nodes it names, given
// the counts; nullopt when malformed or out of range.
struct LinkSelection {
  std::vector<int> clients;
  std::vector<int> nodes;
  bool resource = false;
};
[[nodiscard]] std::optional<LinkSelection> parse_link_target(std::string_view target,
                                                             int client_count, int node_count);

// "n2" -> 2 (node_count bounds it), "c1" -> 1; nullopt otherwise.
[[nodiscard]] std::optional<int> parse_node_target(std::string_view target, int node_count);
[[nodiscard]] std::optional<int> parse_client_target(std::string_view target, int client_count);

// How a variant's run went against its expectations.
struct Verdicts {
  bool regression_ok = true;            // no unexpected violation
  bool demonstration_ok = true;         // every expected violation appeared
  std::vector<std::string> unexpected;  // "C3" ...
  std::vector<std::string> missing;     // expected violations that did not appear
};
[[nodiscard]] Verdicts judge(const CheckResult& result, const Expectations& expectations);

}  // namespace redlock::chaos
