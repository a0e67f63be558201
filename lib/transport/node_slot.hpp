// A NodeConnection's queue entry (Slot), shared by node_connection.cpp (the
// session: connect, handshake, resets), node_io.cpp (bytes and replies),
// node_deadlines.cpp (unanswered requests) and node_requests.cpp (encoding
// requests, alone or batched). Not for use elsewhere.
#pragma once

#include <hiredis/hiredis.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "transport/node_connection.hpp"
#include "transport/reply_pool.hpp"

namespace redlock::detail {

struct ReplyDeleter {
  void operator()(redisReply* reply) const noexcept { free_reply(reply); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

// One request in flight. Kept small (every request of every renewal passes
// through the queue): what only the handshake needs is in HandshakeStep.
struct NodeConnection::Slot {
  std::shared_ptr<ResponseSink> sink;
  const Script* script = nullptr;
  // RESP of "numkeys key... arg..." — identical after EVALSHA sha and after
  // EVAL body, so a NOSCRIPT fallback re-encodes only the head. Either owned
  // here or, for a prepared request, owned by the sink.
  const PreparedRequest* prepared = nullptr;
  std::string tail;
  std::size_t argc = 0;
  TimePoint sent_at{};
  TimePoint deadline{};
  std::array<ReplyPtr, 2> replies{};
  std::uint32_t tag = 0;
  // For a request that may go out batched (send_encoded, send_prepared):
  // the tail's layout and key count.
  TailLayout layout;
  std::uint16_t key_count = 0;
  // Set on the first request of a batch: how many requests its one reply
  // answers (this and the batch_size - 1 after it).
  std::uint16_t batch_size = 0;
  // For a transaction's first request (Script::transaction): the replies
  // before EXEC's (MULTI's and each queued command's) still to be read.
  // The first error among them is kept in replies[1].
  std::uint16_t skip = 0;
  std::uint8_t expected = 1;
  std::uint8_t received = 0;
  std::uint8_t step = 0;  // handshake: index into handshake_steps_
  // A question about the server itself (a CONFIG GET of a persistence
  // setting, INFO server), whose reply updates what health() reports.
  ServerFact fact = ServerFact::none;
  bool handshake = false;
  bool with_wait = false;
  bool evaled = false;
  bool answered = false;      // the sink has been told `timeout`
  bool before_ready = false;  // queued while the session was being set up
  // Encoded into the output on a ready session: from then on it may reach
  // the node and run there, whatever becomes of this connection.
  bool written = false;
  // A compare-and-delete of a value that may have been granted
  // (send_cleanup): if this connection is reset before its answer, it goes
  // to the node again once the node is reachable, until `expires_at`.
  bool cleanup = false;
  TimePoint expires_at{};
};

}  // namespace redlock::detail
