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
local function drop_lapsed(queue, due, claims, now)
  local gone = redis.pcall('ZRANGEBYSCORE', due, '-inf', now)
  if type(gone) == 'table' and gone.err then return gone end
  if #gone > 0 then
    redis.pcall('ZREM', queue, unpack(gone))
    redis.pcall('ZREM', due, unpack(gone))
    redis.pcall('HDEL', claims, unpack(gone))
  end
end
local function first_place(queue)
  local head = redis.pcall('ZRANGE', queue, 0, 0)
  if type(head) ~= 'table' or head.err then return nil end
  return head[1]
end
local function read_claim(claim)
  if type(claim) ~= 'string' then return nil end
  local a = string.find(claim, ':', 1, true)
  local b = a and string.find(claim, ':', a + 1, true)
  local c = b and string.find(claim, ':', b + 1, true)
  if not c or c >= #claim then return nil end
  local ttl = tonumber(string.sub(claim, 1, a - 1))
  if not ttl or ttl <= 0 then return nil end
  return ttl, string.sub(claim, a + 1, b - 1), string.sub(claim, b + 1, c - 1), string.sub(claim, c + 1)
end
-- The node rules of an act on another client's behalf (a draw, a grant;
-- as ticket_draw's and the acquire's): none while the node waits out its
-- recovery delay, nor, with the defence on, without its marker.
local function rules_allow_on(marker, recovering, defence)
  if defence == '1' and redis.pcall('EXISTS', marker) ~= 1 then return false end
  return redis.pcall('PTTL', recovering) == -2
end
-- Serves the first live waiter of a fair queue, the lock `key` just freed
-- of `value`: its claim, if it left one, is granted (the key set to its
-- value, as its own SET NX would) and it is told so, "<number>+<claim
-- tag>:<its place's ticket> <released value>"; else it is named,
-- "<number> <released value>". Answers 2 for a grant heard, 1 for a name
-- heard, false when no one was served (a grant no one hears is taken
-- back).
local function serve_queue(key, queue, due, claims, marker, recovering, value)
  drop_lapsed(queue, due, claims, node_ms())
  local first = redis.pcall('ZRANGE', queue, 0, 0, 'WITHSCORES')
  if type(first) ~= 'table' or first.err or #first < 2 then return false end
  local head = first[1]
  local space = string.find(head, ' ', 1, true)
  if not space then return false end
  local number = string.sub(head, space + 1)
  local message = number .. ' ' .. value
  local granted = false
  local claim = redis.pcall('HGET', claims, head)
  local ttl, tag, defence, theirs = read_claim(claim)
  if ttl then
    redis.pcall('HDEL', claims, head)
    if rules_allow_on(marker, recovering, defence) and
        redis.pcall('SET', key, theirs, 'NX', 'PX', ttl) then
      granted = true
      message = number .. '+' .. tag .. ':' .. first[2] .. ' ' .. value
    end
  end
  local heard = redis.pcall('PUBLISH', string.sub(head, 1, space - 1), message)
  if type(heard) == 'number' and heard > 0 then
    if granted then return 2 end
    return 1
  end
  if granted then redis.pcall('DEL', key) end
  return false
