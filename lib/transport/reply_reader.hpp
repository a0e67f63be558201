// Replies parsed from a node's bytes, with a bound on what one reply may
// cost (docs/engine.md, "What one node can cost a client"). hiredis's reader alone takes whatever
// a node sends: an array header of two billion elements is one calloc, an
// endless bulk string or error line is buffered for as long as it lasts,
// and freeing a huge tree blocks the loop. Here every reply is charged as
// it is built — each object, each string's bytes, each array's element
// pointers, and the bytes buffered for the item still arriving — and a
// reply over its budget is a protocol error: the caller resets the
// connection, which frees a tree no larger than the budget.
//
// Single-threaded (the loop thread); replies are the connection's to free
// with free_reply (reply_pool.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

struct redisReader;
struct redisReply;

namespace redlock::detail {

class ReplyReader {
 public:
  ReplyReader();
  ReplyReader(const ReplyReader&) = delete;
  ReplyReader& operator=(const ReplyReader&) = delete;
  ~ReplyReader();

  // Bytes as they came from the socket. False on failure (error()).
  [[nodiscard]] bool feed(const char* data, std::size_t size);

  enum class Next { reply, incomplete, error };
  // The next complete reply, charged against `budget` bytes (the budget of
  // the request it answers; one reply's parts may arrive over several
  // reads, and each call for it must pass the same budget). On `reply`,
  // `out` is the caller's; on `error`, error() says why and the reader is
  // spent (the connection must be reset).
  [[nodiscard]] Next next(redisReply*& out, std::size_t budget);

  [[nodiscard]] std::string_view error() const noexcept { return error_; }

 private:
  redisReader* reader_;
  // What the reply being built has cost so far (reset when it is complete).
  std::size_t charged_ = 0;
  bool over_budget_ = false;
  std::string error_;

  friend struct ReplyCharge;
};

// "1 MiB", "64 MiB", "512 KiB", "100 bytes": for error messages and docs.
[[nodiscard]] std::string byte_size_text(std::size_t bytes);

}  // namespace redlock::detail
