// The checker's interface (checker.hpp): the invariants' names and titles,
// and check_history(), which indexes the history once and runs the checks
// C1-C17 in order. The checks live in the files named in
// checker_internal.hpp.
#include "checker.hpp"

#include <algorithm>
#include <array>

#include "checker_internal.hpp"

namespace redlock::chaos {
namespace {

using checker_internal::check_cleanup;
using checker_internal::check_exclusion;
using checker_internal::check_extension;
using checker_internal::check_fair_order;
using checker_internal::check_fenced_resource;
using checker_internal::check_in_window_use;
using checker_internal::check_leadership;
using checker_internal::check_liveness;
using checker_internal::check_nested_holds;
using checker_internal::check_no_lost_update;
using checker_internal::check_quorum;
using checker_internal::check_safe_release;
using checker_internal::check_semaphore_capacity;
using checker_internal::check_set_turn;
using checker_internal::check_token_monotonicity;
using checker_internal::check_token_uniqueness;
using checker_internal::check_validity;
using checker_internal::Context;

struct InvariantText {
  std::string_view id;
  std::string_view title;
};

constexpr std::array<InvariantText, kInvariantCount> kInvariants{{
    {"C1", "Quorum: every acquire had floor(N/2)+1 nodes grant that attempt"},
    {"C2", "Validity: validity = TTL - elapsed - drift > 0, quorum formed before start + validity"},
    {"C3",
     "Exclusion: the claimed windows of different holders of one resource or permit do not "
     "overlap"},
    {"C4", "In-window use: unfenced resource operations fall inside their holder's window"},
    {"C5", "Token uniqueness: no two acquisitions share a fencing token on one resource or permit"},
    {"C6", "Token monotonicity: A ok before B invoked implies token B > token A on what both hold"},
    {"C7",
     "Fenced resource: nothing accepted below the high-water mark; log tokens never decrease"},
    {"C8", "No lost update: the final resource state holds every accepted update"},
    {"C9", "Safe release: a release never deletes another holder's value"},
    {"C10", "Cleanup: no node keeps a released value, none keeps a value longer than the TTL"},
    {"C11",
     "Liveness: after faults heal, acquires succeed within their budget (the probe; clients a "
     "fault asks it of)"},
    {"C12", "Extension: on a majority, within validity, within the renewal cap"},
    {"C13", "Semaphore capacity: never more holders at once than permits, each permit in range"},
    {"C14",
     "Nested holds: a reentrant hold begins and is used inside its lock's window, is no "
     "acquisition, and is told of the loss"},
    {"C15",
     "Leadership: at most one leader at a time, and each leader's term above every earlier "
     "leader's"},
    {"C16",
     "Fair order: no waiter in line is overtaken by one whose ticket was drawn after its own "
     "was recorded, and that later ticket is larger"},
    {"C17",
     "Set turn: once a set waiter's place in a member's line is recorded, no other client "
     "acquires that member twice before the set does"},
}};

bool valid_index(int index) noexcept { return index >= 0 && index < kInvariantCount; }

}  // namespace

std::string_view invariant_id(int index) noexcept {
  return valid_index(index) ? kInvariants[static_cast<std::size_t>(index)].id : "C?";
}

std::string_view invariant_title(int index) noexcept {
  return valid_index(index) ? kInvariants[static_cast<std::size_t>(index)].title : "";
}

int invariant_index(std::string_view id) noexcept {
  for (int index = 0; index < kInvariantCount; ++index) {
    if (kInvariants[static_cast<std::size_t>(index)].id == id) return index;
  }
  return -1;
}

std::string_view to_string(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::holds:
      return "holds";
    case Verdict::violated:
      return "violated";
    case Verdict::not_applicable:
      return "not_applicable";
  }
  return "unknown";
}

CheckResult check_history(const History& history) {
  using Check = Verdict (*)(const Context&, std::vector<Finding>&);
  static constexpr std::array<Check, kInvariantCount> kChecks{
      check_quorum,
      check_validity,
      check_exclusion,
      check_in_window_use,
      check_token_uniqueness,
      check_token_monotonicity,
      check_fenced_resource,
      check_no_lost_update,
      check_safe_release,
      check_cleanup,
      check_liveness,
      check_extension,
      check_semaphore_capacity,
      check_nested_holds,
      check_leadership,
      check_fair_order,
      check_set_turn,
  };
  const Context context(history);
  CheckResult result;
  for (std::size_t i = 0; i < kChecks.size(); ++i) {
    result.verdicts[i] = kChecks[i](context, result.findings);
  }
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.t < b.t; });
  return result;
}

}  // namespace redlock::chaos
