// Helpers shared by the integration tests: a quorum configuration for a
// fixture cluster, and a loop that runs an AsyncClient to completion.
#pragma once

#include <gtest/gtest.h>
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "redis_fixture.hpp"
#include "redlock/redlock.hpp"
#include "scripts/script_calls.hpp"
#include "scripts/scripts.hpp"

namespace redlock::test {

// The EVAL a node would run for `call`: a batched script's shared keys go
// first, then the request's own key (scripts.hpp).
inline std::vector<std::string> eval_words(const detail::ScriptCall& call) {
  std::vector<std::string> keys = call.keys;
  if (call.script->batched && !keys.empty()) {
    std::rotate(keys.begin(), keys.begin() + 1, keys.end());
  }
  std::vector<std::string> words{"EVAL", std::string(call.script->body),
                                 std::to_string(keys.size())};
  words.insert(words.end(), keys.begin(), keys.end());
  words.insert(words.end(), call.args.begin(), call.args.end());
  return words;
}

// How many times `command` ran on the server (INFO commandstats'
// cmdstat_<command>:calls), scripts' calls included.
inline long long calls_of(RedisProbe& server, std::string_view command) {
  const std::string stats = server.command({"INFO", "commandstats"}).text;
  const std::string field = "cmdstat_" + std::string(command) + ":calls=";
  const std::size_t at = stats.find(field);
  return at == std::string::npos ? 0 : std::stoll(stats.substr(at + field.size()));
}

inline NodeConfig node_at(std::uint16_t port) {
  NodeConfig node;
  node.host = "127.0.0.1";
  node.port = port;
  node.name = "127.0.0.1:" + std::to_string(port);
  return node;
}

inline QuorumConfig config_for(const RedisCluster& cluster,
                               std::chrono::milliseconds ttl = std::chrono::seconds(10)) {
  QuorumConfig config;
  for (std::size_t i = 0; i < cluster.size(); ++i)
    config.nodes.push_back(node_at(cluster.node(i).port()));
  config.lock.ttl = ttl;
  config.lock.node_timeout = std::chrono::milliseconds(200);
  config.lock.retry_count = 0;
  // Tests read the nodes right after a release: it waits for every node
  // (the default reports at a majority; tests that need it say so).
  config.lock.release_at_majority = false;
  config.source = "test";
  return config;
}

inline std::string key_of(const std::string& resource) { return "redlock:lock:" + resource; }

// Runs one AsyncClient on a private loop. Tests start operations from
// `run`'s body and call done() when finished; results are recorded in
// variables and asserted after run() returns (an ASSERT inside a callback
// would only leave the lambda). A watchdog bounds every run, and teardown
// proves that no handle leaked: uv_loop_close() must succeed.
class LoopRun {
 public:
  explicit LoopRun(QuorumConfig config, ClientOptions options = {}) {
    uv_loop_init(&loop_);
    client_.emplace(&loop_, std::move(config), options);
    uv_timer_init(&loop_, &watchdog_);
    watchdog_.data = this;
  }
  LoopRun(const LoopRun&) = delete;
  LoopRun& operator=(const LoopRun&) = delete;
  ~LoopRun() {
    if (client_) done();
    uv_run(&loop_, UV_RUN_DEFAULT);
    client_.reset();
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "a libuv handle leaked";
  }

  AsyncClient& client() { return *client_; }
  uv_loop_t* loop() { return &loop_; }

  // Runs `body` on the loop, then the loop until done() or the watchdog.
  // Returns false when the watchdog had to stop it.
  bool run(const std::function<void()>& body,
           std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    uv_timer_start(
        &watchdog_,
        [](uv_timer_t* timer) {
          auto* self = static_cast<LoopRun*>(timer->data);
          self->timed_out_ = true;
          self->done();
        },
        static_cast<std::uint64_t>(limit.count()), 0);
    body();
    uv_run(&loop_, UV_RUN_DEFAULT);
    return !timed_out_;
  }

  // Closes the client and the watchdog; run() then returns.
  void done() {
    if (closed_) return;
    closed_ = true;
    uv_timer_stop(&watchdog_);
    uv_close(reinterpret_cast<uv_handle_t*>(&watchdog_), nullptr);
    client_->close();
  }

