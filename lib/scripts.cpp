#include "scripts.hpp"

#include "sha1.hpp"

namespace redlock::detail {
namespace {

// The fence counter is read only for a fenced acquire (ARGV[3] empty:
// unfenced): each redis.call is a good part of a script's cost on the node.
constexpr std::string_view kAcquire = R"lua(
if ARGV[4] == '1' then
  if redis.call('EXISTS', KEYS[3]) == 0 then
    return {2, 0}
  end
  local delay = redis.call('PTTL', KEYS[4])
  if delay ~= -2 then
    return {3, delay}
  end
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if ARGV[3] == '' then
    return {1, '0'}
  end
  return {1, redis.call('HGET', KEYS[2], ARGV[3]) or '0'}
end
return {0, redis.call('PTTL', KEYS[1])}
)lua";

constexpr std::string_view kExtend = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
)lua";

constexpr std::string_view kRelease = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if ARGV[2] ~= '' then redis.call('PUBLISH', ARGV[2], ARGV[1]) end
  return 1
end
return 0
)lua";

constexpr std::string_view kFence = R"lua(
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[2]) == 0 then
  return {2, 0}
end
local raw = redis.call('HGET', KEYS[1], ARGV[1]) or '0'
if tonumber(raw) < tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return {1, ARGV[2]}
end
return {0, raw}
)lua";

constexpr std::string_view kProbe = R"lua(
local marked = redis.call('EXISTS', KEYS[1])
local recovering = redis.call('PTTL', KEYS[2])
local has_locks = 0
local cursor = '0'
repeat
  local page = redis.call('SCAN', cursor, 'MATCH', ARGV[1], 'COUNT', 1000)
  cursor = page[1]
  if #page[2] > 0 then
    has_locks = 1
    break
  end
until cursor == '0'
return {marked, recovering, has_locks, redis.call('HGETALL', KEYS[3])}
)lua";

constexpr std::string_view kRecover = R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
for i = 4, #ARGV, 2 do
  local current = tonumber(redis.call('HGET', KEYS[3], ARGV[i]) or '0')
  if current < tonumber(ARGV[i + 1]) then
    redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
  end
end
if tonumber(ARGV[1]) > 0 then
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[1])
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
)lua";

Script make_script(std::string_view name, std::string_view body) {
  return Script{name, body, sha1_hex(body)};
}

// Runs `body` once per request of a batch, each on its own KEYS and ARGV,
// under pcall: one request's error (a WRONGTYPE key, say) is that
// request's answer and does not stop the others. ARGV[1] is the number of
// requests n, ARGV[2i] and ARGV[2i+1] the key and argument counts of
// request i; then come every request's arguments in order, as KEYS holds
// every request's keys. Returns one element per request: the body's reply,
// or the error. A body returning nothing answers false (a nil reply), so
// the array has no hole.
constexpr std::string_view kBatchHead = "local function one(KEYS, ARGV)\n";
constexpr std::string_view kBatchTail = R"lua(
end
local n = tonumber(ARGV[1])
local out = {}
local k, a = 0, 1 + 2 * n
for i = 1, n do
  local nk, na = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  local keys, args = {}, {}
  for j = 1, nk do keys[j] = KEYS[k + j] end
  for j = 1, na do args[j] = ARGV[a + j] end
  local ok, reply = pcall(one, keys, args)
  if not ok and type(reply) ~= 'table' then reply = {err = tostring(reply)} end
  if reply == nil then reply = false end
  out[i] = reply
  k, a = k + nk, a + na
end
return out
)lua";

struct BatchScript {
  std::string body;
  Script script;
  BatchScript(std::string_view name, std::string_view one)
      : body(std::string(kBatchHead) + std::string(one) + std::string(kBatchTail)),
        script(make_script(name, body)) {}
};

}  // namespace

const Script& acquire_script() {
  static const Script script = make_script("acquire", kAcquire);
  return script;
}

const Script& extend_script() {
  static const Script script = make_script("extend", kExtend);
  return script;
}

const Script& release_script() {
  static const Script script = make_script("release", kRelease);
  return script;
}

const Script& fence_script() {
  static const Script script = make_script("fence", kFence);
  return script;
}

const Script& probe_script() {
  static const Script script = make_script("probe", kProbe);
  return script;
}

const Script& recover_script() {
  static const Script script = make_script("recover", kRecover);
  return script;
}

const Script* batch_script(const Script& script) {
  // Extends go out as prepared requests (extend_operation, guard_state),
  // never batched.
  static const BatchScript acquire("acquire-batch", kAcquire);
  static const BatchScript release("release-batch", kRelease);
  static const BatchScript fence("fence-batch", kFence);
  if (&script == &acquire_script()) return &acquire.script;
  if (&script == &release_script()) return &release.script;
  if (&script == &fence_script()) return &fence.script;
  return nullptr;
}

const std::vector<const Script*>& node_scripts() {
  static const std::vector<const Script*> scripts{&acquire_script(),
                                                  &extend_script(),
                                                  &release_script(),
                                                  &fence_script(),
                                                  &probe_script(),
                                                  &recover_script(),
                                                  batch_script(acquire_script()),
                                                  batch_script(release_script()),
                                                  batch_script(fence_script())};
  return scripts;
}

std::string marker_key(std::string_view prefix) { return std::string(prefix) + "node"; }

std::string recovering_key(std::string_view prefix) { return std::string(prefix) + "recovering"; }

std::string lock_pattern(std::string_view prefix) { return std::string(prefix) + "lock:*"; }

std::string lock_key(std::string_view prefix, std::string_view resource) {
  std::string key;
  key.reserve(prefix.size() + 5 + resource.size());
  key.append(prefix).append("lock:").append(resource);
  return key;
}

std::string fence_key(std::string_view prefix) { return std::string(prefix) + "fence"; }

std::string release_channel(std::string_view prefix, std::string_view resource) {
  std::string channel;
  channel.reserve(prefix.size() + 9 + resource.size());
  channel.append(prefix).append("released:").append(resource);
  return channel;
}

}  // namespace redlock::detail
