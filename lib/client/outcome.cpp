#include "redlock/outcome.hpp"

namespace redlock {

std::string_view to_string(NodeStatus status) noexcept {
  switch (status) {
    case NodeStatus::granted:
      return "granted";
    case NodeStatus::busy:
      return "busy";
    case NodeStatus::extended:
      return "extended";
    case NodeStatus::released:
      return "released";
    case NodeStatus::not_held:
      return "not_held";
    case NodeStatus::replicas_short:
      return "replicas_short";
    case NodeStatus::recovering:
      return "recovering";
    case NodeStatus::timeout:
      return "timeout";
    case NodeStatus::unreachable:
      return "unreachable";
    case NodeStatus::error:
      return "error";
    case NodeStatus::permits_differ:
      return "permits_differ";
    case NodeStatus::pending:
      return "pending";
    case NodeStatus::not_asked:
      return "not_asked";
  }
  return "unknown";
}

std::string_view to_string(LockKind kind) noexcept {
  switch (kind) {
    case LockKind::mutex:
      return "mutex";
    case LockKind::multi:
      return "multi";
    case LockKind::permit:
      return "permit";
    case LockKind::shared:
      return "shared";
    case LockKind::fair:
      return "fair";
  }
  return "unknown";
}

std::string_view to_string(Persistence persistence) noexcept {
  switch (persistence) {
    case Persistence::unknown:
      return "unknown";
    case Persistence::none:
      return "none";
    case Persistence::aof_no:
      return "aof-no-fsync";
    case Persistence::aof_everysec:
      return "aof-everysec";
    case Persistence::aof_always:
      return "aof-always";
    case Persistence::aof_always_but_rewrite:
      return "aof-always-no-fsync-on-rewrite";
  }
  return "unknown";
}

}  // namespace redlock
