// The fault proxy: one TCP forwarder per client-node link, on one libuv
// loop running on the proxy's own thread, controlled from other threads.
//
// A link listens on 127.0.0.1 (port chosen by the kernel) and forwards each
// accepted connection to its target (a loopback node). Each direction of a
// link (client->node "up", node->client "down") has a mode:
//   pass       bytes are forwarded as they arrive;
//   delay      each chunk is forwarded `delay` after it arrived, in order;
//   blackhole  nothing gets through, but nothing is lost: bytes (and the
//              end of the stream) are kept, in order, until the mode
//              changes, and then the new mode applies to them (pass: sent
//              at once), as TCP delivers by retransmission once a
//              partition heals. Once max_buffered_bytes are kept the proxy
//              stops reading, so the sender's TCP window closes instead of
//              the connection being reset;
//   hold       bytes are kept, in order, until the mode changes; then the
//              new mode applies to them (pass: sent at once). Unlike
//              blackhole the proxy keeps reading, so more than
//              max_buffered_bytes resets the connection;
//   timeout    while it lasts, as blackhole; when it ends (the direction
//              changes to any other mode) every connection of the link is
//              reset on both sides and what it kept is discarded, as when
//              TCP gives up on a connection whose peer stopped answering;
//   reset      every connection of the link is closed with RST, and new
//              connections are accepted and reset at once, until the mode
//              changes (a reset on either direction resets the link).
// Buffers are bounded (max_buffered_bytes per connection and direction):
// blackhole and timeout stop reading at the bound; hold and delay reset a
// connection over it and count that.
//
// Threads: every public member may be called from any thread; set_mode
// takes effect on the proxy's loop before it returns. The destructor stops
// the loop, closes every connection and joins the thread; it never throws.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

namespace redlock::chaos {

enum class LinkMode { pass, delay, blackhole, hold, reset, timeout };
enum class Direction { up, down, both };  // up: client->node, down: node->client

[[nodiscard]] const char* to_string(LinkMode mode) noexcept;

struct ProxyStats {
  std::uint64_t connections_accepted = 0;
  std::uint64_t connections_reset = 0;  // by reset mode, a timeout's end or buffer overflow
  std::uint64_t bytes_forwarded = 0;
  // Kept bytes discarded because the link reset their connection (reset
  // mode, a timeout's end), and bytes read while the link resets.
  std::uint64_t bytes_dropped = 0;
  std::uint64_t overflows = 0;
  std::uint64_t bytes_buffered = 0;  // kept or delayed right now (a level, not a count)
};

class FaultProxy {
 public:
  using LinkId = std::size_t;

  explicit FaultProxy(std::size_t max_buffered_bytes = 16u << 20);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  // Starts listening for a new link to 127.0.0.1:target_port (or [::1]
  // when target_host is "::1"); returns its id, and its listening port in
  // `listen_port`. Errors: the bind/listen failure.
  std::error_code add_link(std::string name, std::string target_host, std::uint16_t target_port,
                           LinkId& id, std::uint16_t& listen_port);

  // Sets the mode of one or both directions. `delay` is used by delay mode.
  void set_mode(LinkId id, Direction direction, LinkMode mode,
                std::chrono::milliseconds delay = std::chrono::milliseconds(0));

  [[nodiscard]] ProxyStats stats(LinkId id) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace redlock::chaos
