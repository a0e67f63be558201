// Starting an operation on a client core, shared by the public clients and
// by the guard's renewals.
#pragma once

#include <memory>
#include <utility>

#include "operations/client_core.hpp"
#include "redlock/error.hpp"

namespace redlock::detail {

// Operations started after close() cannot wait for a loop turn that will
// never come; they complete at once with errc::shutting_down.
template <typename Op, typename... Args>
std::shared_ptr<Op> launch(ClientCore& core, Args&&... args) {
  auto op = std::make_shared<Op>(core, std::forward<Args>(args)...);
  if (core.closing()) {
    op->abort(make_error_code(errc::shutting_down));
    return op;
  }
  core.started(op);
  op->start();
  return op;
}

// The same, with `prepare(op)` run on the operation before it starts.
template <typename Op, typename Prepare, typename... Args>
std::shared_ptr<Op> launch_prepared(ClientCore& core, Prepare&& prepare, Args&&... args) {
  auto op = std::make_shared<Op>(core, std::forward<Args>(args)...);
  if (core.closing()) {
    op->abort(make_error_code(errc::shutting_down));
    return op;
  }
  prepare(*op);
  core.started(op);
  op->start();
  return op;
}

}  // namespace redlock::detail
