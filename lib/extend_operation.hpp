// DESIGN 2.2: renew a held lock by quorum.
#pragma once

#include <vector>

#include "client_core.hpp"
#include "operation.hpp"
#include "quorum.hpp"

namespace redlock::detail {

class ExtendOperation final : public Operation {
 public:
  ExtendOperation(ClientCore& core, Lock lock, const ExtendOptions& options,
                  AsyncClient::ExtendCallback callback);

  void start();
  void on_response(std::size_t node, std::uint32_t tag, const NodeResponse& response) override;
  void cancel() override;
  void abort(std::error_code why) override;

 private:
  void decide();
  void complete(std::error_code error);
  void fail_later(std::error_code error);

  Lock lock_;
  Milliseconds ttl_;
  std::string lock_key_;
  AsyncClient::ExtendCallback callback_;
  TimePoint started_{};
  QuorumTally tally_;
  std::size_t not_held_ = 0;
  bool open_ = false;
  bool finished_ = false;
  ExtendResult result_;
};

}  // namespace redlock::detail