  // Runs `fn` on the loop once `condition` holds, checking every `every`.
  // Checking stops once the run is done (done() or the watchdog), so a
  // condition that never holds cannot keep the loop alive.
  void when(std::function<bool()> condition, std::function<void()> fn,
            std::chrono::milliseconds every = std::chrono::milliseconds(2)) {
    if (closed_) return;
    if (condition()) return fn();
    after(every, [this, condition = std::move(condition), fn = std::move(fn), every]() mutable {
      when(std::move(condition), std::move(fn), every);
    });
  }

  // Runs `fn` after `delay` on the loop (a one-shot timer the harness owns).
  void after(std::chrono::milliseconds delay, std::function<void()> fn) {
    auto* timer = new Timer{{}, std::move(fn)};
    uv_timer_init(&loop_, &timer->handle);
    timer->handle.data = timer;
    uv_timer_start(
        &timer->handle,
        [](uv_timer_t* handle) {
          auto* self = static_cast<Timer*>(handle->data);
          self->fn();
          uv_close(reinterpret_cast<uv_handle_t*>(handle),
                   [](uv_handle_t* h) { delete static_cast<Timer*>(h->data); });
        },
        static_cast<std::uint64_t>(delay.count()), 0);
  }

 private:
  struct Timer {
    uv_timer_t handle;
    std::function<void()> fn;
  };
  uv_loop_t loop_{};
  uv_timer_t watchdog_{};
  std::optional<AsyncClient> client_;
  bool timed_out_ = false;
  bool closed_ = false;
};

// What an election's observer reported, in order, read from any thread.
class ObservedLeaders {
 public:
  void add(const LeaderResult& result) {
    std::lock_guard<std::mutex> lock(mutex_);
    seen_.push_back(result);
  }
  [[nodiscard]] std::size_t count() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_.size();
  }
  [[nodiscard]] std::vector<LeaderResult> all() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<LeaderResult> seen_;
};

// Observes `election` on `run` into `observed` until `acted` is set (by the
// test's actor thread), then cancels the observer and runs until its
// reports number `reports` (the last, the cancellation). False when the
// watchdog (`limit`) stopped the run first.
inline bool observe_until_acted(LoopRun& run, const Election& election,
                                const ObserveOptions& options, ObservedLeaders& observed,
                                const std::atomic<bool>& acted, std::size_t reports,
                                std::chrono::milliseconds limit) {
  OperationHandle handle;
  return run.run(
      [&] {
        handle = run.client().observe(
            election, options, [&observed](const LeaderResult& result) { observed.add(result); });
        run.when([&] { return acted.load(); },
                 [&] {
                   handle.cancel();
                   run.when([&] { return observed.count() == reports; }, [&] { run.done(); });
                 });
      },
      limit);
}

// Whether every node's connection of `client` has its session set up.
inline bool all_connected(const AsyncClient& client) {
  for (const NodeHealth& health : client.node_health()) {
    if (!health.connected) return false;
  }
  return true;
}

// Runs `fn` on the loop once every node's connection is set up (checked
// every 2 ms; the run's watchdog bounds the wait). For tests about what
// requests made in one loop turn do once they leave: requests made earlier
// wait for their connection's handshake.
inline void when_connected(LoopRun& run, std::function<void()> fn) {
  run.when([&run] { return all_connected(run.client()); }, std::move(fn));
}

// Marks the nodes `indices` of `cluster` (every node when empty) with the
// amnesia defence's identity marker, as a quorum in use has them: a
// brand-new quorum is initialised without the recovery delay only when
// every configured node answers (docs/algorithm.md, "The amnesia defence"),
// so a test that starts with nodes down, or with a node that never answers,
// initialises the others first.
inline void initialise_quorum(const RedisCluster& cluster, std::vector<std::size_t> indices = {}) {
  if (indices.empty()) {
    for (std::size_t i = 0; i < cluster.size(); ++i) indices.push_back(i);
  }
  QuorumConfig config = config_for(cluster);
  config.nodes.clear();
  for (std::size_t i : indices) config.nodes.push_back(node_at(cluster.node(i).port()));
  BlockingClient client(config);
  const AcquireResult taken = client.acquire(Resource("initialise-quorum"));
  ASSERT_TRUE(taken.ok()) << taken.error.message();
  (void)client.release(*taken.lock);
}

// Acquire, then stop the loop: the common one-shot case.
inline AcquireResult acquire_once(LoopRun& run, const Resource& resource,
                                  const AcquireOptions& options = {}) {
  AcquireResult result;
  run.run([&] {
    run.client().acquire(resource, options, [&](AcquireResult r) {
      result = std::move(r);
      run.done();
    });
  });
  return result;
}

