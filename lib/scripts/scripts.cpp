#include "scripts/scripts.hpp"

#include <array>
#include <string>

#include "config/lock_key_pattern.hpp"
#include "scripts/fair_scripts.hpp"
#include "scripts/kind_scripts.hpp"
#include "scripts/reader_scripts.hpp"
#include "scripts/set_acquire.hpp"
#include "scripts/sha1.hpp"

namespace redlock::detail {
namespace {

constexpr std::string_view kProbe = R"lua(
local marked = redis.call('EXISTS', KEYS[1])
local recovering = redis.call('PTTL', KEYS[2])
local has_locks = 0
for _, pattern in ipairs(ARGV) do
  local cursor = '0'
  repeat
    local page = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = page[1]
    if #page[2] > 0 then
      has_locks = 1
      break
    end
  until cursor == '0'
  if has_locks == 1 then break end
end
return {marked, recovering, has_locks, redis.call('HGETALL', KEYS[3])}
)lua";

// The counters' merge of recover and remerge: raises each field of `hash`
// named in ARGV from index `from` on (field, counter pairs) to the given
// counter, never lowers one.
constexpr std::string_view kRaiseCounters = R"lua(
local function raise_counters(hash, from)
  for i = from, #ARGV, 2 do
    local current = tonumber(redis.call('HGET', hash, ARGV[i]) or '0')
    if current < tonumber(ARGV[i + 1]) then
      redis.call('HSET', hash, ARGV[i], ARGV[i + 1])
    end
  end
end
)lua";

// This server's run_id (INFO server): a marker names the server that wrote
// it, so that a replica promoted in its place, which holds a copy of it,
// can be told from it (check_marker).
// An ACL may deny INFO: the marker then names no server (as one written
// before markers named theirs), and the script goes on.
constexpr std::string_view kOwnRunId = R"lua(
local function info_text(section)
  local text = redis.pcall('INFO', section)
  if type(text) == 'string' then return text end
  return ''
end
-- Whether INFO replication's text shows a promotion: second_repl_offset is
-- not -1 on a server that was a replica and took its master's place.
local function shows_promotion(replication)
  local promoted_at = tonumber(string.match(replication, 'second_repl_offset:(%-?%d+)'))
  return promoted_at ~= nil and promoted_at >= 0
end
local function own_run_id()
  return string.match(info_text('server'), 'run_id:(%x+)') or ''
end
-- What a marker this script writes ends with: this server's name, when
-- INFO tells it, after the replication history it was written in.
local function marker_name()
  local id = own_run_id()
  if id == '' then return '' end
  local replid = string.match(info_text('replication'), 'master_replid:(%x+)')
  if not replid then return ' run_id=' .. id end
  return ' replid=' .. replid .. ' run_id=' .. id
end
-- Whether a marker this server wrote (it names its run_id) still stands on
-- it after it showed a promotion: written in its current replication
-- history. One that names no history was written before markers did, and
-- is taken as it was then.
local function own_marker_stands(marker, replication)
  local written_in = string.match(marker, ' replid=(%x+)')
  return not written_in or written_in == string.match(replication, 'master_replid:(%x+)')
end
)lua";

constexpr std::string_view kRecover = R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local named = marker_name()
raise_counters(KEYS[3], 4)
if tonumber(ARGV[1]) > 0 then
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[1])
  -- Awaiting the second merge: the fence hash's empty field (no resource
  -- is empty), lost with the counters if the node restarts again.
  redis.call('HSET', KEYS[3], '', '1')
end
redis.call('SET', KEYS[1], ARGV[2] .. named)
return 1
)lua";

constexpr std::string_view kDeclareNew = R"lua(
local marker = redis.call('GET', KEYS[1])
if marker and string.sub(marker, 1, #ARGV[2]) ~= ARGV[2] then
  return {0, 'marker'}
end
for _, field in ipairs(redis.call('HKEYS', KEYS[3])) do
  if field ~= '' then return {0, 'counters'} end
end
for i = 3, #ARGV do
  local cursor = '0'
  repeat
    local page = redis.call('SCAN', cursor, 'MATCH', ARGV[i], 'COUNT', 1000)
    cursor = page[1]
    if #page[2] > 0 then return {0, 'locks'} end
  until cursor == '0'
end
redis.call('SET', KEYS[1], ARGV[1] .. marker_name())
redis.call('DEL', KEYS[2])
redis.call('HDEL', KEYS[3], '')
return {1, ''}
)lua";

// check_marker: a session's first word on a node (scripts.hpp).
constexpr std::string_view kCheckMarker = R"lua(
local replication = info_text('replication')
if string.match(replication, 'role:slave') then
  return redis.error_reply('READONLY check_marker: this server is a replica')
end
local marker = redis.call('GET', KEYS[1])
if not marker then return 0 end
local own = own_run_id()
if own == '' then return 0 end
local written_by = string.match(marker, ' run_id=(%x+)')
if written_by == own then
  if not shows_promotion(replication) or own_marker_stands(marker, replication) then return 0 end
  redis.call('DEL', KEYS[1])
  return 1
end
if not shows_promotion(replication) then
  if not written_by then
    redis.call('SET', KEYS[1], marker .. marker_name())
  end
  return 0
end
redis.call('DEL', KEYS[1])
return 1
)lua";

