// hiredis reply objects for the node connections' readers, with top-level
// integer replies (the answer to every extend and release) kept for reuse
// instead of going back to the allocator: with thousands of guards renewing
// they were five allocations and frees per renewal. One pool per thread;
// replies live on the loop thread. Nested replies and every other type are
// hiredis's own, except that an array may declare at most
// kMaxReplyArrayElements elements.
#pragma once

struct redisReply;
struct redisReplyObjectFunctions;

namespace redlock::detail {

// The most elements one reply array may declare. hiredis allocates 8 bytes
// per declared element when the header ("*2147483647") arrives, before any
// element does, so a node, or anything else on the connection, could make
// the client ask for 16 GiB with 13 bytes. The largest answer the library
// asks for is the probe's fence hash (two elements per fenced resource;
// docs/engine.md): 2^24 leaves room for 8 million resources. A reader
// refuses a larger header as out of memory, which the node connection
// reports as a protocol error and resets.
inline constexpr int kMaxReplyArrayElements = 1 << 24;

// The reply constructors to give redisReaderCreateWithFunctions().
[[nodiscard]] redisReplyObjectFunctions* pooled_reply_functions();
// Frees a top-level reply made by such a reader (a pooled integer goes back
// to the pool).
void free_reply(redisReply* reply) noexcept;

}  // namespace redlock::detail