// Waits until `condition` holds, polling every 5 ms, for at most `limit`;
// returns whether it held. The bound keeps a broken build from hanging.
template <typename Condition>
bool eventually(Condition condition,
                std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// How many subscribers `channel` has on `node` (-1 when it did not say).
inline long long subscribers(RedisServer& node, const std::string& channel) {
  const Reply reply = node.probe().command({"PUBSUB", "NUMSUB", channel});
  if (reply.kind != Reply::Kind::array || reply.elements.size() != 2) return -1;
  return reply.elements[1].integer;
}

// How many clients subscribe the shard channel `channel` on `node`
// (SSUBSCRIBE).
inline long long shard_subscribers(RedisServer& node, const std::string& channel) {
  const Reply reply = node.probe().command({"PUBSUB", "SHARDNUMSUB", channel});
  if (reply.kind != Reply::Kind::array || reply.elements.size() != 2) return -1;
  return reply.elements[1].integer;
}

// Waits (bounded) until every node reports `expected` subscribers.
inline bool subscribers_become(RedisCluster& cluster, const std::string& channel,
                               long long expected) {
  return eventually([&] {
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (subscribers(cluster.node(i), channel) != expected) return false;
    }
    return true;
  });
}

// An acquire of `target` (a resource or a semaphore) on a thread of its
// own that tries again only when a release wakes it: its retry delay is a
// minute, its wait 10 s. The future's destructor waits for it, so a test
// that stops early still joins the thread.
template <typename Target>
std::future<AcquireResult> acquire_when_woken(BlockingClient& client, Target target) {
  return std::async(std::launch::async, [&client, target = std::move(target)] {
    AcquireOptions options;
    options.fair = false;  // a mutex waiter waits in the nodes' lines, not the fair queue
    options.retry_delay = std::chrono::milliseconds(60000);  // the fallback: ~a minute
    options.wait = std::chrono::milliseconds(10000);
    return client.acquire(target, options);
  });
}

// Waits (bounded) until the resource's waiting line holds `count` mutex
// waiters on a majority of the nodes (on every node for 0). Not every node:
// a fresh node that answered the first probe late waits out a recovery
// delay, and until then answers "recovering", which takes no place in line.
// `every_node` asks it of every node.
inline bool line_becomes(RedisCluster& cluster, const std::string& resource, long long count,
                         bool every_node = false) {
  const std::string key = "redlock:waiting:" + resource;
  const std::size_t needed = count == 0 || every_node ? cluster.size() : cluster.size() / 2 + 1;
  return eventually([&] {
    std::size_t agreeing = 0;
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (cluster.node(i).probe().command({"ZCARD", key}).integer == count) ++agreeing;
    }
    return agreeing >= needed;
  });
}

// Waits (bounded) until the resource's waiting line is empty on a majority
// of the nodes. Not every node: a releaser's rejoined place (and the places
// behind it) stays in the line of a node that never granted the last
// holder, whose release therefore named no one there, until a later
// release there names it or the line lapses (docs/algorithm.md, "Waiting
// in line").
inline bool line_empties_on_a_majority(RedisCluster& cluster, const std::string& resource) {
  const std::string key = "redlock:waiting:" + resource;
  return eventually([&] {
    std::size_t empty = 0;
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (cluster.node(i).probe().command({"ZCARD", key}).integer == 0) ++empty;
    }
    return empty >= cluster.size() / 2 + 1;
  });
}

// Waits (bounded by a recovery delay of `ttl`) until every node of a fresh
// quorum carries its identity marker and none waits out a recovery delay:
// for tests that need every node to vote.
inline bool quorum_settles(RedisCluster& cluster, std::chrono::milliseconds ttl) {
  return eventually(
      [&] {
        for (std::size_t i = 0; i < cluster.size(); ++i) {
          RedisProbe probe = cluster.node(i).probe();
          if (!probe.exists("redlock:node") || probe.exists("redlock:recovering")) return false;
        }
        return true;
      },
      ttl + std::chrono::seconds(5));
}

