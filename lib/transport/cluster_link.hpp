// The link to a quorum member that is a Redis Cluster (docs/algorithm.md,
// "A cluster as a member"): one NodeLink over a connection to each master
// the cluster's slot map names, each request sent to the master of its
// first key's hash slot. It carries requests and knows no lock: which keys
// a call names, and that they share a slot, is the layer above's; a
// request whose keys span slots is failed here, unsent.
//
// - The map is read with CLUSTER SLOTS from a seed (the next seed when one
//   does not answer) before the first request leaves; requests sent before
//   then wait for it (at most kMaxWaitingForMap; more fail at once), and
//   fail as unreachable when no seed answers. They have no deadline of
//   their own: the map read bounds them, each seed tried once within its
//   connect and request timeouts.
// - A MOVED answer moves the slot in the map, has the map read again, and
//   sends the request to the named master (an empty host in it is the
//   answering server's); an ASK answer sends it there once, after ASKING;
//   TRYAGAIN sends it again after a short pause (close() fails a request
//   that is pausing, as it fails one waiting for the map). Each
//   only while the request's own deadline (from its sent_at) has not
//   passed, and at most kMaxRedirects times: a redirect costs time the
//   caller's validity already counts. Any other answer, CLUSTERDOWN
//   included, is the request's answer.
// - A cleanup goes to the master the map names, as any request does; a
//   redirect of a cleanup is not followed (nothing sees its answer).
// - A plain command about one key or shard channel (a listening mark's
//   SET, SSUBSCRIBE: send_keyed_command) goes to the master of its slot; a
//   MOVED or ASK answer to it has the map read again. Plain commands
//   without keys (SUBSCRIBE) go to the first seed's connection: a cluster
//   carries PUBLISH to every server, so a plain subscription anywhere hears
//   every release.
// - Subscribe mode (a link given a push handler): every master's messages
//   reach the handler; the map is read on sessions of the link's own, since
//   a session in subscribe mode answers no CLUSTER SLOTS; a server that ends
//   a shard subscription itself (its slot moved: sunsubscribe) has the map
//   read again. The ready handler runs whenever a server's session becomes
//   ready and after each new map: the caller subscribes again there.
// - The map is read again, at most once per kSilentMasterMapInterval (a
//   read asked for sooner waits for it), on a MOVED, an unreachable
//   master, a redirect of a keyed command or a subscription the server
//   ended.
//
// Callback and lifetime contract: as NodeLink's. The caller's sink gets
// exactly one non-late response per request, never from inside send().
// Responses carry this link's index.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/slot_map.hpp"
#include "transport/node_connection.hpp"
#include "transport/node_link.hpp"
#include "transport/timer_queue.hpp"

namespace redlock::detail {

// One server of the cluster member `member`, as the member itself: its
// name (outcomes and metrics speak of the member), credentials, TLS and
// timeouts, at `host`:`port` (or the Unix socket `unix_path`), database 0.
[[nodiscard]] NodeConfig member_server(const NodeConfig& member, std::string_view host,
                                       std::uint16_t port, std::string_view unix_path);

class ClusterLink final : public NodeLink {
 public:
  static constexpr std::size_t kMaxWaitingForMap = 4096;
  static constexpr int kMaxRedirects = 5;

  // `member.cluster` lists the seeds (at least one).
  ClusterLink(LoopContext& loop, NodeMetrics& stats, std::size_t index, const NodeConfig& member,
              const LockConfig& lock, SessionSetup setup);
  ClusterLink(const ClusterLink&) = delete;
  ClusterLink& operator=(const ClusterLink&) = delete;
  ~ClusterLink() override;

  void start() override;
  void send(Request request) override;
  void send_command(std::initializer_list<std::string_view> argv) override;
  // To the master of `key`'s slot, once the map is known and that master's
  // session is ready (dropped before: as send_command before a session is
  // ready, its caller's ready handler sends it again).
  void send_keyed_command(std::string_view key,
                          std::initializer_list<std::string_view> argv) override;
  void set_push_handler(
      std::function<void(std::string_view channel, std::string_view payload)> handler) override;
  void set_ready_handler(std::function<void()> handler) override;
  void close() override;

