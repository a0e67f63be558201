// Release on every node (docs/algorithm.md, "Release"); only our own value is ever deleted.
#pragma once

#include "operations/client_core.hpp"
#include "operations/operation.hpp"

namespace redlock::detail {

class ReleaseOperation final : public Operation {
 public:
  ReleaseOperation(ClientCore& core, Lock lock, AsyncClient::ReleaseCallback callback);

  void start();
  void on_response(std::size_t node, std::uint32_t tag, const NodeResponse& response) override;
  void cancel() override;
  void abort(std::error_code why) override;

 private:
  void complete(std::error_code error);
  void fail_later(std::error_code error);
  [[nodiscard]] std::error_code summary() const;

  Lock lock_;
  AsyncClient::ReleaseCallback callback_;
  std::size_t waiting_ = 0;
  bool finished_ = false;
  ReleaseResult result_;
};

}  // namespace redlock::detail
