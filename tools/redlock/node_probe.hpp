// `redlock status`'s view of one node, gathered with hiredis on a fresh
// connection (not the library's client: status reports what a node says
// about itself, including things the lock protocol never asks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "redlock/config.hpp"
#include "scripts/key_space.hpp"
#include "transport/blocking_session.hpp"

namespace redlock::cli {

struct NodeReport {
  std::string name;     // NodeConfig::name
  std::string address;  // host:port ([v6]:port)
  // Connected, authenticated, selected and answered PING.
  bool reachable = false;
  // Why not reachable, or the first command that failed; empty otherwise.
  std::string error;
  // PING's round trip.
  std::optional<Microseconds> round_trip;
  // INFO replication's role ("master", "slave"), or "unknown".
  std::string role = "unknown";
  // INFO server's run_id: two nodes with one run_id are one server.
  std::optional<std::string> run_id;
  // INFO replication's second_repl_offset is not -1: the server was a
  // replica and took its master's place (unset when not known).
  std::optional<bool> promoted;
  // The server its identity marker names (" run_id=…"), when it names one.
  std::optional<std::string> marker_run_id;
  // CONFIG GET appendonly / appendfsync, or "unknown" (CONFIG denied, e.g.
  // renamed or forbidden by ACL).
  std::string appendonly = "unknown";
  std::string appendfsync = "unknown";
  std::string no_fsync_on_rewrite = "unknown";  // CONFIG GET no-appendfsync-on-rewrite
  // The node-amnesia defence's state (docs/algorithm.md, "The amnesia defence"): whether the
  // identity marker {prefix}node exists, and the PTTL of {prefix}recovering while the node waits
  // out its post-recovery delay (it grants nothing then).
  std::optional<bool> marked;
  // The max_ttl recorded in the marker by the client that marked the node
  // (unset without a marker, or a marker that records none).
  std::optional<Milliseconds> marker_max_ttl;
  std::optional<std::int64_t> recovering_ms;
  // While recovering after a first use that not every node answered: what
  // happened (the recovering key's note, scripts.hpp kFirstInitRecovering).
  std::optional<std::string> first_use_note;

  // With a resource: PTTL of its lock key (-2 no key, -1 no expiry), the
  // holder's value, and this node's fence counter for it. Unset when the
  // node was not asked or did not answer.
  std::optional<std::int64_t> pttl_ms;
  std::optional<std::string> holder;
  std::optional<std::int64_t> fence_counter;
};

// "aof always", "aof always, no fsync on rewrite", "aof everysec",
// "aof no-fsync", "off" (appendonly no: at
// most RDB snapshots, which cannot keep fencing promises), or "unknown".
[[nodiscard]] std::string persistence_mode(const NodeReport& report);

// The largest reply a probe reads, in bytes (INFO is a few KiB); a larger
// one ends the probe with "protocol error: reply larger than ...".
inline constexpr std::size_t kMaxReplyBytes = detail::BlockingSession::kMaxReplyBytes;

// Asks one node. The whole probe, connect and every command, is bounded by
// `timeout`: what is left undone when it runs out ends with "WHAT: timed out
// after N ms". `layout`: where the quorum names its keys
// (scripts/key_space.hpp); per slot, the node rules' keys are read only for
// `resource`, in its slot. Never throws.
[[nodiscard]] NodeReport probe_node(const NodeConfig& node, Milliseconds timeout,
                                    const LockConfig& lock,
                                    const std::optional<std::string>& resource,
                                    detail::KeyLayout layout = detail::KeyLayout::shared);

}  // namespace redlock::cli
