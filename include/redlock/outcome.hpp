// Results of lock operations, as values: an error code plus what each node
// answered and how fast.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "redlock/error.hpp"
#include "redlock/export.hpp"
#include "redlock/types.hpp"

namespace redlock {

// What one node said to one request.
enum class NodeStatus {
  granted,         // acquire: SET NX succeeded (and enough replicas acked)
  busy,            // acquire: another value holds the key
  extended,        // extend: our value was there; its TTL was reset
  released,        // release: our value was there and was deleted
  not_held,        // extend / release: the key is gone or holds another value
  replicas_short,  // acquire: granted, but WAIT saw fewer replicas than required
  recovering,      // acquire: the node lost its data (no identity marker) or is
               // within its post-recovery delay; it grants nothing (docs/algorithm.md, "The amnesia
               // defence")
  timeout,         // no answer within the node timeout
  unreachable,     // not connected, or the connection failed meanwhile
  error,           // an error reply (see NodeOutcome::detail)
  permits_differ,  // acquire of a semaphore permit: the node records another
                   // permit count for the semaphore (holder_ttl_ms: that count)
  pending,         // asked, but no answer yet when the outcome was decided
  not_asked,       // the operation was refused before any node was asked
};

[[nodiscard]] REDLOCK_API std::string_view to_string(NodeStatus status) noexcept;

struct NodeOutcome {
  // Which node: `node` is its index in QuorumConfig::nodes (an index, not a
  // name: config.nodes[outcome.node] is its configuration), `name` its
  // NodeConfig::name — what errors, metrics and the CLI's JSON ("node")
  // show. Results list one outcome per node, in configuration order.
  std::size_t node = 0;
  std::string name;
  NodeStatus status = NodeStatus::not_asked;
  // From sending the request to its reply (zero when there was none).
  Microseconds latency{0};
  // acquire + busy: the holder's remaining PTTL on this node, or -1
  // (permits_differ: the count the node records).
  std::int64_t holder_ttl_ms = -1;
  // acquire of a semaphore permit + granted: the permit the node granted.
  std::int64_t permit = -1;
  // fenced acquire + granted: the node's fence counter for the resource
  // (an unfenced acquire does not read it: 0).
  std::int64_t fence_counter = 0;
  // Error text: the node's error reply, or why it was unreachable. What the
  // node sent is escaped (control characters, ESC, bytes that are not UTF-8
  // as \n, \xNN), so the text is one line and safe to print.
  std::string detail;
};

// What kind of lock a Lock record is (docs/api.md, "Lock kinds"): it says
// which of the record's fields mean something and how the lock is extended
// and released. A record whose fields do not fit its kind (a mutex with a
// permit, a fair lock without its queue id) is refused by extend and
// release, never taken for another kind.
enum class LockKind : std::uint8_t {
  mutex,   // one resource, exclusive (the default)
  multi,   // several resources at once: `resources`
  permit,  // a semaphore's permit: `permit` of `permits`
  shared,  // the read side of a read-write lock
  fair,    // a fair lock, won in line: `queue_id`
};

[[nodiscard]] REDLOCK_API std::string_view to_string(LockKind kind) noexcept;

// One holding of a lock. Copyable: it is only a record; the guard type of
// the library owns renewal and release.
struct Lock {
  Resource resource;
  LockValue value;
  Milliseconds ttl{0};
  // When the attempt that won started (t0), and the local validity deadline
  // t0 + validity. Past the deadline the lock must be treated as lost.
  TimePoint started{};
  TimePoint valid_until{};
  // The fencing token, when the lock was taken fenced (for a lock over
  // several resources, the first resource's).
  std::optional<std::uint64_t> fence;
  // A lock over several resources at once (all or nothing): every resource
  // in the order asked (resources[0] is `resource`) and, when fenced, each
  // one's token in the same order. Both empty for a lock on one resource.
  // (Default member initializers, so that code that lists the fields above
  // in braces needs none of these.)
  std::vector<Resource> resources{};
  std::vector<std::uint64_t> fences{};
  // A semaphore permit: `resource` is the semaphore's name, `permit` the
  // permit held (0..permits-1) and `permits` the semaphore's count; the
  // fencing token orders the holders of this permit. Unset (and 0) for
  // any other lock.
  std::optional<std::uint32_t> permit{};
  std::uint32_t permits = 0;
  // The read side of `resource`'s read-write lock (AcquireOptions::shared):
  // held together with other readers, never with a writer.
  bool shared = false;
  // A fair lock (AcquireOptions::fair): the id of its waiter's place in the
  // resource's queue, which its release gives up. Empty otherwise.
  std::string queue_id{};
  // Which of the fields above it uses. A record built by hand for a lock
  // that is not a mutex must say so.
  LockKind kind = LockKind::mutex;

