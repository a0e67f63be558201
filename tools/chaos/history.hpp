// The history of one chaos run: what every process did and saw, in
// reference time.
//
// Every process (each client worker, the nemesis, the harness itself)
// appends events to its own JSONL file, one JSON object per line; the
// harness merges the files into one history ordered by reference time.
//
// Reference time is the host's CLOCK_MONOTONIC in nanoseconds, read with
// the raw clock_gettime system call (not the vDSO), so neither a clock
// fault injected into a client (its own clock rate) nor libfaketime can
// touch it. All processes on the machine share it.
//
// One event per line; every key except "t", "proc" and "kind" is optional
// and omitted when it has its default value:
//
//   key          type     meaning
//   t            int      reference time, ns
//   proc         string   "c0".."c<n-1>" (clients), "nemesis", "harness", "probe"
//   kind         string   see EventKind
//   phase        string   invoke | ok | fail | info (indeterminate outcome)
//   op           int      per-process operation id; invoke and completion share it
//   value        string   the lock value of the holding this event belongs to
//   token        int      fencing token (fenced holdings and fenced resource ops)
//   ttl_ms       int      acquire/extend: the TTL asked for
//   validity_ms  int      acquire/extend ok: validity the library reported
//   drift_ms     int      acquire ok: the drift allowance that was subtracted
//   start_t      int      acquire ok: reference time the winning attempt started
//   deadline_t   int      acquire/extend ok: the client's claimed validity
//                         deadline, converted to reference time
//   max_renewals int      acquire ok: cap on extensions of this holding (0 = none)
//   nodes        array    per-node replies: [{"node":i,"status":"granted",...}]
//   error        string   fail / info: why
//   key          string   resource op: which resource key
//   read         int      resource read ok: the value read
//   wrote        int      resource write ok: the value written
//   entry        string   resource append: the log entry
//   fault        string   nemesis: the primitive ("kill", "pause-client", "link", ...)
//   target       string   nemesis / snapshot: "n2", "c0", "c0->n3", "resource"
//   detail       string   free text (nemesis parameters, snapshot contents)
//   pttl_ms      int      snapshot: the key's PTTL (-1 no expiry)
//   count        int      run: node count; snapshot (resource): counter value
//   budget_ms    int      probe acquire invoke: TTL plus the retry budget (C11);
//                         nemesis ok (a fault's end): the fault's clients must
//                         complete an acquire within this (C11)
//   fenced       bool     run: whether clients take fenced locks
//   shared       bool     acquire: the read side of the resource (a reader;
//                         readers share it, a writer excludes them)
//   leader       bool     acquire: a campaign in the run's election (its
//                         token is the term)
//   ticket       int      acquire ok of a fair lock that waited in line: its
//                         ticket, with ticket_drawn_t (when it began drawing
//                         it) and ticket_recorded_t (when a majority had it)
//   places       array    acquire ok of a set that waited for its members one
//                         at a time in their fair lines: per member, in the
//                         order taken, {"resource":name,"ticket":int,
//                         "drawn_t":int,"recorded_t":int} (its ticket there,
//                         when it began drawing it, when a majority had it);
//                         at most kMaxPlaces
//   entries      array    snapshot (resource): the log, as strings, in order
//   log_key      string   snapshot (resource): the key of the log in entries
//                         (`key` names the counter)
//   resources    array    acquire: the resource names the lock holds, in the
//                         order asked (a lock over several resources; a plain
//                         lock of a scenario that mixes them; a semaphore's
//                         name); absent: the run's one resource
//   tokens       array    acquire ok, fenced lock over several resources: each
//                         resource's token, in the order of resources
//   permit       int      acquire ok of a semaphore permit: the permit held
//   permits      int      acquire of a semaphore permit: the semaphore's count
//   nested       int      a reentrant holder's nested hold (per holding, from 1):
//                         on nest, unnest and the resource ops made under it;
//                         on lost, the hold that observed the loss (absent:
//                         the outer hold, the one that acquired)
//   attempts     int      nest ok / fail: the acquire rounds the nested lock()
//                         call ran (absent: 0, joined with no round trip)
//   renewals     int      extend ok seen on a guard, which renews by itself:
//                         its count of renewals so far; such an extend has no
//                         invoke and no node replies (the guard shows neither)
//
// The reader refuses a line whose times (t, start_t, deadline_t, the
// ticket's and each place's) are outside [0, 2^61] ns, whose durations (the
// *_ms keys) are beyond ±2^40 ms, whose node indices are outside
// [0, 65535], whose permit and permit count are outside [0, 65535], which
// has more than kMaxPlaces places, or whose counts (nested, attempts,
// renewals) are outside [0, 2^31 - 1]: within those, the checker's
// arithmetic on them (a time plus a duration in ns, the difference of two
// times, a node count from the highest index) cannot overflow, and a line
// stays small.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json.hpp"
#include "redlock/outcome.hpp"

