// A tiny synchronous Redis client for tests to inspect what the library
// under test left on a node: keys, TTLs, INFO. It is deliberately not the
// library's own client, so a bug there cannot hide itself in an assertion.
//
// Built on hiredis's blocking API. Every call is bounded by the timeout given
// at construction, never throws, and reports failures as values: a Reply of
// kind io_error, std::nullopt, false or kError, with last_error() saying why.
//
// The connection is opened lazily and dropped after any I/O error or
// timeout, so the next call reconnects; one probe survives a node restart.
// A probe is not thread-safe: use one per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct redisContext;

namespace redlock::test {

// One Redis reply, owned: it does not point into hiredis memory.
struct Reply {
  enum class Kind {
    io_error,     // No reply: connect, write, read or timeout failed; see text.
    status,       // +OK and friends; see text.
    error,        // -ERR ...; see text.
    integer,      // See integer.
    bulk_string,  // See text.
    nil,          // A missing value.
    array,        // See elements.
  };

  Kind kind = Kind::io_error;
  std::string text;
  long long integer = 0;
  std::vector<Reply> elements;

  // True for an I/O failure or a Redis error reply.
  [[nodiscard]] bool failed() const { return kind == Kind::io_error || kind == Kind::error; }
  // True for the +OK status.
  [[nodiscard]] bool is_ok() const { return kind == Kind::status && text == "OK"; }
};

class RedisProbe {
 public:
  // What pttl() returns when the command failed. Redis itself only returns
  // -2 (no such key), -1 (no expiry) or a non-negative number.
  static constexpr long long kError = -3;

  // Default timeout for connecting and for each command.
  static constexpr std::chrono::milliseconds kDefaultTimeout{1000};

  explicit RedisProbe(std::uint16_t port, std::chrono::milliseconds timeout = kDefaultTimeout);
  RedisProbe(std::string host, std::uint16_t port,
             std::chrono::milliseconds timeout = kDefaultTimeout);
  ~RedisProbe();

  RedisProbe(const RedisProbe&) = delete;
  RedisProbe& operator=(const RedisProbe&) = delete;
  RedisProbe(RedisProbe&& other) noexcept;
  RedisProbe& operator=(RedisProbe&& other) noexcept;

  // Sends one command, e.g. {"SET", "k", "v", "PX", "100"}; arguments are
  // binary-safe.
  [[nodiscard]] Reply command(const std::vector<std::string>& argv);

  // True when the node answered PONG.
  [[nodiscard]] bool ping();
  // The value, or std::nullopt when the key is missing or the call failed.
  [[nodiscard]] std::optional<std::string> get(std::string_view key);
  // Milliseconds to live: -2 missing key, -1 no expiry, kError on failure.
  [[nodiscard]] long long pttl(std::string_view key);
  // False when the key is missing or the call failed.
  [[nodiscard]] bool exists(std::string_view key);
  // KEYS pattern; empty on failure. Fine for test-sized data sets only.
  [[nodiscard]] std::vector<std::string> keys(std::string_view pattern);
  // SET key value [PX ttl]; true when the node answered OK.
  [[nodiscard]] bool set(std::string_view key, std::string_view value,
                         std::optional<std::chrono::milliseconds> ttl = {});
  // The INFO text of one section (e.g. "replication"), or std::nullopt.
  [[nodiscard]] std::optional<std::string> info(std::string_view section);

  // Why the last call failed; empty after a successful call.
  [[nodiscard]] const std::string& last_error() const { return last_error_; }

 private:
  bool connect();
  void disconnect();
  Reply fail(const std::string& why);

  std::string host_;
  std::uint16_t port_;
  std::chrono::milliseconds timeout_;
  redisContext* context_ = nullptr;
  std::string last_error_;
};

// The value of `field` in INFO text ("field:value" lines), or std::nullopt.
[[nodiscard]] std::optional<std::string> info_field(std::string_view info_text,
                                                    std::string_view field);

}  // namespace redlock::test
