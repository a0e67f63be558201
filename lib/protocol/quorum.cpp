#include "protocol/quorum.hpp"

#include "redlock/error.hpp"

namespace redlock::detail {

Decision QuorumTally::decision() const noexcept {
  const std::size_t need = majority(nodes_);
  if (yes_ >= need) return Decision::won;
  // A majority is unreachable once the nodes still able to say yes are too few.
  if (nodes_ - no_ < need) return Decision::lost;
  return Decision::pending;
}

namespace {
bool alone_prevent_majority(std::size_t nodes, std::size_t refusals) noexcept {
  return nodes - refusals < majority(nodes);
}
}  // namespace

std::error_code acquire_failure_reason(std::size_t nodes, std::size_t busy) noexcept {
  return alone_prevent_majority(nodes, busy) ? make_error_code(errc::not_acquired)
                                             : make_error_code(errc::no_quorum);
}

std::error_code extend_failure_reason(std::size_t nodes, std::size_t not_held) noexcept {
  return alone_prevent_majority(nodes, not_held) ? make_error_code(errc::lost)
                                                 : make_error_code(errc::no_quorum);
}

}  // namespace redlock::detail
