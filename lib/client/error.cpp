#include "redlock/error.hpp"

namespace redlock {
namespace {

class RedlockCategory final : public std::error_category {
 public:
  [[nodiscard]] const char* name() const noexcept override { return "redlock"; }

  [[nodiscard]] std::string message(int code) const override {
    switch (static_cast<errc>(code)) {
      case errc::not_acquired:
        return "resource is held by another client";
      case errc::no_quorum:
        return "too few nodes granted the request";
      case errc::validity_too_short:
        return "majority granted too late: validity below the minimum";
      case errc::lost:
        return "lock is no longer held";
      case errc::timeout:
        return "operation deadline passed";
      case errc::node_error:
        return "a node failed or answered with an error";
      case errc::config_error:
        return "invalid configuration";
      case errc::cancelled:
        return "operation cancelled";
      case errc::shutting_down:
        return "client is shutting down";
      case errc::invalid_argument:
        return "invalid argument";
      case errc::fencing_failed:
        return "fencing token not stored on a majority";
      case errc::hold_limit:
        return "guard reached its cap on hold time or renewals";
      case errc::fenced_out:
        return "fenced out: a newer lock holder has used the resource";
    }
    return "unknown redlock error";
  }
};

}  // namespace

const std::error_category& redlock_category() noexcept {
  static const RedlockCategory category;
  return category;
}

std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), redlock_category()};
}

}  // namespace redlock
