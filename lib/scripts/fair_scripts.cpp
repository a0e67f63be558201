#include "scripts/fair_scripts.hpp"

namespace redlock::detail {

const std::string_view kFairQueue = R"lua(
local function keep_place(queue, due, ticket, id, now, ttl)
  local queued = redis.pcall('ZADD', queue, ticket, id)
  if type(queued) == 'table' and queued.err then return queued end
  redis.pcall('ZADD', due, now + ttl, id)
  redis.pcall('PEXPIRE', queue, 2 * ttl)
  redis.pcall('PEXPIRE', due, 2 * ttl)
end
local function drop_lapsed(queue, due, now)
  local gone = redis.pcall('ZRANGEBYSCORE', due, '-inf', now)
  if type(gone) == 'table' and gone.err then return gone end
  if #gone > 0 then
    redis.pcall('ZREM', queue, unpack(gone))
    redis.pcall('ZREM', due, unpack(gone))
  end
end
local function first_place(queue)
  local head = redis.pcall('ZRANGE', queue, 0, 0)
  if type(head) ~= 'table' or head.err then return nil end
  return head[1]
end
)lua";

const std::string_view kFairAcquireBody = R"lua(
if #KEYS ~= 6 or #ARGV ~= 8 then
  return redis.error_reply('ERR fair_acquire: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local refused = refusal(ARGV[4])
if refused then return refused end
local key, queue, due, id = KEYS[4], KEYS[5], KEYS[6], ARGV[5]
local now = node_ms()
local unread = drop_lapsed(queue, due, now)
if unread then return unread end
if ARGV[6] ~= '' then
  local unkept = keep_place(queue, due, ARGV[6], id, now, tonumber(ARGV[7]))
  if unkept then return unkept end
end
local head = redis.pcall('ZRANGE', queue, 0, 0)
if failed(head) then return head end
local answer
if head[1] and head[1] ~= id then
  local left = redis.pcall('PTTL', key)
  if failed(left) then return left end
  answer = {0, left}
else
  answer = writer_grant(key, ARGV[1], ARGV[2], KEYS[3], ARGV[3])
end
if ARGV[8] ~= '' and type(answer) == 'table' and answer[1] == 0 then
  local drawn = redis.pcall('HINCRBY', KEYS[3], ARGV[8], 1)
  if type(drawn) == 'number' then answer[3] = drawn end
end
return answer
)lua";

const std::string_view kTicketDrawBody = R"lua(
if #KEYS ~= 3 or #ARGV ~= 2 then
  return redis.error_reply('ERR ticket_draw: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local refused = refusal(ARGV[2])
if refused then return refused end
local drawn = redis.pcall('HINCRBY', KEYS[3], ARGV[1], 1)
if failed(drawn) then return drawn end
return {1, drawn}
)lua";

const std::string_view kTicketEnqueueBody = R"lua(
if #KEYS ~= 6 or #ARGV ~= 5 then
  return redis.error_reply('ERR ticket_enqueue: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local refused = refusal(ARGV[5])
if refused then return refused end
local ticket = tonumber(ARGV[2])
local current = redis.pcall('HGET', KEYS[3], ARGV[1])
if failed(current) then return current end
if ticket == nil or tonumber(current or '0') == nil then
  return {err = 'ERR ticket_enqueue: a ticket or counter that is not a number'}
end
if tonumber(current or '0') < ticket then
  local raised = redis.pcall('HSET', KEYS[3], ARGV[1], ARGV[2])
  if failed(raised) then return raised end
end
local now = node_ms()
local unkept = keep_place(KEYS[4], KEYS[5], ARGV[2], ARGV[3], now, tonumber(ARGV[4]))
if unkept then return unkept end
drop_lapsed(KEYS[4], KEYS[5], now)
local first_and_free = 0
if first_place(KEYS[4]) == ARGV[3] and redis.pcall('EXISTS', KEYS[6]) == 0 then
  first_and_free = 1
end
return {1, ARGV[2], first_and_free}
)lua";

const std::string_view kFairReleaseBody = R"lua(
if not ((#KEYS == 3 and #ARGV == 4) or (#KEYS == 6 and #ARGV == 6)) then
  return redis.error_reply('ERR fair_release: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
-- The node rules of a draw (as ticket_draw's): none while the node waits
-- out its recovery delay, nor, with the defence on, without its marker.
local function may_draw(defence)
  if defence == '1' and redis.pcall('EXISTS', KEYS[4]) ~= 1 then return false end
  return redis.pcall('PTTL', KEYS[5]) == -2
end
local function name_first(queue, due, value)
  drop_lapsed(queue, due, node_ms())
  local head = first_place(queue)
  if not head then return false end
  local space = string.find(head, ' ', 1, true)
  if not space then return false end
  local named = redis.pcall('PUBLISH', string.sub(head, 1, space - 1),
                            string.sub(head, space + 1) .. ' ' .. value)
  return type(named) == 'number' and named > 0
end
redis.pcall('ZREM', KEYS[2], ARGV[3])
redis.pcall('ZREM', KEYS[3], ARGV[3])
local held = redis.pcall('GET', KEYS[1])
if type(held) == 'table' and held.err then return readers_or(KEYS[1], held) end
if held ~= ARGV[1] then return 0 end
local deleted = redis.pcall('DEL', KEYS[1])
if type(deleted) == 'table' and deleted.err then return deleted end
if ARGV[2] ~= '' then
  if not name_first(KEYS[2], KEYS[3], ARGV[1]) then
    local published = redis.pcall('PUBLISH', ARGV[2], ARGV[1])
    if type(published) == 'table' and published.err then return published end
  end
  name_next(ARGV[4], ARGV[1])
end
if #ARGV == 6 and ARGV[5] ~= '' and may_draw(ARGV[6]) then
  local drawn = redis.pcall('HINCRBY', KEYS[6], ARGV[5], 1)
  if type(drawn) == 'number' then return {1, drawn} end
end
return 1
)lua";

const std::string_view kQueueLeaveBody = R"lua(
if #KEYS < 1 or #ARGV ~= 1 then
  return redis.error_reply('ERR queue_leave: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
for _, key in ipairs(KEYS) do redis.pcall('ZREM', key, ARGV[1]) end
return 1
)lua";

}  // namespace redlock::detail
