// What a node told a session about itself besides the lock protocol
// (docs/transport.md, "What a node told us"): its persistence settings
// (CONFIG GET, asked at each handshake and again every
// SessionSetup::persistence_recheck) and its run_id (INFO server, asked at
// each handshake). The connection asks the questions this names and hands
// each answer back; what the answers mean is here. Pure; one per
// connection, forgotten at each new session.
#pragma once

#include <hiredis/hiredis.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "redlock/outcome.hpp"

namespace redlock::detail {

// Which fact a reply answers; none for a reply that answers no question.
enum class ServerFact : std::uint8_t {
  none,
  appendonly,           // CONFIG GET appendonly
  appendfsync,          // CONFIG GET appendfsync
  no_fsync_on_rewrite,  // CONFIG GET no-appendfsync-on-rewrite
  run_id,               // INFO server
};

// One question: its command's words, and the fact its reply answers.
struct ServerQuestion {
  std::array<std::string_view, 3> words;
  std::size_t word_count;
  ServerFact fact;
};

class ServerFacts {
 public:
  // What a handshake asks: the persistence settings, then INFO server.
  [[nodiscard]] static std::span<const ServerQuestion> handshake_questions() noexcept;
  // What a recheck asks while the session lasts: the persistence settings.
  [[nodiscard]] static std::span<const ServerQuestion> recheck_questions() noexcept;

  // A new session: nothing is known until it answers.
  void forget() noexcept;
  // The reply to the question about `fact`. A denied CONFIG GET (an error
  // reply, renamed or forbidden by ACL) leaves its setting unknown.
  void record(ServerFact fact, const redisReply& reply);

  // What the settings known so far make of the node's durability.
  [[nodiscard]] Persistence persistence() const noexcept;
  // INFO server's run_id; empty until known.
  [[nodiscard]] const std::string& run_id() const noexcept { return run_id_; }

 private:
  std::string appendonly_;
  std::string appendfsync_;
  std::string no_fsync_on_rewrite_;
  std::string run_id_;
};

// "run_id:<hex>" in INFO server's text (at most 64 digits); empty when
// absent.
[[nodiscard]] std::string run_id_in(std::string_view info);

}  // namespace redlock::detail