  // The resources the lock holds: `resources`, or `resource` alone.
  [[nodiscard]] std::vector<Resource> all_resources() const {
    return resources.empty() ? std::vector<Resource>{resource} : resources;
  }

  [[nodiscard]] bool valid_at(TimePoint now) const noexcept { return now < valid_until; }
};

struct AcquireResult {
  std::error_code error;  // empty on success
  std::optional<Lock> lock;
  // Validity left when the lock was handed out.
  Milliseconds validity{0};
  int attempts = 0;
  // The per-node outcomes of the last attempt.
  std::vector<NodeOutcome> nodes;
  // A fair acquire that waited in line (AcquireOptions::fair): its ticket,
  // when it began drawing it and when a majority had recorded it (the
  // moment from which no waiter that draws later may go first). None when
  // it never waited in line. For diagnosis (and the chaos checker).
  struct Ticket {
    std::uint64_t number = 0;
    TimePoint drawn_at{};
    TimePoint recorded_at{};
  };
  std::optional<Ticket> ticket{};
  // A set acquire that waited for its members one at a time in their fair
  // lines (docs/algorithm.md, "A set's turn"): each member it waited for,
  // in the order it took them, with the ticket of its place in that
  // member's line. Empty when it never waited so. For diagnosis (and the
  // chaos checker's set-turn invariant).
  struct Place {
    Resource resource;
    Ticket ticket;
  };
  std::vector<Place> places{};
  [[nodiscard]] bool ok() const noexcept { return lock.has_value() && !error; }
};

struct ExtendResult {
  std::error_code error;
  // The lock with its new deadline (on success), else as it was passed in.
  std::optional<Lock> lock;
  Milliseconds validity{0};
  std::vector<NodeOutcome> nodes;
  [[nodiscard]] bool ok() const noexcept { return !error; }
};

// A node's persistence, as its configuration says (CONFIG GET appendonly,
// appendfsync at connect). Only aof_always keeps every acknowledged write
// through a crash, which fencing counters need (see docs/engine.md).
// What a node keeps of acknowledged writes, from its CONFIG: `aof_always`
// only with appendonly yes, appendfsync always and no-appendfsync-on-rewrite
// no (with "yes" the node skips its fsyncs while an AOF rewrite runs:
// `aof_always_but_rewrite`, not durable).
enum class Persistence { unknown, none, aof_no, aof_everysec, aof_always, aof_always_but_rewrite };

[[nodiscard]] REDLOCK_API std::string_view to_string(Persistence persistence) noexcept;

// What a client knows about one node right now.
struct NodeHealth {
  std::string name;
  bool connected = false;  // handshake done, not failed since
  Persistence persistence = Persistence::unknown;
  // Why it is not connected (empty when it is); escaped as NodeOutcome::detail.
  std::string last_error;
  // The server's run_id (INFO server), read at connect; empty when unknown
  // (INFO denied, or not connected yet).
  std::string run_id;
  // The name of an earlier node of the quorum that answered with the same
  // run_id: one server named twice (under two addresses), whose two votes
  // fail together — the quorum tolerates fewer failures than it seems.
  // Empty otherwise.
  std::string same_server_as;
  // What is unsafe about how this node is reached, from its configuration:
  // "password sent in clear text" (password_in_clear()) and "TLS
  // certificate not verified" (tls_verify = false); and, once connected,
  // "not independent: one Redis Cluster with <member>" or "not independent:
  // shares a server with <member>" for a member that is a Redis Cluster
  // and another that is the same cluster or has one of its servers (their
  // votes are not independent). Empty when nothing is.
  std::vector<std::string> warnings;
};

struct ReleaseResult {
  std::error_code error;  // empty when every node answered
  // How many nodes deleted our value.
  std::size_t released = 0;
  std::vector<NodeOutcome> nodes;
};

}  // namespace redlock
