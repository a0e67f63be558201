// The Lua scripts every node runs (docs/algorithm.md, "Keys and scripts"),
// in one table, with their SHA-1 names for EVALSHA and the reply codes they
// answer with. Each runs atomically on its node.
//
// The lock scripts (acquire, extend, release, fence) are written once, in
// batched form: one call carries any number of requests and answers an
// array with one reply per request (an error reply for a request whose
// command failed), as if the requests had run one after another; a lone
// request is a batch of one. A call's KEYS are the keys every request of it
// shares (`shared_keys`: the marker, the recovering key, the fence hash of
// one prefix), sent once, then each request's own key; its ARGV every
// request's `args_per_request` arguments in order. NodeConnection decides
// which requests share a call. The table's entries are transport/script.hpp's
// `Script`: what the transport needs to send one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redlock/config.hpp"
#include "redlock/types.hpp"
#include "scripts/key_space.hpp"
#include "transport/script.hpp"

namespace redlock::detail {

// What the lock scripts answer: the first element of an acquire's or a
// fence's reply, and the whole reply of an extend or a release.
// tests/unit/scripts_test.cpp checks the Lua's literals against these.
enum class ReplyCode : long long {
  refused = 0,         // busy (acquire), not held (extend, release), not stored (fence)
  done = 1,            // granted, extended, released, stored
  unmarked = 2,        // acquire, fence: no identity marker (amnesia defence on)
  rejoined = 2,        // release: released, and the releaser took its place in line
  recovering = 3,      // acquire, fence: within the post-recovery delay
  permits_differ = 4,  // permit_acquire: the nodes record another permit count
  unmerged = 5,        // fence, ticket draw and record: recovered with a delay, and its
                       // counters not yet merged again (the remerge script)
};

[[nodiscard]] constexpr long long code(ReplyCode reply) noexcept {
  return static_cast<long long>(reply);
}

enum class ScriptId : std::uint8_t {
  acquire,
  extend,
  release,
  fence,
  probe,
  recover,
  // The second merge of a node recovered with a delay.
  remerge,
  // The lock kinds beyond the mutex (kind_scripts.hpp): one request per call.
  acquire_all,
  extend_all,
  release_all,
  adopt_all,
  fence_all,
  permit_acquire,
  permit_extend,
  inspect,
  // The read side of a read-write lock (reader_scripts.hpp).
  read_acquire,
  read_extend,
  read_release,
  // An elected leader's announcement (election.hpp): one PUBLISH.
  announce,
  // The fair lock (fair_scripts.hpp).
  fair_acquire,
  ticket_draw,
  ticket_enqueue,
  fair_release,
  queue_leave,
  // A rejoined releaser's turn handed on (docs/algorithm.md,
  // "Waiting in line", rejoining).
  pass_turn,
  // `redlock init`: a node declared part of a brand-new quorum.
  declare_new,
  // A session's first word on a node: a marker copied to a replica that
  // was promoted in its writer's place is taken away (the amnesia
  // defence then recovers the node).
  check_marker,
  // The same in the per-slot layout, over every slot's marker.
  check_slot_markers,
  // `redlock init` in the per-slot layout: every slot a server has.
  declare_new_slots,
  // The acquire sent as plain commands in one transaction (no script):
  // see acquire_set below.
  acquire_set,
};
inline constexpr std::size_t kScriptCount = 30;

static_assert(kScriptCount <= kMaxScripts, "a session's loaded set holds every script");

// A script's id, from its table entry (Script::number is its ScriptId).
[[nodiscard]] constexpr ScriptId id_of(const Script& entry) noexcept {
  return static_cast<ScriptId>(entry.number);
}

inline constexpr Milliseconds kReleaseMinTimeout{250};

// What a lock script's or the recover script's reply may cost — also the
// budget of every reply that answers no script (the handshake, a published
// message) — and the probe's (a fence hash of about a million resources).
inline constexpr std::size_t kScriptReplyBytes = kDefaultReplyBytes;    // 1 MiB
inline constexpr std::size_t kProbeReplyBytes = std::size_t{64} << 20;  // 64 MiB

// acquire — request KEYS: lock key; shared: node marker, recovering key,
//   fence hash. ARGV: value, ttl ms, resource (empty for an unfenced
//   acquire, which needs no counter), amnesia defence ("1" or "0"; with
//   "0" the marker is not asked for, but the recovering key still refuses),
//   then the waiter's place in line, empty for a request that does not
//   wait, else line_argument().
//   Answers {done, fence counter} ({done, 0} unfenced), {refused, holder
//   PTTL}, {unmarked, 0}, {recovering, ms left}; a refusal also gives the
//   waiter a place at the back of the line when it has none, a grant takes
//   its place out.
// acquire_set — the acquire of a first attempt that needs no script: an
//   unfenced exclusive lock on one resource that holds no place in line,
//   on a node that requires no replicas. Not a script but one transaction
//   per batch, `MULTI; EXISTS marker; PTTL recovering; SET key value NX PX
//   ttl (per request); EXEC`, which the node runs atomically as it would the
//   script: the node rules are read in the same instant the keys are set.
//   Request KEYS: lock key; shared: node marker, recovering key. ARGV:
//   value, ttl ms, amnesia defence ("1" or "0"; read by the client, not
//   sent). The client turns the transaction's answer into the acquire
//   script's answers (set_acquire.hpp): {done, 0},
//   {refused, -1} (the holder's PTTL is not asked for), {unmarked, 0},
//   {recovering, ms left}; a key the SET took while the rules refuse is
//   released again at once (never counted).
// extend — KEYS: lock key. ARGV: value, ttl ms. Answers done or refused;
//   never creates the key: an expired lock stays expired.
// release — KEYS: lock key; shared: node marker, recovering key (the
//   rules of a fair grant it makes, and the prefix the fair queue's keys are
//   named from). ARGV: value, release channel, waiting set (or
//   empty), rejoin place (or empty; rejoin_argument()). Deletes only our own value, then publishes
//   the (now dead) value on the channel to wake waiters (an empty channel publishes nothing: an
//   unlock nobody should hear); the value lets a waiter count one release
//   once. With a waiting set, the first waiter in line (whose place is
//   taken) is also named: "<number> <value>" on the wake channel its id
//   carries (docs/engine.md, "Waiting for a release"), and with a rejoin
//   place the releaser then takes it at the back of the line. Where a fair
//   queue for the resource lists a waiter, its first live waiter is served
//   instead as fair_release serves it (its claim granted in the same call;
//   no publish on the release channel then). Answers done, rejoined (done,
//   and the place was taken) or refused.
// fence — (see below); remerge — KEYS: recovering key, fence hash. ARGV:
//   field, counter pairs. The second merge of a node recovered with a
//   delay: answers 1 when it merged, 0 when the node awaits none or its
//   delay is not over.
// fence — KEYS: fence hash; shared: node marker, recovering key. ARGV:
//   resource, proposed token T, amnesia defence. Stores T only if the
//   counter is strictly smaller, and never while recovering or awaiting
//   the second merge. Answers {done, T}, {refused, counter}, {unmarked, 0},
//   {recovering, ms left} or {unmerged, 0}.
// probe — KEYS: node marker, recovering key, fence hash. ARGV: the
//   patterns of the keys that hold locks (lock keys, permit keys). Answers {marker exists,
//   recovering PTTL, any lock key exists, fence hash as HGETALL}: what the recovery decision needs
//   to know.
// recover — KEYS: node marker, recovering key, fence hash. ARGV: delay ms,
//   marker value, recovering value, then field/value pairs to merge into
//   the fence hash (field-wise max). Does nothing and answers 0 when the
//   marker exists (someone recovered the node first); otherwise merges,
//   sets the recovering key for the delay (none when 0), writes the marker,
//   answers 1.
// declare_new — KEYS: node marker, recovering key, fence hash. ARGV: the
//   marker to write, the first-init marker prefix, then the patterns of
//   the keys that hold locks (as probe's). When the node shows no sign of
//   use — no marker, or one a first initialisation that never completed
//   wrote (it starts with the prefix); no fence counter (the hash's empty
//   field, a second merge's flag, aside); no lock key — writes the marker,
//   deletes the recovering key and the empty field, and answers {1, ""};
//   else changes nothing and answers {0, "marker" | "counters" | "locks"}.
//   It and recover write the marker with " replid=<master_replid>
//   run_id=<this server's run_id>" after the value they are given (INFO
//   replication and server): the server and the replication history it
//   was written in.
// check_slot_markers — no KEYS; ARGV: the key prefix, the tag (slot_tag)
//   of a slot the server serves. check_marker for a quorum that names its
//   keys per slot (key_space.hpp): the session's first word there, over
//   every slot's marker on the server (`<prefix>{<tag>}node`, found with
//   SCAN; a script flagged allow-cross-slot-keys, since the markers of a
//   cluster shard's slots are keys of many slots). On a replica: the
//   error. On a server that shows a promotion: every such marker that
//   does not name this server, or names it in another replication history
//   (as check_marker), is deleted, and the answer is how many were; then,
//   when it read every marker it found, `<prefix>{<tag>}checked` records
//   the promotion ("<run_id> <master_replid>"), and while it does, later
//   sessions' checks scan nothing and answer 0 (the server has been a
//   master since, so no marker came to it by replication; a new promotion
//   has a new replication id). Otherwise nothing changes and the answer is
//   0 (every per-slot marker names its server: none was written before
//   markers did).
// declare_new_slots — no KEYS; ARGV: the key prefix, the marker to write,
//   the first-init marker prefix, "1" to mark ("0" to ask only), the glob
//   of the lock keys and that of the permit keys of every slot
//   (slot_lock_pattern, slot_permit_pattern), then the tags (slot_tag) of
//   the slots to mark. declare_new for a quorum that names its keys per
//   slot (key_space.hpp), over every slot's keys on the server (found with
//   SCAN; flagged allow-cross-slot-keys, as check_slot_markers): a slot's
//   marker other than a first initialisation's, a counter in a slot's
//   fence hash, or a lock or permit key is a sign of use (a key it cannot
//   read, too). Asked to mark, and shown none, it checks that every listed
//   slot is the server's (else the error, nothing written), then writes
//   each one's marker (named as declare_new's), deletes its recovering key
//   and its fence hash's empty field. On a replica: the error. Answers
//   {marked now, a marker seen, a first initialisation's marker seen,
//   counters seen, lock keys seen, this server's run_id} (1/0 each, the
//   run_id "" without INFO).
// check_marker — KEYS: node marker. Run at the start of every session of a
//   lock connection (SessionSetup::opening) with the amnesia defence on.
//   On a server that is a replica (INFO replication's role:slave) it
//   answers an error, which ends the session: a session checked before a
//   promotion must not serve after it. Without INFO (an ACL) it changes
//   nothing and answers 0.
//   A marker that names this server (" run_id=…", INFO server) is left as
//   it is, except on a server that shows a promotion when it names
//   another replication history (" replid=…" other than INFO
//   replication's master_replid: written before this server was last a
//   replica, so it may lack the grants of the master it followed, and it
//   is deleted; one that names no history was written before markers did,
//   and is left). Otherwise, on a server that shows a promotion (INFO
//   replication's second_repl_offset is not -1: it was a replica and took
//   its master's place), the marker is deleted: a replica copies its
//   master's marker but may lack the grants its master acknowledged last,
//   so it is a node that lost data, and the node rules refuse it until the
//   amnesia defence recovered it. On a server that shows none, a marker
//   naming another server is left as it is (the same server restarted
//   with its own data: a new run_id), and one naming no server (written
//   before markers named theirs) gets this server's name. Answers 1 when it
//   deleted the marker, else 0.
[[nodiscard]] const Script& script(ScriptId id);
// Every script, in ScriptId order; each node is given all of them at
// connect (SCRIPT LOAD).
[[nodiscard]] const std::array<Script, kScriptCount>& script_table();
// What a session sends in `script`'s place when the quorum's keys are laid
// out per slot (key_space.hpp): its twin that publishes on shard channels
// (SPUBLISH, heard through the server that owns the channel's slot: on a
// Redis Cluster a release wakes its waiters through the resource's shard
// alone, where PUBLISH is carried to every server of the cluster). A
// script that publishes nothing, and a twin, is its own. A twin is
// numbered kScriptCount after its script, named as it with " (sharded)".
[[nodiscard]] const Script& shard_publishing(const Script& script) noexcept;
static_assert(2 * kScriptCount <= kMaxScripts, "a session's loaded set holds every twin as well");

// Key names on a node.
[[nodiscard]] std::string marker_key(std::string_view prefix);
// The marker's value: the node's incarnation (random hex, for diagnosis)
// and the max_ttl of the client that marked it — the recovery delay that
// client applies — so `redlock status` can name nodes marked under another
// max_ttl than its own.
[[nodiscard]] std::string marker_value(std::string_view incarnation, Milliseconds max_ttl);
// The marker a first initialisation writes when not every node answered
// (a majority that lost its data would look the same, so it also sets the
// recovery delay): tagged so that `redlock init` can tell it from the
// marker of a quorum in use.
inline constexpr std::string_view kFirstInitMarkerPrefix = "redlock-first-init-";
[[nodiscard]] std::string first_init_marker_value(std::string_view incarnation,
                                                  Milliseconds max_ttl);
[[nodiscard]] bool is_first_init_marker(std::string_view value) noexcept;
// The recovering key's value after such a first initialisation: what
// happened, for `redlock status` and a refused acquire's note; it starts
// with kFirstInitRecovering.
inline constexpr std::string_view kFirstInitRecovering = "first-init: ";
// The story in a recovering key's value after such a first use (what
// follows kFirstInitRecovering), or empty for any other value.
[[nodiscard]] std::string_view first_use_story(std::string_view recovering_value) noexcept;
// The max_ttl a marker value records; none for a value without one (a
// marker written by another version, or by hand).
[[nodiscard]] std::optional<Milliseconds> marker_max_ttl(std::string_view value);
// The run_id of the server a marker value names (recover and declare_new
// end it with " run_id=<40 hex digits>"); none for a marker that names no
// server.
[[nodiscard]] std::optional<std::string> marker_run_id(std::string_view value);
[[nodiscard]] std::string recovering_key(std::string_view prefix);
// A SCAN MATCH glob for every lock key (lock.lock_key with `{resource}` as
// `*`; with a lock_key such as "{resource}", any key at all).
[[nodiscard]] std::string lock_pattern(const LockConfig& lock);
// The same for the lock keys under `keys` (per slot: that slot's only).
[[nodiscard]] std::string lock_pattern(const KeySpace& keys);
[[nodiscard]] std::string permit_pattern(std::string_view prefix);
// The same globs for the per-slot layout's keys of every slot (the slot's
// tag as `{*}`): `redlock init` of such a quorum looks for them.
[[nodiscard]] std::string slot_lock_pattern(const LockConfig& lock);
[[nodiscard]] std::string slot_permit_pattern(std::string_view prefix);
// The lock key of `resource`: lock.lock_key with its placeholders replaced
// (config/lock_key_pattern.hpp).
[[nodiscard]] std::string lock_key(const LockConfig& lock, std::string_view resource);
// The lock key of `resource` under `keys` (key_space.hpp): `{prefix}` is
// the space's key prefix.
[[nodiscard]] std::string lock_key(const KeySpace& keys, std::string_view resource);
// Whether `key`, a lock key, would be one of the library's own keys under
// `prefix` (the marker, the recovering key, the fence hash, a fair lock's
// queue, the waiters' line, a semaphore's permit or count, a listening mark): a resource whose lock
// key a lock_key such as "{resource}" or "{prefix}{resource}" puts there is refused
// (invalid_argument), so no lock ever overwrites them. Never with the default lock_key, whose keys
// are all under `{prefix}lock:`.
[[nodiscard]] bool is_bookkeeping_key(std::string_view prefix, std::string_view key);
[[nodiscard]] std::string fence_key(std::string_view prefix);
[[nodiscard]] std::string release_channel(std::string_view prefix, std::string_view resource);
// The mutex waiters' line for `resource` on a node: a sorted set of waiter
// ids ("<wake channel> <number>"), each scored with the node-clock instant
// it first took its place. A release names the first one on its client's
// wake channel, so that only that waiter, of all the clients' waiters,
// tries at once.
[[nodiscard]] std::string waiting_key(std::string_view prefix, std::string_view resource);
// An acquire request's place-in-line argument: "<F><lease ms>:<length>:
// <waiting set><waiter id>", F "1" when an earlier attempt of the same
// acquire may hold a place (its grant then takes the place out), else "0";
// <length> is the waiting set's key's length, so that neither name needs
// escaping.
[[nodiscard]] std::string line_argument(std::string_view waiting, std::string_view waiter_id,
                                        Milliseconds lease);
// A release request's rejoin place: "<lease ms>:<waiter id>".
[[nodiscard]] std::string rejoin_argument(std::string_view waiter_id, Milliseconds lease);
// A client's wake channel, on which releases name its waiters:
// `{prefix}released:@{client}`, under the release channels' pattern (so the
// ACL that lets clients hear releases lets them hear these; a lock named
// "@{client}" would share it, and its waiters' messages are ignored there).
[[nodiscard]] std::string wake_channel(std::string_view prefix, std::string_view client);
// Where the leader elected for the election's resource announces its term:
// the resource's release channel with "#elected" after it (under the
// release channels' pattern, so the same ACL covers it; a lock named
// "{resource}#elected" would share it, and its waiters would wake once for
// nothing).
[[nodiscard]] std::string elected_channel(std::string_view prefix, std::string_view resource);

// A fair lock's queue on a node (fair_scripts.hpp): the waiters' tickets,
// their deadlines, their claims, and the fence hash field that counts the
// tickets.
[[nodiscard]] std::string queue_key(std::string_view prefix, std::string_view resource);
[[nodiscard]] std::string queue_due_key(std::string_view prefix, std::string_view resource);
[[nodiscard]] std::string queue_claims_key(std::string_view prefix, std::string_view resource);
[[nodiscard]] std::string ticket_field(std::string_view resource);

// A semaphore's keys (docs/algorithm.md, "Semaphores"): permit j of
// semaphore S is the lock key `{prefix}sem:{S}:{j}` — the digits after the
// last colon name the permit, so no two (S, j) share a key — and the count
// its clients agreed on is recorded at `{prefix}permits:{S}`. Permit j's
// fencing counter is the fence hash's field `sem:{S}:{j}`; its releases are
// published on `{prefix}released:sem:{S}` — under the release channels'
// pattern, so an ACL that lets clients hear releases lets them hear these
// (a plain lock named `sem:{S}` shares the channel: a waiter of it may wake
// once for nothing, and retries).
[[nodiscard]] std::string permit_key_prefix(std::string_view prefix, std::string_view semaphore);
[[nodiscard]] std::string permit_key(std::string_view prefix, std::string_view semaphore,
                                     std::uint32_t permit);
[[nodiscard]] std::string permit_count_key(std::string_view prefix, std::string_view semaphore);
[[nodiscard]] std::string permit_fence_prefix(std::string_view semaphore);
[[nodiscard]] std::string permit_fence_field(std::string_view semaphore, std::uint32_t permit);
[[nodiscard]] std::string permit_channel(std::string_view prefix, std::string_view semaphore);

}  // namespace redlock::detail
