// The Lua of the read side of a read-write lock (docs/algorithm.md,
// "Read-write locks"). A resource's lock key holds either the writer's value
// (a string: the mutex of today is the write side) or its readers: a sorted
// set of reader values scored by each one's deadline in the node's own
// clock (TIME), whose key expires with the latest live reader. A writer's
// SET NX fails on the set as on any held key, so the exclusive path carries
// no check of its own; a reader sees a string and is refused.
//
// A writer that waits, refused while readers hold the key, adds the member
// "writer-waiting" to the set, scored by now + its ttl on the node: new
// readers are refused while it is live, readers already in keep renewing,
// and the key still expires with its last reader (the member never moves
// the key's expiry). When the last reader leaves (releases, or is found
// past its deadline) while the mark is live, the key becomes the string
// "writer-waiting" for what is left of the mark: readers are refused as by
// a writer, and the first writer to ask takes it over (SET XX) — so the
// writers that waited go before the readers that came after them. A
// reservation nobody takes expires with the mark. A try-lock writer (one
// that does not wait) marks nothing: it would keep readers out for its
// ttl after it gave up. scripts.cpp puts these
// in the one table.
#pragma once

#include <string_view>

namespace redlock::detail {

// Helpers every script that touches a readers' set shares, defined once:
// failed(reply), node_ms() (TIME in milliseconds), readers_deadline(key)
// (the highest score of a reader, nil when none is left), held_by_readers(key)
// (the key is a readers' set), readers_gone(key, now) (the last reader
// left: the key goes, or becomes the reservation of a live mark) and
// writer_waits(key, value, ttl, reserve) — what a writer's SET NX that
// failed does next: with `reserve`, marks the writer waiting on a readers'
// set (false), takes over a reservation (the SET's reply), else false —
// and writer_grant(key, value, ttl, fence hash, fence field, try_only), a
// writer's whole try of one key (`try_only`: a try-lock's, which marks
// nothing): {1, the
// fence counter} ({1, 0} for an empty field), {0, the holder's PTTL}, or
// the error of the command that failed (a grant that read no counter stays
// on the node: the client undoes what answered an error).
extern const std::string_view kReaderRules;

// readers_or(key, failure): what a GET of a writer's script that failed
// answers — 0 when the key is a readers' set (the lock is not this
// value's, as for a key that holds another value), else the failure. The
// mutex's and the multi-resource lock's extend and release open with it.
extern const std::string_view kReadersOr;

// read_acquire — opens with the node rules. KEYS: node marker, recovering
//   key, fence hash, lock key. ARGV: value, ttl ms, fence field ("" when
//   unfenced), amnesia defence. Answers like the mutex's acquire: {1, fence
//   counter}, {0, PTTL} while a writer holds the key, {0, ms the waiting
//   writer has left} while one waits, {2, 0}, {3, ms left}.
extern const std::string_view kReadAcquireBody;
// read_extend — KEYS: lock key. ARGV: value, ttl ms. 1 when the value is a
//   live reader (its deadline moves to now + ttl), else 0.
extern const std::string_view kReadExtendBody;
// read_release — KEYS: lock key. ARGV: value, release channel, waiting
//   set. Removes the reader; when it was the last one the key goes (or
//   passes to the writer waiting), the value is published on the channel
//   ("" publishes nothing) and the next mutex waiter in line is named. 1
//   when the value was a live reader, else 0.
extern const std::string_view kReadReleaseBody;

}  // namespace redlock::detail
