// What the end-to-end CLI tests share: a cluster with a quorum file, and
// questions to ask its nodes directly (with the fixture's probe, not with
// the code under test).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli_runner.hpp"
#include "json_check.hpp"
#include "redis_fixture.hpp"

namespace redlock::test {

// Writes `text` to `path` as it is (no newline translation).
inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A shell snippet that waits (bounded, 20 s) until FILE exists.
inline std::string wait_for_file(const std::filesystem::path& file) {
  return "i=0; while [ ! -e '" + file.string() + "' ] && [ $i -lt 1000 ]; do sleep 0.02; " +
         "i=$((i+1)); done";
}

inline std::string lock_key(std::string_view resource) {
  return "redlock:lock:" + std::string(resource);
}

// How many running nodes hold `resource`'s lock key with exactly `value`
// (any value when `value` is empty).
inline std::size_t nodes_holding(RedisCluster& cluster, std::string_view resource,
                                 std::string_view value = {}) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    if (!cluster.node(i).running()) continue;
    const std::optional<std::string> held = cluster.node(i).probe().get(lock_key(resource));
    if (held && (value.empty() || *held == value)) ++count;
  }
  return count;
}

// Parses stdout as one JSON object; a test failure (and a null value)
// when it is not.
inline JsonValue parse_output(const CliResult& result) {
  JsonParse parsed = parse_json(result.out);
  EXPECT_TRUE(parsed.value.has_value())
      << "not JSON (" << parsed.error << "): " << result.out << "\nstderr: " << result.err;
  if (!parsed.value) return JsonValue{};
  EXPECT_EQ(parsed.value->kind, JsonValue::Kind::object) << result.out;
  return *parsed.value;
}

// Everything a failed expectation about a CLI run should show.
inline std::string describe(const CliResult& result) {
  return "exit " + std::to_string(result.exit_code) + (result.timed_out ? " (timed out)" : "") +
         " after " + std::to_string(result.elapsed.count()) + " ms\nstdout: " + result.out +
         "\nstderr: " + result.err;
}

// SUBCOMMAND --config FILE REST...
inline std::vector<std::string> cli_command(const std::string& subcommand,
                                            const std::filesystem::path& file,
                                            std::vector<std::string> rest = {}) {
  rest.insert(rest.begin(), {subcommand, "--config", file.string()});
  return rest;
}

// A per-test cluster of independent masters and a quorum file naming them.
// Node timeouts are generous (200 ms) so that a loaded machine, or a
// sanitizer build, is not mistaken for a dead node; retries are quick.
class CliClusterTest : public ::testing::Test {
 protected:
  explicit CliClusterTest(std::size_t nodes = 5) : cluster_(nodes) {}

  std::filesystem::path config(std::chrono::milliseconds ttl = std::chrono::seconds(10),
                               std::string_view extra = {}) {
    std::string lines = "node_timeout_ms = 200\nretry_delay_ms = 20\n";
    lines.append(extra);
    return cluster_.write_config(lines, ttl);
  }

  static std::vector<std::string> command(const std::string& subcommand,
                                          const std::filesystem::path& file,
                                          std::vector<std::string> rest = {}) {
    return cli_command(subcommand, file, std::move(rest));
  }

  RedisCluster cluster_;
};

}  // namespace redlock::test
