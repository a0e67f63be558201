// What a request to a node is, as the transport carries it: a Lua script
// (or a transaction form standing for one) with its keys and arguments.
// The transport knows how a script is sent (EVALSHA, EVAL after NOSCRIPT,
// a batched call's layout, the reply budget), never what it does: the
// scripts themselves, their table and their answers' meaning are one
// layer up (scripts/scripts.hpp).
#pragma once

#include <hiredis/hiredis.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "redlock/types.hpp"

namespace redlock::detail {

// How many scripts a session may know (its loaded set is a bitset).
inline constexpr std::size_t kMaxScripts = 64;

// What one reply may cost the client (transport/reply_reader.hpp) unless
// its script says otherwise; also the budget of every reply that answers
// no script (the handshake, a published message).
inline constexpr std::size_t kDefaultReplyBytes = std::size_t{1} << 20;  // 1 MiB

class TransactionForm;

struct Script {
  // Its place in its table, below kMaxScripts: the session remembers by it
  // which scripts the node has cached.
  std::uint8_t number;
  std::string_view name;
  std::string_view body;
  std::string sha1;
  // Batched form (scripts.hpp): one call carries any number of requests,
  // `shared_keys` keys sent once, then each request's own first key, then
  // each request's `args_per_request` arguments; the reply is an array
  // with one element per request.
  bool batched;
  std::size_t shared_keys;
  std::size_t args_per_request;
  // The most one reply of it may cost the client.
  std::size_t max_reply_bytes;
  // Not a script: a batch of its requests goes as one MULTI/EXEC that this
  // form encodes and whose answer it maps back to each request (the body
  // is empty and never loaded).
  const TransactionForm* transaction = nullptr;
  // The shortest time its request waits for an answer, whatever the node
  // timeout.
  Milliseconds min_timeout{0};
};

// One request of a script with its keys and arguments, built at run time.
struct ScriptCall {
  const Script* script = nullptr;
  std::vector<std::string> keys;
  std::vector<std::string> args;
};

// Where the parts of an encoded request tail ("numkeys key... arg...")
// begin: byte offsets of the first key, of the second key (the first
// argument's when there is one key) and of the first argument.
struct TailLayout {
  std::uint32_t keys_offset = 0;
  std::uint32_t second_key_offset = 0;
  std::uint32_t args_offset = 0;
};

// A request as the transport encoded it: its tail, empty for a request
// that timed out before its batch was answered (its bytes are gone, and
// its answer goes to no one), and where the tail's parts begin.
struct EncodedRequest {
  std::string_view tail;
  TailLayout layout;
};

// One bulk string of an encoded tail ("$len\r\nbytes\r\n"): whole, as it
// may be written again, and its bytes.
struct TailBulk {
  std::string_view whole;
  std::string_view bytes;
};

// The bulk string at `offset` of `tail`, a tail this client encoded;
// `offset` moves past it.
[[nodiscard]] TailBulk next_tail_bulk(std::string_view tail, std::size_t& offset) noexcept;

// One request's answer, mapped from a transaction's: either `passed`, an
// element of EXEC's answer handed on as it is, or the first `count` of
// `numbers`, which the transport delivers as an array reply, as a script
// would have answered.
struct TransactionAnswer {
  const redisReply* passed = nullptr;
  std::array<long long, 3> numbers{};
  std::size_t count = 0;
};

// A batch of requests sent as one transaction of plain commands instead of
// a script (the layer above defines what it encodes and what its answer
// means). Stateless: one instance serves every connection.
class TransactionForm {
 public:
  virtual ~TransactionForm() = default;
  // Appends MULTI, the commands of `requests` (at least one; a batch holds
  // only requests whose shared keys are the same) and EXEC to `out`;
  // returns how many replies come before EXEC's.
  virtual std::size_t encode(std::string& out, std::span<const EncodedRequest> requests) const = 0;
  // Whether `exec`, EXEC's answer (not an error), answers `count` requests.
  [[nodiscard]] virtual bool answers(const redisReply& exec, std::size_t count) const noexcept = 0;
  // Request `index`'s answer (answers() holds). True when the node must
  // also run `cleanup` to undo what the transaction did for the request
  // although its answer says it did not: the transport sends it as
  // NodeConnection::send_cleanup, kept while what it undoes may live
  // (`lives` plus the clock-drift allowance).
  [[nodiscard]] virtual bool answer(const redisReply& exec, std::size_t index,
                                    const EncodedRequest& request, TransactionAnswer& out,
                                    ScriptCall& cleanup, Milliseconds& lives) const = 0;
  // The cleanup of a request when the transaction failed as a whole
  // (EXECABORT, or EXEC refused): a command outside a refused MULTI may
  // have run. False when none is needed.
  [[nodiscard]] virtual bool cleanup_after_failure(const EncodedRequest& request,
                                                   ScriptCall& cleanup,
                                                   Milliseconds& lives) const = 0;
};

}  // namespace redlock::detail