// What the per-slot scripts (check_slot_markers, declare_new_slots) share:
// a scan of the server's keys, and the per-slot layout's key names,
// `<prefix>{<tag>}<name>` (key_space.hpp). A key of another shape that a
// glob also matches (a lock key whose resource ends in "}node") is not one.
constexpr std::string_view kSlotKeys = R"lua(
-- Whether found(key) answers true for some key of `pattern` (one SCAN).
local function any_key(pattern, found)
  local cursor = '0'
  repeat
    local page = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = page[1]
    for _, key in ipairs(page[2]) do
      if found(key) then return true end
    end
  until cursor == '0'
  return false
end
-- The glob of every slot's key `name` under `prefix` (its own glob
-- characters escaped).
local function slot_glob(prefix, name)
  return string.gsub(prefix, '[%*%?%[%]\\]', '\\%0') .. '{*}' .. name
end
-- Whether `key` is the key `name` of some slot under `prefix`.
local function slot_key(prefix, key, name)
  local tag = string.sub(key, #prefix + 2, -(#name + 2))
  return string.sub(key, #prefix + 1, #prefix + 1) == '{' and not string.find(tag, '}', 1, true)
end
)lua";

// check_slot_markers (scripts.hpp), over every slot's marker (kSlotKeys).
// The promotion's name is the server's run_id and its replication id, which a
// promotion changes (a replica taking its master's place starts a new
// history); a read or write of the checked key in a slot the server does
// not serve fails (pcall) and the scan runs, as it would without the key.
// A scan that could not read some marker (a key of a slot the server does
// not serve, left by a migration) records nothing, so the next session's
// check scans again; so does a server whose INFO gives no replication id.
constexpr std::string_view kCheckSlotMarkers = R"lua(
if #KEYS ~= 0 or #ARGV ~= 2 then
  return redis.error_reply('ERR check_slot_markers: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local replication = info_text('replication')
if string.match(replication, 'role:slave') then
  return redis.error_reply('READONLY check_slot_markers: this server is a replica')
end
if not shows_promotion(replication) then return 0 end
local own = own_run_id()
if own == '' then return 0 end
local prefix = ARGV[1]
local replid = string.match(replication, 'master_replid:(%x+)')
local promotion = replid and (own .. ' ' .. replid)
local checked_key = prefix .. '{' .. ARGV[2] .. '}checked'
if promotion and redis.pcall('GET', checked_key) == promotion then return 0 end
local unread, deleted = 0, 0
any_key(slot_glob(prefix, 'node'), function(key)
  if not slot_key(prefix, key, 'node') then return false end
  local marker = redis.pcall('GET', key)
  if type(marker) ~= 'string' then
    unread = unread + 1
  elseif string.match(marker, ' run_id=(%x+)') ~= own or
         not own_marker_stands(marker, replication) then
    redis.call('DEL', key)
    deleted = deleted + 1
  end
  return false
end)
if promotion and unread == 0 then redis.pcall('SET', checked_key, promotion) end
return deleted
)lua";

// declare_new_slots (scripts.hpp). The signs of use are declare_new's, in
// every slot (kSlotKeys): a slot's marker other than a first
// initialisation's, a counter in a slot's fence hash, a key of the lock
// or permit globs. A key that cannot be read (a slot the server does not
// serve) counts as use.
// Every listed slot is checked to be the server's own before any is
// written, so a slot moved since the question leaves the server unmarked.
constexpr std::string_view kDeclareNewSlots = R"lua(
if #KEYS ~= 0 or #ARGV < 6 then
  return redis.error_reply('ERR declare_new_slots: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
if string.match(info_text('replication'), 'role:slave') then
  return redis.error_reply('READONLY declare_new_slots: this server is a replica')
end
local prefix, marker, first_init = ARGV[1], ARGV[2], ARGV[3]
local marked, first = 0, 0
any_key(slot_glob(prefix, 'node'), function(key)
  if slot_key(prefix, key, 'node') then
    local value = redis.pcall('GET', key)
    if type(value) == 'string' and string.sub(value, 1, #first_init) == first_init then
      first = 1
    else
      marked = 1
    end
  end
  return false
end)
local counters = any_key(slot_glob(prefix, 'fence'), function(key)
  if not slot_key(prefix, key, 'fence') then return false end
  local fields = redis.pcall('HKEYS', key)
  if type(fields) ~= 'table' or fields.err then return true end
  for _, field in ipairs(fields) do
    if field ~= '' then return true end
  end
  return false
end) and 1 or 0
local function any(key) return true end
local locks = (any_key(ARGV[5], any) or any_key(ARGV[6], any)) and 1 or 0
local done = 0
if ARGV[4] == '1' and marked == 0 and counters == 0 and locks == 0 then
  for i = 7, #ARGV do
    if type(redis.pcall('EXISTS', prefix .. '{' .. ARGV[i] .. '}node')) ~= 'number' then
      return redis.error_reply('ERR declare_new_slots: the slot of tag ' .. ARGV[i] ..
                               ' is not served here (it moved?); nothing was written')
    end
  end
  local named = marker_name()
  for i = 7, #ARGV do
    local slot = prefix .. '{' .. ARGV[i] .. '}'
    redis.call('SET', slot .. 'node', marker .. named)
    redis.call('DEL', slot .. 'recovering')
    redis.call('HDEL', slot .. 'fence', '')
  end
  done = 1
end
return {done, marked, first, counters, locks, own_run_id()}
)lua";

// The second merge of a node recovered with a delay (docs/algorithm.md,
// "The amnesia defence"). KEYS: the recovering key, the fence hash; ARGV:
// field, counter pairs (the field-wise maximum over other nodes, read
// after this node's delay was seen over). Runs only while the node awaits
// it and its delay is over; answers 1 when it merged, else 0.
constexpr std::string_view kRemerge = R"lua(
if not redis.call('HGET', KEYS[2], '') then
  return 0
end
if redis.call('PTTL', KEYS[1]) ~= -2 then
  return 0
end
raise_counters(KEYS[2], 1)
redis.call('HDEL', KEYS[2], '')
return 1
)lua";

// The node's own rules, the opening of the acquire and the fence alike,
// whose calls share these keys first: KEYS[1] the node's identity marker,
// KEYS[2] its recovering key. They run at most once per call (nothing in a
// call changes either key). refusal(defence) is a request's answer when the
// node may not act on it, else false: {3, ms left} while the node is within
// its recovery delay, whatever the request's defence flag (the delay is the
// node's rule, not each client's choice); with the defence on ("1") also
// {2, 0} when the node has no marker; or the error of the command that
// failed. failed(reply) tells a redis.pcall error apart.
constexpr std::string_view kNodeRules = R"lua(
local function failed(reply)
  return type(reply) == 'table' and reply.err ~= nil
end
local unmarked
local recovering
local function refusal(defence)
  if defence == '1' then
    if unmarked == nil then
      local marked = redis.pcall('EXISTS', KEYS[1])
      if failed(marked) then
        unmarked = marked
      elseif marked == 0 then
        unmarked = {2, 0}
      else
        unmarked = false
      end
    end
    if unmarked then return unmarked end
  end
  if recovering == nil then
    local delay = redis.pcall('PTTL', KEYS[2])
    if failed(delay) then
      recovering = delay
    elseif delay ~= -2 then
      recovering = {3, delay}
    else
      recovering = false
    end
  end
  return recovering
end
)lua";

