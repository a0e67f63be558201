// Where a quorum with a Redis Cluster member keeps a resource's keys
// (docs/algorithm.md, "Key layout"), for the tests that read them on the
// servers: the default key_prefix, then the hash tag of the slot of the
// resource's name.
#pragma once

#include <string>

#include "protocol/hash_slot.hpp"

namespace redlock::test {

inline std::string slotted(const std::string& resource) {
  return "redlock:{" + std::string(detail::slot_tag(detail::hash_slot(resource))) + "}";
}

}  // namespace redlock::test
