#include "scripts/reader_scripts.hpp"

namespace redlock::detail {

const std::string_view kReaderRules = R"lua(
local function failed(reply)
  return type(reply) == 'table' and reply.err ~= nil
end
local WRITER_WAITING = 'writer-waiting'
local function node_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function readers_deadline(key)
  local top = redis.pcall('ZREVRANGE', key, 0, 1, 'WITHSCORES')
  if failed(top) then return nil end
  for i = 1, #top, 2 do
    if top[i] ~= WRITER_WAITING then return tonumber(top[i + 1]) end
  end
  return nil
end
local function held_by_readers(key)
  local kind = redis.pcall('TYPE', key)
  return not failed(kind) and kind.ok == 'zset'
end
local function writer_waits(key, value, ttl, reserve)
  local kind = redis.pcall('TYPE', key)
  if failed(kind) then return false end
  if kind.ok == 'zset' then
    if reserve then
      redis.pcall('ZADD', key, 'GT', node_ms() + tonumber(ttl), WRITER_WAITING)
    end
    return false
  end
  if kind.ok == 'string' and redis.pcall('GET', key) == WRITER_WAITING then
    return redis.pcall('SET', key, value, 'XX', 'PX', ttl)
  end
  return false
end
local function writer_grant(key, value, ttl, fence_hash, field, try_only)
  local granted = redis.pcall('SET', key, value, 'NX', 'PX', ttl)
  if not granted then granted = writer_waits(key, value, ttl, not try_only) end
  if failed(granted) then return granted end
  if not granted then
    local left = redis.pcall('PTTL', key)
    if failed(left) then return left end
    return {0, left}
  end
  if field == '' then return {1, '0'} end
  local counter = redis.pcall('HGET', fence_hash, field)
  if failed(counter) then return counter end
  return {1, counter or '0'}
end
local function readers_gone(key, now)
  local waiting = redis.pcall('ZSCORE', key, WRITER_WAITING)
  if not failed(waiting) and waiting and tonumber(waiting) > now then
    return redis.pcall('SET', key, WRITER_WAITING, 'PX',
                       math.max(1, math.floor(tonumber(waiting) - now)))
  end
  return redis.pcall('DEL', key)
end
)lua";

const std::string_view kReadersOr = R"lua(
local function readers_or(key, failure)
  local kind = redis.pcall('TYPE', key)
  if type(kind) == 'table' and kind.ok == 'zset' then return 0 end
  return failure
end
)lua";

const std::string_view kReadAcquireBody = R"lua(
if #KEYS ~= 4 or #ARGV ~= 4 then
  return redis.error_reply('ERR read_acquire: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local refused = refusal(ARGV[4])
if refused then return refused end
local key, value = KEYS[4], ARGV[1]
local kind = redis.pcall('TYPE', key)
if failed(kind) then return kind end
kind = kind.ok
if kind == 'string' then
  local left = redis.pcall('PTTL', key)
  if failed(left) then return left end
  return {0, left}
end
if kind ~= 'none' and kind ~= 'zset' then
  return {err = 'WRONGTYPE read_acquire: the lock key holds a ' .. kind}
end
local now = node_ms()
if kind == 'zset' then
  -- Readers past their deadline (and a waiting writer past its own) go
  -- first; a set left without readers goes with them.
  local purged = redis.pcall('ZREMRANGEBYSCORE', key, '-inf', now)
  if failed(purged) then return purged end
  local waiting = redis.pcall('ZSCORE', key, WRITER_WAITING)
  if failed(waiting) then return waiting end
  if not readers_deadline(key) then
    readers_gone(key, now)
    if waiting then return {0, tonumber(waiting) - now} end
  elseif waiting then
    return {0, tonumber(waiting) - now}
  end
end
local added = redis.pcall('ZADD', key, now + tonumber(ARGV[2]), value)
if failed(added) then return added end
local expiry = redis.pcall('PEXPIREAT', key, readers_deadline(key))
if failed(expiry) then
  redis.pcall('ZREM', key, value)
  return expiry
end
if ARGV[3] == '' then return {1, '0'} end
local counter = redis.pcall('HGET', KEYS[3], ARGV[3])
if failed(counter) then
  redis.pcall('ZREM', key, value)
  return counter
end
return {1, counter or '0'}
)lua";

const std::string_view kReadExtendBody = R"lua(
if #KEYS ~= 1 or #ARGV ~= 2 then
  return redis.error_reply('ERR read_extend: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local key, value = KEYS[1], ARGV[1]
if not held_by_readers(key) then return 0 end
local now = node_ms()
local score = redis.pcall('ZSCORE', key, value)
if failed(score) then return score end
if not score or tonumber(score) <= now then return 0 end
local moved = redis.pcall('ZADD', key, 'XX', now + tonumber(ARGV[2]), value)
if failed(moved) then return moved end
local expiry = redis.pcall('PEXPIREAT', key, readers_deadline(key))
if failed(expiry) then return expiry end
return 1
)lua";

const std::string_view kReadReleaseBody = R"lua(
if #KEYS ~= 1 or #ARGV ~= 3 then
  return redis.error_reply('ERR read_release: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local key, value = KEYS[1], ARGV[1]
if not held_by_readers(key) then return 0 end
local now = node_ms()
local score = redis.pcall('ZSCORE', key, value)
if failed(score) then return score end
if not score then return 0 end
local removed = redis.pcall('ZREM', key, value)
if failed(removed) then return removed end
redis.pcall('ZREMRANGEBYSCORE', key, '-inf', now)
local deadline = readers_deadline(key)
if deadline then
  redis.pcall('PEXPIREAT', key, deadline)
else
  local deleted = readers_gone(key, now)
  if failed(deleted) then return deleted end
  if ARGV[2] ~= '' then
    local published = redis.pcall('PUBLISH', ARGV[2], value)
    if failed(published) then return published end
    name_next(ARGV[3], value)
  end
end
if tonumber(score) > now then return 1 end
return 0
)lua";

}  // namespace redlock::detail