// The counters' rule, after kNodeRules in the scripts that store a token
// or draw a ticket: a node recovered with a delay does neither until its
// counters were merged again (the fence hash's empty field; the `remerge`
// script), since a round in flight at its crash may have counted an
// answer it gave before, which the first merge cannot have seen.
// unmerged(hash) is {5, 0} then, else false (or a failed command's error).
constexpr std::string_view kCounterRules = R"lua(
local function unmerged(hash)
  local pending = redis.pcall('HGET', hash, '')
  if failed(pending) then return pending end
  if pending then return {5, 0} end
  return false
end
)lua";

// The acquire: one call answers any number of requests, a lone one as a
// batch of one; it opens with kNodeRules. KEYS: the node marker, the
// recovering key and the fence hash, shared by every request, then each
// request's lock key; ARGV: each request's value, ttl, resource, amnesia
// flag, and its place in line, '' for a request that does not wait in line,
// else "<F><lease ms>:<length>:<waiting set><waiter id>" in one argument
// (one string for Redis to make per request, not four; read only when the
// answer needs it): F is "1" when an earlier attempt may have taken a
// place, <length> the waiting set's key's length. A request the
// node rules refuse gets their answer. Each request then costs its SET (and
// its PTTL when busy, its HGET when fenced). A busy answer puts the waiter
// at the back of the line unless it has a place already (a waiter keeps
// its place through its refused attempts), scored by the node's clock in
// microseconds (in milliseconds, two waiters refused within one would tie,
// and the sorted set would order them by id, not by arrival), and
// keeps the whole line alive for the lease; a grant takes the waiter's
// place out of the line. Each request's answer: {1, fence counter} when granted ({1, 0}
// unfenced), {0, holder PTTL} when busy, {2, 0} when the node has no
// identity marker (defence on) and {3, ms left} while it is recovering.
// Every command runs under redis.pcall: an error (an ACL refusal,
// WRONGTYPE on the fence hash) is the answer of the requests it concerns,
// never the whole call's, so a request granted earlier in the batch keeps
// its grant; a place in line that cannot be kept costs only the wake-up.
constexpr std::string_view kAcquireBatch = R"lua(
local n = #KEYS - 3
if n < 1 or #ARGV ~= 5 * n then
  return redis.error_reply('ERR acquire batch: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local function place_of(line)
  local colon = string.find(line, ':', 2, true)
  if not colon then return nil end
  local lease = tonumber(string.sub(line, 2, colon - 1))
  local after = string.find(line, ':', colon + 1, true)
  if not after then return nil end
  local length = tonumber(string.sub(line, colon + 1, after - 1))
  if not lease or not length or length < 1 or after + length >= #line then return nil end
  return string.sub(line, after + 1, after + length), string.sub(line, after + length + 1), lease
end
local out = {}
for i = 1, n do
  local a = 5 * (i - 1)
  local reply = refusal(ARGV[a + 4]) or
                writer_grant(KEYS[3 + i], ARGV[a + 1], ARGV[a + 2], KEYS[3], ARGV[a + 3],
                             ARGV[a + 5] == '')
  local line = ARGV[a + 5]
  if line ~= '' and type(reply) == 'table' and reply.err == nil then
    if reply[1] == 0 then
      local waiting, id, lease = place_of(line)
      if waiting and lease > 0 then
        local t = redis.call('TIME')
        redis.pcall('ZADD', waiting, 'NX', tonumber(t[1]) * 1000000 + tonumber(t[2]), id)
        redis.pcall('PEXPIRE', waiting, lease)
      end
    elseif reply[1] == 1 and string.byte(line, 1) == 49 then
      local waiting, id = place_of(line)
      if waiting then redis.pcall('ZREM', waiting, id) end
    end
  end
  out[i] = reply
end
return out
)lua";

