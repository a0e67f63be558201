// A hostile Redis node for the CLI tests: tests/cli/fake_node.py, started
// as a child process, listening on 127.0.0.1 on a free port.
//
// Process contract (as the Redis fixture's): only the process started here
// is signalled, only by its pid, and it is reaped. The script also stops by
// itself after a minute, should a test die before its destructor runs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace redlock::test {

class FakeNode {
 public:
  // `arguments`: the script's mode and its own arguments ("slow",
  // "endless-line", "endless-bulk", or "error" TEXT). Throws
  // std::runtime_error when the script does not start or print its port
  // within ten seconds.
  explicit FakeNode(const std::vector<std::string>& arguments);
  // SIGKILL and reap.
  ~FakeNode();
  FakeNode(const FakeNode&) = delete;
  FakeNode& operator=(const FakeNode&) = delete;
  FakeNode(FakeNode&&) = delete;
  FakeNode& operator=(FakeNode&&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  // "127.0.0.1:<port>".
  [[nodiscard]] std::string address() const;

 private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace redlock::test
