// The acquire sent as one transaction of plain commands (scripts.hpp,
// acquire_set): the transaction a batch of its requests becomes, and what
// one request's answer is, read from the transaction's answer (a pure
// function of hiredis reply trees, unit-tested by feeding RESP bytes
// through a redisReader). The transport carries the transaction through
// set_acquire_form() and knows nothing of what it means.
#pragma once

#include <hiredis/hiredis.h>

#include <cstddef>

#include "scripts/scripts.hpp"
#include "transport/script.hpp"

namespace redlock::detail {

// One request's answer in the acquire script's shape: either `passed`, an
// element of the transaction's answer to hand on as it is (an error reply,
// or one of a type the commands never answer, which the acquire's parser
// calls unexpected), or {code, number}. `undo`: the request's SET took the
// key although the answer is not a grant (the node rules refuse, or the
// answer could not be read), so the caller releases the key again.
struct SetAcquireAnswer {
  const redisReply* passed = nullptr;
  ReplyCode code = ReplyCode::refused;
  long long number = 0;
  bool undo = false;
};

// Whether `exec`, EXEC's answer, answers a transaction of `requests`
// requests: an array of the marker's EXISTS, the recovering key's PTTL and
// one SET answer per request.
[[nodiscard]] bool answers_set_acquire(const redisReply& exec, std::size_t requests) noexcept;

// Request `request`'s answer (answers_set_acquire(exec, ...) must hold),
// `defence` its amnesia-defence flag, by the acquire script's rules: the
// node rules first (with the defence on, no marker → {unmarked, 0}; a
// recovering key → {recovering, its PTTL}), then the SET: taken → {done,
// 0}, not taken → {refused, -1} (the holder's PTTL is not known).
[[nodiscard]] SetAcquireAnswer set_acquire_answer(const redisReply& exec, std::size_t request,
                                                  bool defence) noexcept;

// The transaction form of acquire_set (transport/script.hpp): `MULTI;
// EXISTS marker; PTTL recovering; SET key value NX PX ttl (per request);
// EXEC`, each request's answer by set_acquire_answer, and a key its SET
// took where the answer is not a grant (or where the transaction failed as
// a whole) released again by the release script, kept for the key's TTL.
[[nodiscard]] const TransactionForm& set_acquire_form();

}  // namespace redlock::detail
