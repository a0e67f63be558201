// The protected resource as a chaos client uses it inside a holding: the
// counter and log of one storage (lock_target.hpp), through the fence gate
// with the holding's token (fenced runs) or with plain GET / SET / RPUSH.
#pragma once

#include <string>
#include <vector>

#include "lock_target.hpp"
#include "redlock/redlock.hpp"
#include "worker_options.hpp"

struct redisContext;

namespace redlock::chaos {

class ProtectedResource final {
 public:
  explicit ProtectedResource(const WorkerOptions& options);
  ~ProtectedResource();
  ProtectedResource(const ProtectedResource&) = delete;
  ProtectedResource& operator=(const ProtectedResource&) = delete;

  struct Result {
    bool ok = false;
    long long integer = 0;
    std::string error;
    // Sent, but no answer (timeout, connection lost): it may have been
    // applied. Recorded as phase info, not fail, so the checker counts it
    // as possibly done.
    bool indeterminate = false;
  };

  // The counter of `storage`, fenced by its token.
  Result read(const Storage& storage);
  Result write(const Storage& storage, long long value);
  Result append(const Storage& storage, const std::string& entry);

 private:
  Result plain_command(const std::vector<std::string>& argv, bool parse_bulk);

  bool fenced_;
  FenceGate gate_;
  std::string host_;
  int port_;
  redisContext* plain_ = nullptr;
};

}  // namespace redlock::chaos
