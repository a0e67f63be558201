#include "scripts.hpp"

#include "sha1.hpp"

namespace redlock::detail {
namespace {

constexpr std::string_view kAcquire = R"lua(
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
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
  redis.call('PUBLISH', ARGV[2], 'released')
  return 1
end
return 0
)lua";

constexpr std::string_view kFence = R"lua(
local raw = redis.call('HGET', KEYS[1], ARGV[1]) or '0'
if tonumber(raw) < tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return {1, ARGV[2]}
end
return {0, raw}
)lua";

Script make_script(std::string_view name, std::string_view body) {
  return Script{name, body, sha1_hex(body)};
}

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

std::string lock_key(std::string_view prefix, std::string_view resource) {
  std::string key;
  key.reserve(prefix.size() + 5 + resource.size());
  key.append(prefix).append("lock:").append(resource);
  return key;
}

std::string fence_key(std::string_view prefix) {
  return std::string(prefix) + "fence";
}

std::string release_channel(std::string_view prefix, std::string_view resource) {
  std::string channel;
  channel.reserve(prefix.size() + 9 + resource.size());
  channel.append(prefix).append("released:").append(resource);
  return channel;
}

}  // namespace redlock::detail
