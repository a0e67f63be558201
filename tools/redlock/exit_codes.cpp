#include "exit_codes.hpp"

#include "redlock/error.hpp"

namespace redlock::cli {

int exit_code_for(std::error_code error) noexcept {
  if (!error) return exit_code::success;
  if (error == errc::config_error) return exit_code::config;
  if (error == errc::invalid_argument) return exit_code::usage;
  return exit_code::not_acquired;
}

std::string_view error_name(std::error_code error) noexcept {
  if (error.category() != redlock_category()) return "error";
  switch (static_cast<errc>(error.value())) {
    case errc::not_acquired:
      return "not_acquired";
    case errc::no_quorum:
      return "no_quorum";
    case errc::validity_too_short:
      return "validity_too_short";
    case errc::lost:
      return "lost";
    case errc::timeout:
      return "timeout";
    case errc::node_error:
      return "node_error";
    case errc::config_error:
      return "config_error";
    case errc::cancelled:
      return "cancelled";
    case errc::shutting_down:
      return "shutting_down";
    case errc::invalid_argument:
      return "invalid_argument";
    case errc::fencing_failed:
      return "fencing_failed";
    case errc::hold_limit:
      return "hold_limit";
    case errc::fenced_out:
      return "fenced_out";
  }
  return "error";
}

}  // namespace redlock::cli