namespace redlock::chaos {

// Host CLOCK_MONOTONIC in ns through the raw system call.
[[nodiscard]] std::int64_t reference_now_ns() noexcept;

enum class EventKind {
  run,       // harness: one at the start: nodes (count), fenced, ttl_ms, detail = scenario
  acquire,   // client / probe: lock acquisition (with the library's retries)
  extend,    // client: renewal
  release,   // client: release
  read,      // client: resource read
  write,     // client: resource write (read-modify-write's write half)
  append,    // client: resource log append
  nemesis,   // nemesis: a fault started (phase invoke) or ended (phase ok)
  snapshot,  // harness: after heal, what a node holds (target "n<i>") or the resource
  heal,      // harness: every fault healed (phase ok)
  // A reentrant holder (docs/chaos.md, "Reentrant holds"): `op` and the
  // invoke's `value` name the holding (the outer hold's acquire) it nests in.
  nest,    // client: a nested hold of a held lock: invoke (the second lock()
           // call), ok (a hold: value, token, attempts, nodes), fail (none)
  unnest,  // client: a nested hold ended (phase ok)
  lost,    // client: a hold (nested, or the outer one) observed its lock's
           // loss (phase info): detail "on_lost" (the guard's loss signal)
           // or "check" (the worker found it lost or run out before a use
           // or at the hold's end); error says why
};

enum class Phase { invoke, ok, fail, info };

[[nodiscard]] std::string_view to_string(EventKind kind) noexcept;
[[nodiscard]] std::string_view to_string(Phase phase) noexcept;
[[nodiscard]] std::optional<EventKind> parse_event_kind(std::string_view text) noexcept;
[[nodiscard]] std::optional<Phase> parse_phase(std::string_view text) noexcept;

struct NodeReply {
  int node = 0;
  std::string status;  // redlock::to_string(NodeStatus): granted, busy, extended, released, ...
  std::int64_t fence_counter = 0;
};

// One member a set waited for in its fair line (AcquireResult::Place), its
// times in reference time.
struct Place {
  std::string resource;
  std::int64_t ticket = 0;
  std::int64_t drawn_t = 0;
  std::int64_t recorded_t = 0;
};

// The most places one event carries: a scenario's set has at most 64
// names, and a bound keeps a line's size and the checker's work bounded.
inline constexpr std::size_t kMaxPlaces = 64;

struct Event {
  std::int64_t t = 0;
  std::string proc;
  EventKind kind = EventKind::run;
  Phase phase = Phase::info;
  std::int64_t op = 0;
  std::string value;
  std::optional<std::int64_t> token;
  std::int64_t ttl_ms = 0;
  std::int64_t validity_ms = 0;
  std::int64_t drift_ms = 0;
  std::int64_t start_t = 0;
  std::int64_t deadline_t = 0;
  std::int64_t max_renewals = 0;
  std::vector<NodeReply> nodes;
  std::string error;
  std::string key;
  std::optional<std::int64_t> read;
  std::optional<std::int64_t> wrote;
  std::string entry;
  std::string fault;
  std::string target;
  std::string detail;
  std::int64_t pttl_ms = 0;
  std::int64_t count = 0;
  std::int64_t budget_ms = 0;
  bool fenced = false;
  bool shared = false;
  bool leader = false;
  std::optional<std::int64_t> ticket;
  std::int64_t ticket_drawn_t = 0;
  std::int64_t ticket_recorded_t = 0;
  std::vector<Place> places;
  std::vector<std::string> entries;
  std::string log_key;
  std::vector<std::string> resources;
  std::vector<std::int64_t> tokens;
  std::optional<std::int64_t> permit;
  std::int64_t permits = 0;
  std::int64_t nested = 0;
  std::int64_t attempts = 0;
  std::int64_t renewals = 0;
};

// The library's per-node outcomes as history replies.
[[nodiscard]] std::vector<NodeReply> node_replies(const std::vector<NodeOutcome>& outcomes);

// Whether `reply`, one of an acquire completion's, says the node took the
// acquisition's value: "granted", or, for a lock over several resources,
// "extended": a set that waited its turn ends with a round that adopts
// its members as one lock, counted as an extend (docs/algorithm.md, "A
// set's turn").
[[nodiscard]] bool acquire_reply_grants(const Event& acquire, const NodeReply& reply) noexcept;

// One line of JSON (no trailing newline).
[[nodiscard]] std::string to_json_line(const Event& event);
// Parses one line; nullopt with `error` set on malformed input.
[[nodiscard]] std::optional<Event> parse_event_line(std::string_view line, std::string& error);

struct History {
  std::vector<Event> events;  // ordered by t (stable for equal t)
};

struct HistoryLoadResult {
  std::optional<History> history;
  std::string error;  // "file:line: message" when !history
};

// Reads JSONL files and merges them by t. A file that ends in a partial
// last line (a process killed mid-write) keeps the complete lines.
[[nodiscard]] HistoryLoadResult load_history(const std::vector<std::filesystem::path>& files);
// Writes the merged history as one JSONL file.
[[nodiscard]] bool save_history(const History& history, const std::filesystem::path& file,
                                std::string& error);

// Appends events to a JSONL file, flushing each line (a process may be
// killed at any time). Not thread-safe.
class HistoryWriter {
 public:
  explicit HistoryWriter(const std::filesystem::path& file);
  ~HistoryWriter();
  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;
  [[nodiscard]] bool ok() const noexcept { return fd_ >= 0; }
  void write(const Event& event) noexcept;

 private:
  int fd_ = -1;
};

}  // namespace redlock::chaos
