// The Redis nodes the transport benchmarks run against.
//
// From REDLOCK_BENCH_NODES=host:port,... when set; otherwise five
// redis-server processes started once per benchmark process by the test
// fixture (tests/support/redis_fixture.hpp), on free loopback ports, and
// stopped when the process exits. Call from the main thread: the fixture
// ties its children's lifetime to the thread that started them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace redlock::bench {

struct BenchNode {
  std::string host;
  std::uint16_t port = 0;
  // The node's process on this machine, 0 when not known: for the node CPU
  // counter (node_cpu_seconds). Started nodes know it; a node from
  // REDLOCK_BENCH_NODES reports it (INFO's process_id) when it is a
  // redis-server on this machine.
  int pid = 0;
  // "host:port", as the quorum file and config_from_addresses take it.
  [[nodiscard]] std::string address() const;
};

// Throws std::runtime_error (a malformed REDLOCK_BENCH_NODES) or the
// fixture's RedisServerError (a node that would not start).
[[nodiscard]] const std::vector<BenchNode>& bench_nodes();

// `count` redis-server processes started with the fixture, once per process
// and count; stopped at exit. Throws the fixture's RedisServerError.
[[nodiscard]] std::vector<BenchNode> started_nodes(std::size_t count);

// The transports a node can be reached by (bench/transport_bench.cpp's
// side-by-side runs).
enum class Transport { tcp, tls, unix_socket };
[[nodiscard]] const char* transport_name(Transport transport) noexcept;

// Five redis-server processes that serve plain TCP, TLS (certificates made
// with the openssl command at start, as the tests do) and a Unix socket
// each; started once per process. The quorum of `transport` on them: plain
// `host:port`, `rediss://` with the test CA, or `unix://`. Throws the
// fixture's RedisServerError, or std::runtime_error from openssl.
[[nodiscard]] const std::vector<BenchNode>& transport_nodes();
[[nodiscard]] std::vector<std::string> transport_addresses(Transport transport);
// The CA file the TLS addresses are verified against.
[[nodiscard]] std::string transport_ca_file();

// The CPU time (user + system) the nodes' processes have used, in seconds;
// nullopt when a node's pid is not known or its /proc entry unreadable.
[[nodiscard]] std::optional<double> node_cpu_seconds(const std::vector<BenchNode>& nodes);

}  // namespace redlock::bench
