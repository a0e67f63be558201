#include "scripts/kind_scripts.hpp"

namespace redlock::detail {

// Every command runs under redis.pcall, and an error is the answer; a
// failure after the first write undoes what the call wrote, so a node
// grants all of a request or nothing of it.

const std::string_view kAcquireAllBody = R"lua(
local n = #KEYS - 3
if n < 1 or #ARGV ~= 4 + n then
  return redis.error_reply('ERR acquire_all: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local refused = refusal(ARGV[3])
if refused then return refused end
-- SET NX each key in turn; the first one held elsewhere undoes the ones
-- set before it (a free set, the common case, costs no extra command).
local function undo(upto)
  for j = 1, upto do redis.pcall('DEL', KEYS[3 + j]) end
end
local highest, highest_text = -1, '0'
for i = 1, n do
  local key = KEYS[3 + i]
  local granted = redis.pcall('SET', key, ARGV[1], 'NX', 'PX', ARGV[2])
  if not granted then granted = writer_waits(key, ARGV[1], ARGV[2]) end
  if failed(granted) then
    undo(i - 1)
    return granted
  end
  if not granted then
    undo(i - 1)
    local left = redis.pcall('PTTL', key)
    if failed(left) then return left end
    return {0, left}
  end
  if ARGV[4] == '1' then
    local counter = redis.pcall('HGET', KEYS[3], ARGV[4 + i])
    if failed(counter) then
      undo(i)
      return counter
    end
    counter = counter or '0'
    local value = tonumber(counter)
    if value == nil then
      undo(i)
      return {err = 'ERR acquire_all: a fence counter that is not a number'}
    end
    if value > highest then highest, highest_text = value, counter end
  end
end
return {1, highest_text}
)lua";

const std::string_view kExtendAllBody = R"lua(
local function failed(reply)
  return type(reply) == 'table' and reply.err ~= nil
end
if #KEYS < 1 or #ARGV ~= 2 then
  return redis.error_reply('ERR extend_all: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
for i = 1, #KEYS do
  local held = redis.pcall('GET', KEYS[i])
  if failed(held) then return readers_or(KEYS[i], held) end
  if held ~= ARGV[1] then return 0 end
end
for i = 1, #KEYS do
  local extended = redis.pcall('PEXPIRE', KEYS[i], ARGV[2])
  if failed(extended) then return extended end
end
return 1
)lua";

const std::string_view kReleaseAllBody = R"lua(
local function failed(reply)
  return type(reply) == 'table' and reply.err ~= nil
end
if #KEYS < 3 or #ARGV ~= 1 + 2 * (#KEYS - 2) then
  return redis.error_reply('ERR release_all: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local doomed, released = {}, {}
for i = 1, #KEYS - 2 do
  local key = KEYS[2 + i]
  local held = redis.pcall('GET', key)
  if failed(held) then return readers_or(key, held) end
  if held == ARGV[1] then
    doomed[#doomed + 1] = key
    released[#released + 1] = i
  end
end
if #doomed == 0 then return 0 end
local deleted = redis.pcall('DEL', unpack(doomed))
if failed(deleted) then return deleted end
-- Each member's fair line is served as the plain release serves it (its
-- first waiter's claim granted in this call, so that no newcomer finds
-- the key free in between): a set that waited for its members in their
-- lines, or took them at once, hands each member on to that member's line.
local freed = {}
for _, i in ipairs(released) do freed[#freed + 1] = {i, KEYS[2 + i], ARGV[2 * i], ARGV[1]} end
local served = serve_freed(freed, KEYS[1], KEYS[2])
for _, i in ipairs(released) do
  local channel = ARGV[2 * i]
  if channel ~= '' then
    if not served[i] then redis.pcall('PUBLISH', channel, ARGV[1]) end
    if served[i] ~= 2 then name_next(ARGV[2 * i + 1], ARGV[1]) end
  end
end
return 1
)lua";

const std::string_view kAdoptAllBody = R"lua(
if #KEYS < 3 or #ARGV ~= 1 + #KEYS then
  return redis.error_reply('ERR adopt_all: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local ttl = tonumber(ARGV[2])
if not ttl or ttl <= 0 then return {err = 'ERR adopt_all: a ttl that is not a positive number'} end
local free = false
for i = 3, #KEYS do
  local held = redis.pcall('GET', KEYS[i])
  if failed(held) then return readers_or(KEYS[i], held) end
  if held == false then
    free = true
  elseif held ~= ARGV[1 + i] and held ~= ARGV[1] then
    return 0
  end
end
-- A free member is taken as an acquire takes it: only under the node rules.
if free and refusal(ARGV[3]) then return 0 end
for i = 3, #KEYS do
  local set = redis.pcall('SET', KEYS[i], ARGV[1], 'PX', ttl)
  if failed(set) then return set end
end
return 1
)lua";

const std::string_view kFenceAllBody = R"lua(
if #KEYS ~= 3 or #ARGV < 3 then
  return redis.error_reply('ERR fence_all: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local refused = refusal(ARGV[1]) or unmerged(KEYS[3])
if refused then return refused end
local proposed = tonumber(ARGV[2])
if proposed == nil then
  return {err = 'ERR fence_all: a token that is not a number'}
end
local highest, highest_text = -1, '0'
for i = 3, #ARGV do
  local raw = redis.pcall('HGET', KEYS[3], ARGV[i])
  if failed(raw) then return raw end
  raw = raw or '0'
  local current = tonumber(raw)
  if current == nil then
    return {err = 'ERR fence_all: a counter that is not a number'}
  end
  if current >= proposed and current > highest then highest, highest_text = current, raw end
end
if highest >= 0 then return {0, highest_text} end
for i = 3, #ARGV do
  local stored = redis.pcall('HSET', KEYS[3], ARGV[i], ARGV[2])
  if failed(stored) then return stored end
end
return {1, ARGV[2]}
)lua";

const std::string_view kPermitAcquireBody = R"lua(
if #KEYS ~= 4 or #ARGV ~= 7 then
  return redis.error_reply('ERR permit_acquire: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local refused = refusal(ARGV[3])
if refused then return refused end
local permits, first, ttl = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[2])
local recorded = redis.pcall('GET', KEYS[4])
if failed(recorded) then return recorded end
if recorded and recorded ~= ARGV[4] then
  -- Another count is recorded: refused while a permit of either count is
  -- held, replaced once none is.
  local span = tonumber(recorded) or 0
  if span < permits then span = permits end
  if span > 1024 then return {4, recorded} end
  for j = 0, span - 1 do
    local held = redis.pcall('EXISTS', ARGV[6] .. j)
    if failed(held) then return held end
    if held == 1 then return {4, recorded} end
  end
end
for step = 0, permits - 1 do
  local permit = (first + step) % permits
  local key = ARGV[6] .. permit
  local granted = redis.pcall('SET', key, ARGV[1], 'NX', 'PX', ARGV[2])
  if failed(granted) then return granted end
  if granted then
    -- The count outlives every permit: it is kept for twice the ttl, and
    -- renewed only once less than a ttl is left (not on every grant).
    local kept
    if recorded ~= ARGV[4] then
      kept = redis.pcall('SET', KEYS[4], ARGV[4], 'PX', 2 * ttl)
    else
      local left = redis.pcall('PTTL', KEYS[4])
      if failed(left) then
        kept = left
      elseif left >= 0 and left < ttl then
        kept = redis.pcall('PEXPIRE', KEYS[4], 2 * ttl)
      end
    end
    if failed(kept) then
      redis.pcall('DEL', key)
      return kept
    end
    local counter = '0'
    if ARGV[7] ~= '' then
      counter = redis.pcall('HGET', KEYS[3], ARGV[7] .. permit)
      if failed(counter) then
        redis.pcall('DEL', key)
        return counter
      end
      counter = counter or '0'
    end
    return {1, counter, permit}
  end
end
local soonest = -1
for j = 0, permits - 1 do
  local left = redis.pcall('PTTL', ARGV[6] .. j)
  if not failed(left) and left >= 0 and (soonest < 0 or left < soonest) then soonest = left end
end
return {0, soonest}
)lua";

const std::string_view kPermitExtendBody = R"lua(
local function failed(reply)
  return type(reply) == 'table' and reply.err ~= nil
end
if #KEYS ~= 2 or #ARGV ~= 3 then
  return redis.error_reply('ERR permit_extend: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local held = redis.pcall('GET', KEYS[1])
if failed(held) then return held end
if held ~= ARGV[1] then return 0 end
local extended = redis.pcall('PEXPIRE', KEYS[1], ARGV[2])
if failed(extended) then return extended end
local left = redis.pcall('PTTL', KEYS[2])
if failed(left) then return left end
local ttl = tonumber(ARGV[2])
local kept
if left == -2 then
  kept = redis.pcall('SET', KEYS[2], ARGV[3], 'PX', 2 * ttl)
elseif left >= 0 and left < ttl then
  kept = redis.pcall('PEXPIRE', KEYS[2], 2 * ttl)
end
if failed(kept) then return kept end
return 1
)lua";

const std::string_view kInspectBody = R"lua(
local function failed(reply)
  return type(reply) == 'table' and reply.err ~= nil
end
local function readers(key, field)
  -- A read-write lock's readers: each live one's value and ms left (at
  -- most 1024, the latest deadlines first).
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local left = redis.pcall('PTTL', key)
  if failed(left) then return left end
  local counter = redis.pcall('HGET', KEYS[2], field)
  if failed(counter) then return counter end
  local members = redis.pcall('ZREVRANGEBYSCORE', key, '+inf', '(' .. now, 'WITHSCORES',
                              'LIMIT', 0, 1025)
  if failed(members) then return members end
  local out = {2, '', left, counter or '0'}
  for i = 1, #members, 2 do
    if members[i] ~= 'writer-waiting' and #out < 4 + 2 * 1024 then
      out[#out + 1] = members[i]
      out[#out + 1] = tonumber(members[i + 1]) - now
    end
  end
  return out
end
local function read(key, field)
  local value = redis.pcall('GET', key)
  if failed(value) then
    local kind = redis.pcall('TYPE', key)
    if not failed(kind) and kind.ok == 'zset' then return readers(key, field) end
    return value
  end
  local left = redis.pcall('PTTL', key)
  if failed(left) then return left end
  local counter = redis.pcall('HGET', KEYS[2], field)
  if failed(counter) then return counter end
  if value then return {1, value, left, counter or '0'} end
  return {0, '', left, counter or '0'}
end
if #KEYS ~= 2 then
  return redis.error_reply('ERR inspect: ' .. #KEYS .. ' keys')
end
if ARGV[1] == 'lock' and #ARGV == 2 then
  return read(KEYS[1], ARGV[2])
end
if ARGV[1] ~= 'permits' or #ARGV ~= 4 then
  return redis.error_reply('ERR inspect: ' .. #ARGV .. ' arguments')
end
local recorded = redis.pcall('GET', KEYS[1])
if failed(recorded) then return recorded end
local span = tonumber(ARGV[4]) or 0
local count = tonumber(recorded or '') or 0
if count > span then span = count end
if span > 1024 then span = 1024 end
local out = {recorded or ''}
for j = 0, span - 1 do
  local one = read(ARGV[2] .. j, ARGV[3] .. j)
  if failed(one) then return one end
  for _, item in ipairs(one) do out[#out + 1] = item end
end
return out
)lua";

}  // namespace redlock::detail
