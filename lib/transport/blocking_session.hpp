// A synchronous connection to one node, for the callers that want an
// answer now on their own thread: FenceGate (a resource store) and the
// CLI's `redlock status` probe. The lock protocol itself runs on the event
// loop (node_connection.hpp); this is the same transports (TCP, a Unix
// socket, TLS with the node's TlsConfig) and the same reply bounds, in a
// blocking form.
//
// Every step is bounded by the session's deadline (set_deadline), and every
// reply by kMaxReplyBytes: a node that answers a byte a second, or streams
// an endless line or bulk string, costs no more than the deadline in time
// and about the limit in memory. The first failure is kept ("WHAT: why",
// escaped) and ends the session: later commands fail at once; open a new
// session to try again. Not thread-safe; SIGPIPE is never raised.
#pragma once

#include <hiredis/hiredis.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "redlock/clock.hpp"
#include "redlock/config.hpp"

namespace redlock::detail {

class TlsSession;

struct BlockingReplyFree {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using BlockingReply = std::unique_ptr<redisReply, BlockingReplyFree>;

class BlockingSession {
 public:
  // The largest reply read, in bytes (INFO is a few KiB).
  static constexpr std::size_t kMaxReplyBytes = 1024 * 1024;

  explicit BlockingSession(NodeConfig node);
  ~BlockingSession();
  BlockingSession(const BlockingSession&) = delete;
  BlockingSession& operator=(const BlockingSession&) = delete;

  // From now on, every step ends by `deadline`; `budget` is what the
  // timeout message names ("timed out after 500 ms").
  void set_deadline(SteadyClock::time_point deadline, Milliseconds budget) noexcept;

  // Connects and, over TLS, shakes hands; then AUTH and SELECT as the node
  // is configured. False with failure() set ("connect: ...", "AUTH failed:
  // ..." — never the password).
  bool open();

  // The reply, or nullptr once the session has failed.
  BlockingReply command(const std::vector<std::string>& words);

  [[nodiscard]] bool failed() const noexcept { return !failure_.empty(); }
  [[nodiscard]] const std::string& failure() const noexcept { return failure_; }

 private:
  bool fail(const std::string& what, const std::string& why);
  // Connects (TCP or Unix socket) by the deadline; false with failure() set.
  bool connect_until_deadline();
  bool start_tls();
  bool send_all(std::string bytes, const std::string& what, bool encrypted = false);
  // One read when the socket has something, fed to the reply reader
  // (through TLS when on): the byte count, -1 on failure.
  long receive(const std::string& what);
  bool wait_for(short events, const std::string& what);
  int fd() const noexcept;

  NodeConfig node_;
  SteadyClock::time_point deadline_;
  Milliseconds budget_{0};
  redisContext* context_ = nullptr;
  std::unique_ptr<TlsSession> tls_;
  std::string failure_;
};

}  // namespace redlock::detail
