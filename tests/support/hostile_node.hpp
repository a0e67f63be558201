// A node that speaks just enough RESP to hurt: a child process listening on
// a free 127.0.0.1 port that answers every connection in one hostile way,
// for the tests that prove one such node among real ones costs a client
// nothing but that node's vote (docs/engine.md, "What one node can cost a client").
//
// Process contract as for RedisServer (redis_fixture.hpp): forked by the
// creating thread, PR_SET_PDEATHSIG = SIGKILL, stopped by pid (SIGKILL) and
// reaped in the destructor, which never throws. The child allocates nothing
// after the fork: everything it writes is prepared before.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace redlock::test {

enum class HostileMode {
  // "*100000000" and then integers, as fast as the socket takes them.
  huge_array,
  // "*2147483647" and then integers.
  giant_array,
  // "-ERR " and then an error line that never ends.
  endless_error,
  // "$1000000000" and then the bytes of that bulk string, without end.
  endless_bulk,
  // Reads everything, answers nothing.
  silent,
  // "+" and then one byte every 250 ms, never a whole reply: each read
  // returns well inside any per-read timeout.
  slow,
  // Every command answered with one error reply (HostileNode(error_text)).
  error_reply,
};

[[nodiscard]] std::string_view hostile_mode_name(HostileMode mode);

class HostileNode {
 public:
  // Starts listening; throws std::runtime_error when it cannot.
  explicit HostileNode(HostileMode mode);
  // error_reply: every command (each whole RESP array it receives) is
  // answered with "-" + `error_text` + CRLF; the text may hold anything, a
  // newline or a terminal escape included.
  explicit HostileNode(std::string error_text);
  ~HostileNode();
  HostileNode(const HostileNode&) = delete;
  HostileNode& operator=(const HostileNode&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  // "127.0.0.1:<port>".
  [[nodiscard]] std::string address() const;

 private:
  void start(HostileMode mode, const std::string& error_text);

  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
};

// This process's resident set size in KiB (/proc/self/status VmRSS).
[[nodiscard]] long resident_kib();

}  // namespace redlock::test