// Every release that frees a mutex's key (the mutex's, the last reader's,
// a fair holder's, a multi-resource lock's) names the waiter whose turn it
// is, name_next(waiting set, released value): the first place in the line,
// taken out of it, whose id is "<wake channel> <number>", gets
// "<number> <value>" published on that channel. A place whose channel has
// no subscriber on this node (its client is gone, or its subscriber
// connection is down) is dropped and the next one named, up to
// eight places: a dead waiter's place costs nothing, where naming it
// left the lock free with every waiter asleep until its retry timer.
// Answers whether a waiter was named. An empty waiting set's name ('')
// names no one.
constexpr std::string_view kNameNext = R"lua(
local function name_next(waiting, value)
  if waiting == '' then return false end
  for _ = 1, 8 do
    local head = redis.pcall('ZPOPMIN', waiting)
    if type(head) ~= 'table' or head.err or #head < 2 then return false end
    local space = string.find(head[1], ' ', 1, true)
    if space then
      local heard = redis.pcall('PUBLISH', string.sub(head[1], 1, space - 1),
                                string.sub(head[1], space + 1) .. ' ' .. value)
      if type(heard) ~= 'number' or heard > 0 then return true end
    end
  end
  return false
end
)lua";

// The release (no shared keys). KEYS: each request's lock key; ARGV: each
// request's value, release channel, waiting set ('' for none) and rejoin
// place ('' for none, else "<lease ms>:<waiter id>"). One MGET of every
// request's key, and a GET of each key it found no string at (gone, of
// another type, a readers' set; every key where MGET is refused), so that
// a held lock, the common case, costs no call of its own; then one DEL of
// every key released, then the PUBLISH of each released
// value: a value is published only once its lock is gone, since the value
// alone lets anyone extend or release that lock. Only when someone may
// listen: one EXISTS over the released requests' channels, as keys, comes
// first. A client listening on a release channel, or with a waiter in the
// resource's line, keeps a key of the channel's own name on every node
// while it does (its listening mark, wakeup_hub.hpp); without one, nobody
// would hear the message or wait to be named, and a batch of uncontended
// releases, the common case, costs the node no PUBLISH and no line at all.
// (A subscriber that keeps no mark, by pattern or from another program,
// hears no release then.) With a waiting set, the
// release also names the waiter whose turn it is (kNameNext); one EXISTS
// over the whole batch's waiting sets comes first, so that a batch of
// uncontended releases, the common case, pays one call for the lines
// instead of one per lock. When it named a waiter and the request carries
// a rejoin place, the releaser takes that place at the back of the line
// (and the line lives at least the place's lease; a longer one set by a
// waiter's refusal is kept): a client that releases a lock others
// wait for and will want it again waits its turn without first sending an
// attempt that the next holder's grant would refuse (docs/algorithm.md,
// "Waiting in line", rejoining). A key released twice in one batch is released
// once (the second finds it gone, as it would one request later). Each
// request's answer: 1 when its value was deleted, 2 when it was deleted
// and the releaser rejoined the line, else 0. Every command runs under
// redis.pcall: a GET error (WRONGTYPE) or a refused PUBLISH is that
// request's answer (its lock is deleted all the same); a failed DEL is the
// answer of every request it was to release, and nothing is published.
constexpr std::string_view kReleaseBatch = R"lua(
local n = #KEYS - 2
if n < 1 or #ARGV ~= 4 * n then
  return redis.error_reply('ERR release batch: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local out, gone, doomed = {}, {}, {}
local values = redis.pcall('MGET', unpack(KEYS, 3))
if type(values) ~= 'table' or values.err then values = nil end
for i = 1, n do
  local key, value = KEYS[2 + i], ARGV[4 * i - 3]
  local held = values and values[i]
  -- MGET reads a missing key and one of another type alike: GET tells
  -- them apart (WRONGTYPE, or a readers' set), as without MGET.
  if not held then held = redis.pcall('GET', key) end
  if held and type(held) == 'table' then
    out[i] = readers_or(key, held)
  elseif held == value and not gone[key] then
    gone[key] = true
    doomed[#doomed + 1] = key
    out[i] = 1
  else
    out[i] = 0
  end
end
if #doomed > 0 then
  local deleted = redis.pcall('DEL', unpack(doomed))
  if type(deleted) == 'table' and deleted.err then
    for i = 1, n do
      if out[i] == 1 then out[i] = deleted end
    end
    return out
  end
end
local listened = {}
for i = 1, n do
  if out[i] == 1 and ARGV[4 * i - 2] ~= '' then listened[#listened + 1] = ARGV[4 * i - 2] end
end
if #listened == 0 or redis.pcall('EXISTS', unpack(listened)) == 0 then return out end
-- A fair line's first waiter (a lock taken without a place in it, the
-- first attempt's transaction, is released here): served as fair_release
-- serves it, its claim granted in this call, so that no newcomer finds
-- the key free in between.
local freed = {}
for i = 1, n do
  if out[i] == 1 then freed[#freed + 1] = {i, KEYS[2 + i], ARGV[4 * i - 2], ARGV[4 * i - 3]} end
end
local served = serve_freed(freed, KEYS[1], KEYS[2])
local lines = {}
for i = 1, n do
  local channel = ARGV[4 * i - 2]
  if out[i] == 1 and channel ~= '' then
    local published = 0
    if not served[i] then published = redis.pcall('PUBLISH', channel, ARGV[4 * i - 3]) end
    if type(published) == 'table' and published.err then
      out[i] = published
    elseif ARGV[4 * i - 1] ~= '' and served[i] ~= 2 then
      lines[#lines + 1] = i
    end
  end
end
if #lines > 0 then
  local keys = {}
  for j, i in ipairs(lines) do keys[j] = ARGV[4 * i - 1] end
  local waiting = redis.pcall('EXISTS', unpack(keys))
  if type(waiting) ~= 'number' or waiting > 0 then
    for _, i in ipairs(lines) do
      local line, rejoin = ARGV[4 * i - 1], ARGV[4 * i]
      if name_next(line, ARGV[4 * i - 3]) and rejoin ~= '' then
        local colon = string.find(rejoin, ':', 1, true)
        local lease = colon and tonumber(string.sub(rejoin, 1, colon - 1))
        if lease and lease > 0 and colon < #rejoin then
          local t = redis.call('TIME')
          local placed = redis.pcall('ZADD', line, 'NX', tonumber(t[1]) * 1000000 + tonumber(t[2]),
                                     string.sub(rejoin, colon + 1))
          if type(placed) == 'number' then
            local left = redis.pcall('PTTL', line)
            if type(left) == 'number' and left >= 0 and left < lease then
              redis.pcall('PEXPIRE', line, lease)
            end
            out[i] = 2
          end
        end
      end
    end
  end
end
return out
)lua";

// The pass (a rejoined releaser named when it no longer wants the lock):
// KEYS: lock key, waiting set; ARGV: the value the naming release freed.
// While the lock key is free, names the next waiter as that release would
// have (kNameNext). Answers 1 when it named one, else 0.
constexpr std::string_view kPassTurn = R"lua(
if #KEYS ~= 2 or #ARGV ~= 1 then
  return redis.error_reply('ERR pass_turn: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if name_next(KEYS[2], ARGV[1]) then return 1 end
return 0
)lua";

constexpr std::string_view kExtendBatch = R"lua(
local n = #KEYS
if n < 1 or #ARGV ~= 2 * n then
  return redis.error_reply('ERR extend batch: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local out = {}
for i = 1, n do
  local key = KEYS[i]
  local held = redis.pcall('GET', key)
  if held and type(held) == 'table' then
    out[i] = readers_or(key, held)
  elseif held == ARGV[2 * i - 1] then
    out[i] = redis.pcall('PEXPIRE', key, ARGV[2 * i])
  else
    out[i] = 0
  end
end
return out
)lua";

// The fence compare-and-set; it opens with kNodeRules. KEYS: the node
// marker and the recovering key, shared, then each request's fence hash;
// ARGV: each request's resource, proposed token and amnesia flag. Nothing
// is stored while the node rules refuse (a node recovered below a token it
// had stored must not take that token again while the first proposer's
// round may still be open). Stores a token only if the
// node's counter for the resource is strictly smaller. Each request's
// answer: {1, T} when stored, else {0, counter} (a node never takes the
// same value twice, and says so, so two proposers of one T cannot both
// count this node); {2, 0} without the marker, {3, ms left} while
// recovering. Each request sees the counters the ones before it stored; an
// error (WRONGTYPE, a counter that is not a number) is that request's
// answer.
// The announcement. KEYS: the channel (a channel is no key, but declared
// as one it routes the call to its slot's server); ARGV: the message.
constexpr std::string_view kAnnounce = R"lua(
return redis.pcall('PUBLISH', KEYS[1], ARGV[1])
)lua";

constexpr std::string_view kFenceBatch = R"lua(
local n = #KEYS - 2
if n < 1 or #ARGV ~= 3 * n then
  return redis.error_reply('ERR fence batch: ' .. #KEYS .. ' keys and ' .. #ARGV .. ' arguments')
end
local out = {}
for i = 1, n do
  local a = 3 * (i - 1)
  local reply = refusal(ARGV[a + 3]) or unmerged(KEYS[2 + i])
  if not reply then
    local hash, resource, proposed = KEYS[2 + i], ARGV[a + 1], ARGV[a + 2]
    local raw = redis.pcall('HGET', hash, resource)
    if failed(raw) then
      reply = raw
    else
      raw = raw or '0'
      local current, wanted = tonumber(raw), tonumber(proposed)
      if current == nil or wanted == nil then
        reply = {err = 'ERR fence batch: a counter or token that is not a number'}
      elseif current < wanted then
        local stored = redis.pcall('HSET', hash, resource, proposed)
        if failed(stored) then reply = stored else reply = {1, proposed} end
      else
        reply = {0, raw}
      end
    end
  end
  out[i] = reply
end
return out
)lua";

}  // namespace

static constexpr std::uint8_t table_number(ScriptId id) noexcept {
  return static_cast<std::uint8_t>(id);
}

// The one table: adding a script is one entry here (and its body above).
const std::array<Script, kScriptCount>& script_table() {
  // The scripts that open with the node rules, put together once.
  static const std::string acquire =
      std::string(kNodeRules) + std::string(kReaderRules) + std::string(kAcquireBatch);
  static const std::string extend = std::string(kReadersOr) + std::string(kExtendBatch);
  static const std::string release = std::string(kReaderRules) + std::string(kReadersOr) +
                                     std::string(kNameNext) + std::string(kFairQueue) +
                                     std::string(kReleaseBatch);
  static const std::string fence =
      std::string(kNodeRules) + std::string(kCounterRules) + std::string(kFenceBatch);
  static const std::string recover =
      std::string(kRaiseCounters) + std::string(kOwnRunId) + std::string(kRecover);
  static const std::string declare_new = std::string(kOwnRunId) + std::string(kDeclareNew);
  static const std::string check_marker = std::string(kOwnRunId) + std::string(kCheckMarker);
  // The flag lets one call touch the markers of every slot the server has.
  static const std::string check_slot_markers = "#!lua flags=allow-cross-slot-keys\n" +
                                                std::string(kOwnRunId) + std::string(kSlotKeys) +
                                                std::string(kCheckSlotMarkers);
  static const std::string declare_new_slots = "#!lua flags=allow-cross-slot-keys\n" +
                                               std::string(kOwnRunId) + std::string(kSlotKeys) +
                                               std::string(kDeclareNewSlots);
  static const std::string remerge = std::string(kRaiseCounters) + std::string(kRemerge);
  static const std::string pass_turn = std::string(kNameNext) + std::string(kPassTurn);
  static const std::string acquire_all =
      std::string(kNodeRules) + std::string(kReaderRules) + std::string(kAcquireAllBody);
  static const std::string extend_all = std::string(kReadersOr) + std::string(kExtendAllBody);
  static const std::string release_all = std::string(kReaderRules) + std::string(kReadersOr) +
                                         std::string(kNameNext) + std::string(kFairQueue) +
                                         std::string(kReleaseAllBody);
  static const std::string adopt_all =
      std::string(kNodeRules) + std::string(kReadersOr) + std::string(kAdoptAllBody);
  static const std::string read_acquire =
      std::string(kNodeRules) + std::string(kReaderRules) + std::string(kReadAcquireBody);
  static const std::string read_extend = std::string(kReaderRules) + std::string(kReadExtendBody);
  static const std::string fair_acquire = std::string(kNodeRules) + std::string(kCounterRules) +
                                          std::string(kReaderRules) + std::string(kFairQueue) +
                                          std::string(kFairAcquireBody);
  static const std::string ticket_draw =
      std::string(kNodeRules) + std::string(kCounterRules) + std::string(kTicketDrawBody);
  static const std::string ticket_enqueue = std::string(kNodeRules) + std::string(kCounterRules) +
                                            std::string(kReaderRules) + std::string(kFairQueue) +
                                            std::string(kTicketEnqueueBody);
  static const std::string fair_release = std::string(kReaderRules) + std::string(kReadersOr) +
                                          std::string(kNameNext) + std::string(kFairQueue) +
                                          std::string(kFairReleaseBody);
  static const std::string read_release =
      std::string(kReaderRules) + std::string(kNameNext) + std::string(kReadReleaseBody);
  static const std::string fence_all =
      std::string(kNodeRules) + std::string(kCounterRules) + std::string(kFenceAllBody);
  static const std::string permit_acquire =
      std::string(kNodeRules) + std::string(kPermitAcquireBody);
  static const std::array<Script, kScriptCount> table{{
      {table_number(ScriptId::acquire), "acquire", acquire, sha1_hex(acquire), true, 3, 5,
       kScriptReplyBytes},
      {table_number(ScriptId::extend), "extend", extend, sha1_hex(extend), true, 0, 2,
       kScriptReplyBytes},
      {table_number(ScriptId::release), "release", release, sha1_hex(release), true, 2, 4,
       kScriptReplyBytes, nullptr, kReleaseMinTimeout},
      {table_number(ScriptId::fence), "fence", fence, sha1_hex(fence), true, 2, 3,
       kScriptReplyBytes},
      {table_number(ScriptId::probe), "probe", kProbe, sha1_hex(kProbe), false, 0, 0,
       kProbeReplyBytes},
      {table_number(ScriptId::recover), "recover", recover, sha1_hex(recover), false, 0, 0,
       kScriptReplyBytes},
      {table_number(ScriptId::remerge), "remerge", remerge, sha1_hex(remerge), false, 0, 0,
       kScriptReplyBytes},
      {table_number(ScriptId::acquire_all), "acquire_all", acquire_all, sha1_hex(acquire_all),
       false, 0, 0, kScriptReplyBytes},
      {table_number(ScriptId::extend_all), "extend_all", extend_all, sha1_hex(extend_all), false, 0,
       0, kScriptReplyBytes},
      {table_number(ScriptId::release_all), "release_all", release_all, sha1_hex(release_all),
       false, 0, 0, kScriptReplyBytes, nullptr, kReleaseMinTimeout},
      {table_number(ScriptId::adopt_all), "adopt_all", adopt_all, sha1_hex(adopt_all), false, 0, 0,
       kScriptReplyBytes},
      {table_number(ScriptId::fence_all), "fence_all", fence_all, sha1_hex(fence_all), false, 0, 0,
       kScriptReplyBytes},
      {table_number(ScriptId::permit_acquire), "permit_acquire", permit_acquire,
       sha1_hex(permit_acquire), false, 0, 0, kScriptReplyBytes},
      {table_number(ScriptId::permit_extend), "permit_extend", kPermitExtendBody,
       sha1_hex(kPermitExtendBody), false, 0, 0, kScriptReplyBytes},
      {table_number(ScriptId::inspect), "inspect", kInspectBody, sha1_hex(kInspectBody), false, 0,
       0, kScriptReplyBytes},
      {table_number(ScriptId::read_acquire), "read_acquire", read_acquire, sha1_hex(read_acquire),
       false, 0, 0, kScriptReplyBytes},
      {table_number(ScriptId::read_extend), "read_extend", read_extend, sha1_hex(read_extend),
       false, 0, 0, kScriptReplyBytes},
      {table_number(ScriptId::read_release), "read_release", read_release, sha1_hex(read_release),
       false, 0, 0, kScriptReplyBytes, nullptr, kReleaseMinTimeout},
      {table_number(ScriptId::announce), "announce", kAnnounce, sha1_hex(kAnnounce), false, 0, 0,
       kScriptReplyBytes},
      {table_number(ScriptId::fair_acquire), "fair_acquire", fair_acquire, sha1_hex(fair_acquire),
       false, 0, 0, kScriptReplyBytes},
      {table_number(ScriptId::ticket_draw), "ticket_draw", ticket_draw, sha1_hex(ticket_draw),
       false, 0, 0, kScriptReplyBytes},
      {table_number(ScriptId::ticket_enqueue), "ticket_enqueue", ticket_enqueue,
       sha1_hex(ticket_enqueue), false, 0, 0, kScriptReplyBytes},
      {table_number(ScriptId::fair_release), "fair_release", fair_release, sha1_hex(fair_release),
       false, 0, 0, kScriptReplyBytes, nullptr, kReleaseMinTimeout},
      {table_number(ScriptId::queue_leave), "queue_leave", kQueueLeaveBody,
       sha1_hex(kQueueLeaveBody), false, 0, 0, kScriptReplyBytes},
      {table_number(ScriptId::pass_turn), "pass_turn", pass_turn, sha1_hex(pass_turn), false, 0, 0,
       kScriptReplyBytes},
      {table_number(ScriptId::declare_new), "declare_new", declare_new, sha1_hex(declare_new),
       false, 0, 0, kScriptReplyBytes},
      {table_number(ScriptId::check_marker), "check_marker", check_marker, sha1_hex(check_marker),
       false, 0, 0, kScriptReplyBytes},
      {table_number(ScriptId::check_slot_markers), "check_slot_markers", check_slot_markers,
       sha1_hex(check_slot_markers), false, 0, 0, kScriptReplyBytes},
      {table_number(ScriptId::declare_new_slots), "declare_new_slots", declare_new_slots,
       sha1_hex(declare_new_slots), false, 0, 0, kScriptReplyBytes},
      {table_number(ScriptId::acquire_set),
       "acquire_set",
       {},
       sha1_hex({}),
       true,
       2,
       3,
       kScriptReplyBytes,
       &set_acquire_form()},
  }};
  return table;
}

const Script& script(ScriptId id) { return script_table()[static_cast<std::size_t>(id)]; }

namespace {

// Every 'PUBLISH' of a body made 'SPUBLISH'.
std::string shard_publishing_body(std::string_view body) {
  static constexpr std::string_view kPublish = "'PUBLISH'";
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = body.find(kPublish); at != std::string_view::npos;
       at = body.find(kPublish, from)) {
    out.append(body.substr(from, at - from)).append("'SPUBLISH'");
    from = at + kPublish.size();
  }
  return out.append(body.substr(from));
}

// A script that publishes nothing has no twin: an empty name.
struct Twins {
  std::array<std::string, kScriptCount> names;
  std::array<std::string, kScriptCount> bodies;
  std::array<Script, kScriptCount> scripts{};
};

const Twins& twins() {
  static const Twins made = [] {
    Twins out;
    for (std::size_t i = 0; i < kScriptCount; ++i) {
      const Script& original = script_table()[i];
      out.bodies[i] = shard_publishing_body(original.body);
      if (out.bodies[i] == original.body) continue;
      out.names[i] = std::string(original.name) + " (sharded)";
      out.scripts[i] = original;
      out.scripts[i].number = static_cast<std::uint8_t>(kScriptCount + i);
      out.scripts[i].name = out.names[i];
      out.scripts[i].body = out.bodies[i];
      out.scripts[i].sha1 = sha1_hex(out.bodies[i]);
    }
    return out;
  }();
  return made;
}

}  // namespace

const Script& shard_publishing(const Script& entry) noexcept {
  if (entry.number >= kScriptCount) return entry;
  const Twins& all = twins();
  return all.names[entry.number].empty() ? entry : all.scripts[entry.number];
}

std::string marker_key(std::string_view prefix) { return std::string(prefix) + "node"; }

namespace {
constexpr std::string_view kMaxTtlField = " max_ttl_ms=";
}  // namespace

std::string marker_value(std::string_view incarnation, Milliseconds max_ttl) {
  return "redlock-node-" + std::string(incarnation) + std::string(kMaxTtlField) +
         std::to_string(max_ttl.count());
}

std::string first_init_marker_value(std::string_view incarnation, Milliseconds max_ttl) {
  return std::string(kFirstInitMarkerPrefix) + std::string(incarnation) +
         std::string(kMaxTtlField) + std::to_string(max_ttl.count());
}

std::string_view first_use_story(std::string_view recovering_value) noexcept {
  if (recovering_value.substr(0, kFirstInitRecovering.size()) != kFirstInitRecovering) return {};
  return recovering_value.substr(kFirstInitRecovering.size());
}

bool is_first_init_marker(std::string_view value) noexcept {
  return value.substr(0, kFirstInitMarkerPrefix.size()) == kFirstInitMarkerPrefix;
}

std::optional<Milliseconds> marker_max_ttl(std::string_view value) {
  const std::size_t at = value.find(kMaxTtlField);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view digits = value.substr(at + kMaxTtlField.size());
  // A marker a recovery wrote names its server after the digits.
  digits = digits.substr(0, digits.find(' '));
  if (digits.empty() || digits.size() > 12) return std::nullopt;
  long long ms = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    ms = ms * 10 + (c - '0');
  }
  return Milliseconds(ms);
}

std::optional<std::string> marker_run_id(std::string_view value) {
  constexpr std::string_view kRunIdField = " run_id=";
  const std::size_t at = value.rfind(kRunIdField);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view id = value.substr(at + kRunIdField.size());
  if (id.size() != 40 || id.find_first_not_of("0123456789abcdef") != std::string_view::npos) {
    return std::nullopt;
  }
  return std::string(id);
}

std::string recovering_key(std::string_view prefix) { return std::string(prefix) + "recovering"; }

std::string lock_pattern(const LockConfig& lock) {
  return lock_key_glob(lock.lock_key, lock.key_prefix);
}

std::string lock_key(const LockConfig& lock, std::string_view resource) {
  return expand_lock_key(lock.lock_key, lock.key_prefix, resource);
}

std::string lock_key(const KeySpace& keys, std::string_view resource) {
  return expand_lock_key(keys.lock().lock_key, keys.key_prefix(), resource);
}

std::string lock_pattern(const KeySpace& keys) {
  return lock_key_glob(keys.lock().lock_key, keys.key_prefix());
}

bool is_bookkeeping_key(std::string_view prefix, std::string_view key) {
  if (!key.starts_with(prefix)) return false;
  const std::string_view rest = key.substr(prefix.size());
  // The names below are the ones this file builds: marker_key,
  // recovering_key, fence_key, queue_key, queue_due_key, queue_claims_key,
  // waiting_key,
  // permit_key, permit_count_key; and a listening mark (a release
  // channel's name as a key, wakeup_hub.hpp).
  if (rest == "node" || rest == "recovering" || rest == "fence") return true;
  for (const std::string_view space :
       {"queue:", "queue-due:", "queue-claim:", "waiting:", "sem:", "permits:", "released:"}) {
    if (rest.starts_with(space)) return true;
  }
  return false;
}

namespace {

// `glob` (lock_key_glob of a pattern under `prefix` + "{\x01}") with that
// tag turned into "{*}": the pattern's keys in every slot. The prefix has
// no braces (per_slot_problem), so the tag is where it ends.
std::string any_slot(std::string glob) {
  for (std::size_t at = glob.find("{\x01}"); at != std::string::npos;
       at = glob.find("{\x01}", at)) {
    glob.replace(at, 3, "{*}");
  }
  return glob;
}

}  // namespace

std::string slot_lock_pattern(const LockConfig& lock) {
  return any_slot(lock_key_glob(lock.lock_key, lock.key_prefix + "{\x01}"));
}

std::string slot_permit_pattern(std::string_view prefix) {
  return any_slot(lock_key_glob("{prefix}sem:{resource}", std::string(prefix) + "{\x01}"));
}

std::string permit_pattern(std::string_view prefix) {
  // The glob of the permit keys: the prefix is literal text, whatever it
  // holds (lock_key_glob escapes it).
  return lock_key_glob("{prefix}sem:{resource}", prefix);
}

std::string fence_key(std::string_view prefix) { return std::string(prefix) + "fence"; }

std::string permit_key_prefix(std::string_view prefix, std::string_view semaphore) {
  std::string key;
  key.reserve(prefix.size() + 5 + semaphore.size());
  key.append(prefix).append("sem:").append(semaphore).append(":");
  return key;
}

std::string permit_key(std::string_view prefix, std::string_view semaphore, std::uint32_t permit) {
  return permit_key_prefix(prefix, semaphore) + std::to_string(permit);
}

std::string permit_count_key(std::string_view prefix, std::string_view semaphore) {
  return std::string(prefix) + "permits:" + std::string(semaphore);
}

std::string permit_fence_prefix(std::string_view semaphore) {
  return "sem:" + std::string(semaphore) + ":";
}

std::string permit_fence_field(std::string_view semaphore, std::uint32_t permit) {
  return permit_fence_prefix(semaphore) + std::to_string(permit);
}

std::string permit_channel(std::string_view prefix, std::string_view semaphore) {
  return std::string(prefix) + "released:sem:" + std::string(semaphore);
}

std::string release_channel(std::string_view prefix, std::string_view resource) {
  std::string channel;
  channel.reserve(prefix.size() + 9 + resource.size());
  channel.append(prefix).append("released:").append(resource);
  return channel;
}

std::string waiting_key(std::string_view prefix, std::string_view resource) {
  std::string key;
  key.reserve(prefix.size() + 8 + resource.size());
  key.append(prefix).append("waiting:").append(resource);
  return key;
}

std::string line_argument(std::string_view waiting, std::string_view waiter_id,
                          Milliseconds lease) {
  std::string argument =
      "0" + std::to_string(lease.count()) + ":" + std::to_string(waiting.size()) + ":";
  argument.append(waiting).append(waiter_id);
  return argument;
}

std::string rejoin_argument(std::string_view waiter_id, Milliseconds lease) {
  std::string argument = std::to_string(lease.count()) + ":";
  argument.append(waiter_id);
  return argument;
}

std::string wake_channel(std::string_view prefix, std::string_view client) {
  return std::string(prefix) + "released:@" + std::string(client);
}

std::string queue_key(std::string_view prefix, std::string_view resource) {
  return std::string(prefix) + "queue:" + std::string(resource);
}

std::string queue_due_key(std::string_view prefix, std::string_view resource) {
  return std::string(prefix) + "queue-due:" + std::string(resource);
}

std::string queue_claims_key(std::string_view prefix, std::string_view resource) {
  return std::string(prefix) + "queue-claim:" + std::string(resource);
}

std::string ticket_field(std::string_view resource) { return "queue:" + std::string(resource); }

std::string elected_channel(std::string_view prefix, std::string_view resource) {
  return release_channel(prefix, resource) + "#elected";
}

}  // namespace redlock::detail