end
-- Serves the fair line of each key a release just freed: `freed` lists
-- {index, key, release channel, released value}; a key whose channel is a
-- lock's ("<prefix>released:<resource>") has its line's keys named from
-- the node marker's prefix and that resource. Answers serve_queue's answer
-- by index (none: not served). One EXISTS over the lines first, so a
-- release with no line pays one call.
local function serve_freed(freed, marker, recovering)
  local prefix = string.sub(marker, 1, #marker - 4)
  local channels = prefix .. 'released:'
  local served, fair, queues = {}, {}, {}
  for _, entry in ipairs(freed) do
    local channel = entry[3]
    if #channel > #channels and string.sub(channel, 1, #channels) == channels then
      fair[#fair + 1] = entry
      queues[#queues + 1] = prefix .. 'queue:' .. string.sub(channel, #channels + 1)
    end
  end
  if #fair == 0 then return served end
  local queued = redis.pcall('EXISTS', unpack(queues))
  if type(queued) == 'number' and queued == 0 then return served end
  for j, entry in ipairs(fair) do
    local resource = string.sub(entry[3], #channels + 1)
    served[entry[1]] = serve_queue(entry[2], queues[j], prefix .. 'queue-due:' .. resource,
                                   prefix .. 'queue-claim:' .. resource, marker, recovering,
                                   entry[4])
  end
  return served
end
)lua";

const std::string_view kFairAcquireBody = R"lua(
if #KEYS ~= 7 or #ARGV ~= 8 then
  return redis.error_reply('ERR fair_acquire: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local refused = refusal(ARGV[4])
if refused then return refused end
local key, queue, due, id = KEYS[4], KEYS[5], KEYS[6], ARGV[5]
local now = node_ms()
local unread = drop_lapsed(queue, due, KEYS[7], now)
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
if ARGV[8] ~= '' and type(answer) == 'table' and answer[1] == 0 and not unmerged(KEYS[3]) then
  local drawn = redis.pcall('HINCRBY', KEYS[3], ARGV[8], 1)
  if type(drawn) == 'number' then answer[3] = drawn end
end
return answer
)lua";

const std::string_view kTicketDrawBody = R"lua(
if #KEYS ~= 3 or #ARGV ~= 2 then
  return redis.error_reply('ERR ticket_draw: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local refused = refusal(ARGV[2]) or unmerged(KEYS[3])
if refused then return refused end
local drawn = redis.pcall('HINCRBY', KEYS[3], ARGV[1], 1)
if failed(drawn) then return drawn end
return {1, drawn}
)lua";

const std::string_view kTicketEnqueueBody = R"lua(
if #KEYS ~= 7 or #ARGV ~= 6 then
  return redis.error_reply('ERR ticket_enqueue: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local refused = refusal(ARGV[5]) or unmerged(KEYS[3])
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
local entry_ttl = tonumber(ARGV[4])
local unkept = keep_place(KEYS[4], KEYS[5], ARGV[2], ARGV[3], now, entry_ttl)
if unkept then return unkept end
drop_lapsed(KEYS[4], KEYS[5], KEYS[7], now)
local ttl, _, _, mine = read_claim(ARGV[6])
local state = 0
local held = redis.pcall('GET', KEYS[6])
if first_place(KEYS[4]) == ARGV[3] then
  if ttl and held == mine then
    state = 2
  elseif ttl then
    -- The writer's grant: a key held by readers is marked (new readers
    -- wait), and taken once the last reader left it to the mark.
    local got = writer_grant(KEYS[6], mine, ttl, KEYS[3], '')
    if type(got) == 'table' and got[1] == 1 then
      state = 2
    elseif held == false then
      state = 1
    else
      state = 3
    end
  elseif held == false then
    state = 1
  else
    state = 3
  end
elseif ttl and held == mine then
  -- Granted here before an earlier ticket's place reached this node (or
  -- its grant's message was lost): the waiter gives it back.
  state = 4
end
if ttl and state ~= 2 then
  redis.pcall('HSET', KEYS[7], ARGV[3], ARGV[6])
  redis.pcall('PEXPIRE', KEYS[7], 2 * entry_ttl)
end
return {1, ARGV[2], state}
)lua";

const std::string_view kFairReleaseBody = R"lua(
if #KEYS ~= 7 or #ARGV ~= 9 then
  return redis.error_reply('ERR fair_release: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local key, queue, due, claims = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local function rules_allow(defence) return rules_allow_on(KEYS[5], KEYS[6], defence) end
local function serve_first(value)
  return serve_queue(key, queue, due, claims, KEYS[5], KEYS[6], value)
end
if ARGV[3] ~= '' then
  redis.pcall('ZREM', queue, ARGV[3])
  redis.pcall('ZREM', due, ARGV[3])
end
if ARGV[7] ~= '' then
  local _, _, _, claimed = read_claim(redis.pcall('HGET', claims, ARGV[7]))
  if claimed == ARGV[1] then redis.pcall('HDEL', claims, ARGV[7]) end
end
-- The releaser's next ticket (with a counter field), drawn as ticket_draw
-- would and under its node rules, and with a pre-claim its next place
-- recorded at that count with that claim (its next acquire adopts both):
-- {deleted, counter, 1 when that place is first and the key free, else 0}.
-- A node draws whether or not it held the value (one whose grant of it
-- had not come yet, or came from another release), so that the nodes'
-- counters keep counting the same draws. The pre-claimed place is due a
-- quarter of the entry TTL from now (its lease; the line itself lives as
-- long as for any place): a releaser that stops right after its release
-- can neither withdraw it nor take a grant of it, and a release that comes
-- after the lease serves the waiter behind it. The acquire that adopts
-- the pre-claim renews the place within that lease.
local function draw_next(deleted)
  if ARGV[5] == '' or not rules_allow(ARGV[6]) then return deleted end
  -- (no draw on a node awaiting its second merge: the remerge script)
  if redis.pcall('HGET', KEYS[7], '') then return deleted end
  local drawn = redis.pcall('HINCRBY', KEYS[7], ARGV[5], 1)
  if type(drawn) ~= 'number' then return deleted end
  local colon = string.find(ARGV[9], ':', 1, true)
  local entry_ttl = colon and tonumber(string.sub(ARGV[9], 1, colon - 1))
  if ARGV[8] == '' or not entry_ttl or entry_ttl <= 0 or not read_claim(ARGV[8]) then
    return {deleted, drawn}
  end
  local id = string.sub(ARGV[9], colon + 1)
  local now = node_ms()
  if keep_place(queue, due, drawn, id, now, entry_ttl) then return {deleted, drawn} end
  redis.pcall('ZADD', due, now + math.floor(entry_ttl / 4), id)
  redis.pcall('HSET', claims, id, ARGV[8])
  redis.pcall('PEXPIRE', claims, 2 * entry_ttl)
  if first_place(queue) == id and redis.pcall('EXISTS', key) == 0 then return {deleted, drawn, 1} end
  return {deleted, drawn, 0}
end
local held = redis.pcall('GET', key)
if type(held) == 'table' and held.err then return readers_or(key, held) end
if held ~= ARGV[1] then return draw_next(0) end
local deleted = redis.pcall('DEL', key)
if type(deleted) == 'table' and deleted.err then return deleted end
if ARGV[2] ~= '' then
  local served = serve_first(ARGV[1])
  if not served then
    local published = redis.pcall('PUBLISH', ARGV[2], ARGV[1])
    if type(published) == 'table' and published.err then return published end
  end
  if served ~= 2 then name_next(ARGV[4], ARGV[1]) end
end
return draw_next(1)
)lua";

const std::string_view kQueueLeaveBody = R"lua(
if #KEYS < 1 or #ARGV < 1 or #ARGV > 2 then
  return redis.error_reply('ERR queue_leave: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local hashes = tonumber(ARGV[2] or '0') or 0
for i, key in ipairs(KEYS) do
  if i > #KEYS - hashes then
    redis.pcall('HDEL', key, ARGV[1])
  else
    redis.pcall('ZREM', key, ARGV[1])
  end
end
return 1
)lua";

}  // namespace redlock::detail
