// The [lock] table's lock_key (docs/configuration.md, "lock_key"): where a
// resource's lock lives on a node, as a pattern of literal text and two
// placeholders, `{prefix}` (key_prefix) and `{resource}` (the resource's
// name). The default, "{prefix}lock:{resource}", is the layout every
// version of the library used; "{resource}" is the layout of the
// node-redlock, redsync and RedLock.net clients (the key is the resource's
// own name), for a fleet that runs both while it migrates.
//
// A valid pattern holds `{resource}` exactly once and `{prefix}` at most
// once, and no other brace: a key is then `head + resource + tail` with a
// fixed head and tail, so two resources never share a lock key.
#pragma once

#include <string>
#include <string_view>

namespace redlock::detail {

inline constexpr std::string_view kDefaultLockKey = "{prefix}lock:{resource}";

// Why `pattern` cannot be a lock_key ("expected ..., got ..."), or empty
// when it can.
[[nodiscard]] std::string lock_key_pattern_problem(std::string_view pattern);

// The lock key of `resource`: `pattern` with its placeholders replaced.
// `pattern` must be valid (lock_key_pattern_problem() empty).
[[nodiscard]] std::string expand_lock_key(std::string_view pattern, std::string_view prefix,
                                          std::string_view resource);

// A SCAN MATCH glob that matches every lock key of `pattern` (and, for a
// pattern such as "{resource}", any key at all): the literal text escaped,
// `{resource}` as `*`.
[[nodiscard]] std::string lock_key_glob(std::string_view pattern, std::string_view prefix);

}  // namespace redlock::detail
