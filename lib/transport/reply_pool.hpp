// hiredis reply objects for the node connections' readers, with integer
// replies (the answer to every extend and release, alone or as an element
// of a batched call's answer) kept for reuse instead of going back to the
// allocator: with thousands of guards renewing they were five allocations
// and frees per renewal. One pool per thread; replies live on the loop
// thread. Every other type is hiredis's own.
#pragma once

struct redisReply;
struct redisReplyObjectFunctions;

namespace redlock::detail {

// The reply constructors to give redisReaderCreateWithFunctions().
[[nodiscard]] redisReplyObjectFunctions* pooled_reply_functions();
// Frees a top-level reply made by such a reader (pooled integers, it or its
// elements, go back to the pool).
void free_reply(redisReply* reply) noexcept;

}  // namespace redlock::detail