  [[nodiscard]] std::size_t index() const noexcept override { return index_; }
  [[nodiscard]] const NodeConfig& config() const noexcept override { return member_; }
  // Requests pausing after TRYAGAIN before they are sent again (for
  // diagnosis and tests).
  [[nodiscard]] std::size_t pausing() const noexcept { return pausing_.size(); }
  // The map is known and the connection to each of its masters is ready.
  [[nodiscard]] bool ready() const noexcept override;
  [[nodiscard]] int min_replicas() const noexcept override { return member_.min_replicas; }
  // Changes when any connection of the member is reset or the map is read
  // again.
  [[nodiscard]] std::uint64_t session() const noexcept override;
  [[nodiscard]] bool refused_transaction() const noexcept override;
  // The masters' persistence when they all say the same, else unknown.
  [[nodiscard]] Persistence persistence() const noexcept override;
  // The first seed's connection's.
  [[nodiscard]] NodeHealth health() const override;
  // Every master's run_id (of the connections made) and cluster node id
  // (of the map).
  [[nodiscard]] MemberServers servers() const override;
  void set_servers_handler(std::function<void()> handler) override {
    servers_handler_ = std::move(handler);
  }
  void refuse_votes(std::string why) override { refused_ = std::move(why); }

  // The map as last read (nullptr before the first); for tests and
  // diagnosis.
  [[nodiscard]] const SlotMap* slot_map() const noexcept { return map_ ? &*map_ : nullptr; }
  // How many times the map has been read.
  [[nodiscard]] std::uint64_t maps_read() const noexcept { return maps_read_; }

 private:
  struct Routed;
  class OwnAnswers;

  using Servers = std::vector<std::pair<std::string, std::unique_ptr<NodeConnection>>>;
  // The connection of `list` to the server; one made with `setup` (and
  // started once the link is) when it had none, which `made` says.
  NodeConnection& connection_in(Servers& list, const std::string& host, std::uint16_t port,
                                const std::string& unix_path, const SessionSetup& setup,
                                bool& made);
  NodeConnection& connection_to(const std::string& host, std::uint16_t port,
                                const std::string& unix_path);
  NodeConnection& seed_connection();
  // Where the map is read from `seed`: its connection, or for a subscriber
  // link (one with a push handler) a connection of its own.
  NodeConnection& map_connection(const ClusterSeed& seed);
  // Sets the connection's handlers to this link's.
  void hand_over_events(NodeConnection& connection);
  // The map read again now, or once kSilentMasterMapInterval has passed
  // since the last such read.
  void read_map_soon();
  // The connection to `master`, if one was made.
  [[nodiscard]] const NodeConnection* connection_of(const ShardEndpoint& master) const noexcept;
  void read_map();
  void on_map(const NodeResponse& response);
  // A keyed command's answer: a redirect has the map read again.
  void on_keyed_answer(const NodeResponse& response);
  // Opens a new session to `server` if one is open and it serves no slot
  // in the map (its first word may predate its promotion).
  void renew_if_newly_master(const ShardEndpoint& server);
  // Counts, in the member's metrics, each master `next` names for slots
  // another master held in the map read before it.
  void count_takeovers(const SlotMap& next);
  void route(const std::shared_ptr<Routed>& routed);
  void on_answer(const std::shared_ptr<Routed>& routed, const NodeResponse& response);
  // Fails `routed` as unreachable with `why`, from a posted task.
  void fail(const std::shared_ptr<Routed>& routed, std::string why);
  // The same, at once (close(): not from inside send()).
  void fail_now(const std::shared_ptr<Routed>& routed, std::string_view why);

  LoopContext& loop_;
  NodeMetrics& stats_;
  std::size_t index_;
  NodeConfig member_;
  LockConfig lock_;
  SessionSetup setup_;
  // Every server connected to, by "host port" (or "unix path").
  Servers servers_;
  // A subscriber link's map sessions, by seed.
  Servers map_servers_;
  TimerQueue::Id map_timer_ = TimerQueue::kNone;
  std::optional<SlotMap> map_;
  std::uint64_t maps_read_ = 0;
  // When a master's silence last had the map read again.
  TimePoint last_prompted_map_read_ = TimePoint::min();
  std::function<void()> servers_handler_;
  // Why this member's votes are refused (refuse_votes); empty: they count.
  std::string refused_;
  bool reading_map_ = false;
  bool map_wanted_ = false;
  std::size_t next_seed_ = 0;
  std::size_t seeds_tried_ = 0;
  std::string last_seed_problem_;
  std::shared_ptr<OwnAnswers> map_reader_;
  std::shared_ptr<OwnAnswers> keyed_answers_;
  std::vector<std::shared_ptr<Routed>> waiting_;
  // Requests pausing after TRYAGAIN, with their timers.
  std::vector<std::pair<TimerQueue::Id, std::shared_ptr<Routed>>> pausing_;
  std::function<void(std::string_view, std::string_view)> push_handler_;
  std::function<void()> ready_handler_;
  bool started_ = false;
  bool closed_ = false;
};

}  // namespace redlock::detail
