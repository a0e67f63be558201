// What the tests of quorums of Redis Cluster members share: where such a
// quorum keeps a resource's keys (docs/algorithm.md, "Key layout"), for the
// tests that read them on the servers: the default key_prefix, then the
// hash tag of the slot of the resource's name; and the quorum itself.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cluster_member.hpp"
#include "protocol/hash_slot.hpp"
#include "redlock/redlock.hpp"

namespace redlock::test {

inline std::string slotted(const std::string& resource) {
  return "redlock:{" + std::string(detail::slot_tag(detail::hash_slot(resource))) + "}";
}

// A quorum of `members`, one attempt per acquire, releases that wait for
// every member (the tests read the servers right after).
inline QuorumConfig quorum_of(const std::vector<std::unique_ptr<ShardedMember>>& members) {
  std::vector<std::string> addresses;
  for (const auto& member : members) addresses.push_back(member->address());
  const ConfigResult parsed = config_from_addresses(addresses);
  EXPECT_TRUE(parsed.ok()) << parsed.error.to_string();
  QuorumConfig quorum = parsed.ok() ? *parsed.config : QuorumConfig{};
  quorum.lock.retry_count = 0;
  quorum.lock.release_at_majority = false;
  return quorum;
}

}  // namespace redlock::test