// Whether every node has this many clients listening on wake channels (a
// client's, on which releases name its waiters in line; bounded wait).
inline bool wake_listeners_become(RedisCluster& cluster, long long count) {
  return eventually([&] {
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      const Reply reply =
          cluster.node(i).probe().command({"PUBSUB", "CHANNELS", "redlock:released:@*"});
      if (reply.kind != Reply::Kind::array ||
          static_cast<long long>(reply.elements.size()) != count) {
        return false;
      }
    }
    return true;
  });
}

// Counts nodes whose lock key exists.
inline std::size_t nodes_holding(RedisCluster& cluster, const std::string& resource) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    if (!cluster.node(i).running() || cluster.node(i).paused()) continue;
    if (cluster.node(i).probe().exists(key_of(resource))) ++count;
  }
  return count;
}

// How many times `node` has run each of `commands` so far, summed (lower
// case, as INFO commandstats names them).
inline long long command_calls(RedisServer& node,
                               std::initializer_list<std::string_view> commands) {
  const Reply reply = node.probe().command({"INFO", "commandstats"});
  long long calls = 0;
  for (const std::string_view command : commands) {
    const std::string field = "cmdstat_" + std::string(command) + ":calls=";
    const std::size_t at = reply.text.find(field);
    if (at != std::string::npos) calls += std::stoll(reply.text.substr(at + field.size()));
  }
  return calls;
}

// The Lua calls `node` has run so far (EVAL and EVALSHA).
inline long long script_calls(RedisServer& node) {
  return command_calls(node, {"eval", "evalsha"});
}

// The node's clock in milliseconds (TIME), as its scripts read it; -1 when
// it did not say.
inline long long node_clock_ms(RedisProbe& probe) {
  const Reply now = probe.command({"TIME"});
  if (now.elements.size() != 2) return -1;
  return std::stoll(now.elements[0].text) * 1000 + std::stoll(now.elements[1].text) / 1000;
}

// script_calls of every node, in node order.
inline std::vector<long long> script_calls(RedisCluster& cluster) {
  std::vector<long long> calls;
  for (std::size_t i = 0; i < cluster.size(); ++i) calls.push_back(script_calls(cluster.node(i)));
  return calls;
}

// Waits (bounded) until every node has run at least `wanted[i]` Lua calls:
// the requests a test waits for have reached every node, and what they
// answer is settled.
inline bool script_calls_reach(RedisCluster& cluster, const std::vector<long long>& wanted) {
  return eventually([&] {
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (script_calls(cluster.node(i)) < wanted[i]) return false;
    }
    return true;
  });
}

// The release script's request for `value` on `resource`'s key, publishing
// on `channel` and naming from `waiting` ('' for none), as a client sends it.
inline std::vector<std::string> release_request(const std::string& resource,
                                                const std::string& value,
                                                const std::string& channel,
                                                const std::string& waiting) {
  return {"EVAL",
          std::string(detail::script(detail::ScriptId::release).body),
          "3",
          "redlock:node",
          "redlock:recovering",
          key_of(resource),
          value,
          channel,
          waiting,
          ""};
}

// Runs `release` on `node` and gives `resource`'s key to someone else in the
// same transaction: the release is published, but the lock is not free
// there. Returns whether the transaction ran.
inline bool release_and_hand_to_someone_else(RedisServer& node, const std::string& resource,
                                             const std::vector<std::string>& release) {
  RedisProbe probe = node.probe();
  if (probe.command({"MULTI"}).kind != Reply::Kind::status) return false;
  (void)probe.command(release);
  (void)probe.command({"SET", key_of(resource), "someone-else", "PX", "60000"});
  return probe.command({"EXEC"}).kind == Reply::Kind::array;
}

// A lock on `resource`, taken by `client` once the quorum has settled
// (quorum_settles) and held on every node: for tests that need every node
// to line the waiters up. Empty when it could not be had.
inline std::optional<Lock> hold_on_every_node(RedisCluster& cluster, BlockingClient& client,
                                              const std::string& resource) {
  AcquireResult held = client.acquire(Resource(resource));
  if (!held.ok() || !quorum_settles(cluster, std::chrono::seconds(10))) return std::nullopt;
  if (nodes_holding(cluster, resource) < cluster.size()) {
    // Taken while a node still waited out its recovery delay.
    (void)client.release(*held.lock);
    held = client.acquire(Resource(resource));
    if (!held.ok()) return std::nullopt;
  }
  if (nodes_holding(cluster, resource) < cluster.size()) return std::nullopt;
  return held.lock;
}

}  // namespace redlock::test
