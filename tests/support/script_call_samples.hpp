// One call of every script, built through its struct
// (scripts/script_calls.hpp) with plausible values: what
// tests/unit/script_calls_test.cpp checks against the Lua's reads and
// tests/integration/script_calls_test.cpp sends to a real node.
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "scripts/script_calls.hpp"

namespace redlock::test {

struct ScriptCallSample {
  std::string name;
  detail::ScriptCall call;
};

// Every script of the table but acquire_set (a transaction, no body: its
// encoding is tests/unit/set_acquire_test.cpp's).
inline std::vector<ScriptCallSample> script_call_samples() {
  using namespace detail;  // NOLINT(google-build-using-namespace): the structs
  const std::string marker = "t:node";
  const std::string recovering = "t:recovering";
  const std::string fence = "t:fence";
  const std::string lock = "t:lock:r";
  const std::vector<std::string> two_keys{"t:lock:a", "t:lock:b"};
  const std::vector<std::string> two_names{"a", "b"};
  const std::vector<std::string> two_values{"v1", "v2"};
  const std::vector<std::string> counters{"r", "3"};
  const std::vector<std::string> patterns{"t:lock:*", "t:sem:*"};
  const std::vector<ReleasedKey> released{{"t:lock:a", "t:released:a", "t:waiting:a"},
                                          {"t:lock:b", "", ""}};
  const QueueKeys queue{"t:queue:r", "t:queue-due:r", "t:queue-claim:r"};
  std::vector<ScriptCallSample> out;
  const auto add = [&out](std::string name, ScriptCall call) {
    out.push_back({std::move(name), std::move(call)});
  };
  add("acquire", encode(AcquireCall{.lock_key = lock,
                                    .marker_key = marker,
                                    .recovering_key = recovering,
                                    .fence_key = fence,
                                    .value = "v1",
                                    .ttl_ms = "1000",
                                    .fence_field = "r",
                                    .amnesia_defence = false,
                                    .line = ""}));
  add("extend", encode(ExtendCall{.lock_key = lock, .value = "v1", .ttl_ms = "1000"}));
  add("release", encode(ReleaseCall{.lock_key = lock,
                                    .marker_key = marker,
                                    .recovering_key = recovering,
                                    .value = "v1",
                                    .channel = "t:released:r",
                                    .waiting_set = "t:waiting:r",
                                    .rejoin = ""}));
  add("fence", encode(FenceCall{.fence_key = fence,
                                .marker_key = marker,
                                .recovering_key = recovering,
                                .field = "r",
                                .token = "5",
                                .amnesia_defence = false}));
  add("probe", encode(ProbeCall{.marker_key = marker,
                                .recovering_key = recovering,
                                .fence_key = fence,
                                .lock_pattern = patterns[0],
                                .permit_pattern = patterns[1]}));
  add("recover", encode(RecoverCall{.marker_key = marker,
                                    .recovering_key = recovering,
                                    .fence_key = fence,
                                    .delay_ms = "0",
                                    .marker_value = "m",
                                    .recovering_value = "recovering",
                                    .counters = counters}));
  add("remerge",
      encode(RemergeCall{.recovering_key = recovering, .fence_key = fence, .counters = counters}));
  add("declare_new", encode(DeclareNewCall{.marker_key = marker,
                                           .recovering_key = recovering,
                                           .fence_key = fence,
                                           .marker_value = "m",
                                           .first_init_prefix = kFirstInitMarkerPrefix,
                                           .lock_patterns = patterns}));
  add("check_marker", encode(CheckMarkerCall{.marker_key = marker}));
  add("check_slot_markers",
      encode(CheckSlotMarkersCall{.key_prefix = "redlock:", .slot_tag = "0th"}));
  static const std::array<std::string_view, 2> tags{"0th", "a"};
  add("declare_new_slots", encode(DeclareNewSlotsCall{.key_prefix = "redlock:",
                                                      .marker_value = "m",
                                                      .first_init_prefix = kFirstInitMarkerPrefix,
                                                      .mark = true,
                                                      .lock_pattern = "redlock:{*}lock:*",
                                                      .permit_pattern = "redlock:{*}sem:*",
                                                      .slot_tags = tags}));
  add("acquire_all", encode(AcquireAllCall{.marker_key = marker,
                                           .recovering_key = recovering,
                                           .fence_key = fence,
                                           .lock_keys = two_keys,
                                           .value = "v1",
                                           .ttl_ms = "1000",
                                           .amnesia_defence = false,
                                           .fenced = true,
                                           .fence_fields = two_names}));
  add("extend_all", encode(ExtendAllCall{.lock_keys = two_keys, .value = "v1", .ttl_ms = "1000"}));
  add("release_all", encode(ReleaseAllCall{.marker_key = marker,
                                           .recovering_key = recovering,
                                           .value = "v1",
                                           .released = released}));
  add("adopt_all", encode(AdoptAllCall{.marker_key = marker,
                                       .recovering_key = recovering,
                                       .lock_keys = two_keys,
                                       .value = "v3",
                                       .ttl_ms = "1000",
                                       .amnesia_defence = false,
                                       .held_values = two_values}));
  add("fence_all", encode(FenceAllCall{.marker_key = marker,
                                       .recovering_key = recovering,
                                       .fence_key = fence,
                                       .amnesia_defence = false,
                                       .token = "7",
                                       .fields = two_names}));
  add("permit_acquire", encode(PermitAcquireCall{.marker_key = marker,
                                                 .recovering_key = recovering,
                                                 .fence_key = fence,
                                                 .count_key = "t:permits:s",
                                                 .value = "v1",
                                                 .ttl_ms = "1000",
                                                 .amnesia_defence = false,
                                                 .permits = "3",
                                                 .first_permit = "1",
                                                 .permit_key_prefix = "t:sem:s:",
                                                 .fence_field_prefix = "sem:s:"}));
  add("permit_extend", encode(PermitExtendCall{.permit_key = "t:sem:s:1",
                                               .count_key = "t:permits:s",
                                               .value = "v1",
                                               .ttl_ms = "1000",
                                               .permits = "3"}));
  add("inspect lock",
      encode(InspectLockCall{.lock_key = lock, .fence_key = fence, .fence_field = "r"}));
  add("inspect permits", encode(InspectPermitsCall{.count_key = "t:permits:s",
                                                   .fence_key = fence,
                                                   .permit_key_prefix = "t:sem:s:",
                                                   .fence_field_prefix = "sem:s:",
                                                   .permits = "3"}));
  add("read_acquire", encode(ReadAcquireCall{.marker_key = marker,
                                             .recovering_key = recovering,
                                             .fence_key = fence,
                                             .lock_key = "t:lock:shared",
                                             .value = "v1",
                                             .ttl_ms = "1000",
                                             .fence_field = "",
                                             .amnesia_defence = false}));
  add("read_extend",
      encode(ReadExtendCall{.lock_key = "t:lock:shared", .value = "v1", .ttl_ms = "1000"}));
  add("read_release", encode(ReadReleaseCall{.lock_key = "t:lock:shared",
                                             .value = "v1",
                                             .channel = "t:released:shared",
                                             .waiting_set = "t:waiting:shared"}));
  add("announce", encode(AnnounceCall{.channel = "t:released:r#elected", .message = "term:1"}));
  add("fair_acquire", encode(FairAcquireCall{.marker_key = marker,
                                             .recovering_key = recovering,
                                             .fence_key = fence,
                                             .lock_key = lock,
                                             .queue = queue,
                                             .value = "v1",
                                             .ttl_ms = "1000",
                                             .fence_field = "",
                                             .amnesia_defence = false,
                                             .waiter_id = "@c 1",
                                             .ticket = "",
                                             .entry_ttl_ms = "400",
                                             .counter_field = "queue:r"}));
  add("ticket_draw", encode(TicketDrawCall{.marker_key = marker,
                                           .recovering_key = recovering,
                                           .fence_key = fence,
                                           .counter_field = "queue:r",
                                           .amnesia_defence = false}));
  add("ticket_enqueue", encode(TicketEnqueueCall{.marker_key = marker,
                                                 .recovering_key = recovering,
                                                 .fence_key = fence,
                                                 .lock_key = lock,
                                                 .queue = queue,
                                                 .counter_field = "queue:r",
                                                 .ticket = "9",
                                                 .waiter_id = "@c 2",
                                                 .entry_ttl_ms = "400",
                                                 .amnesia_defence = false,
                                                 .claim = ""}));
  add("fair_release", encode(FairReleaseCall{.lock_key = lock,
                                             .queue = queue,
                                             .marker_key = marker,
                                             .recovering_key = recovering,
                                             .fence_key = fence,
                                             .value = "v1",
                                             .channel = "t:released:r",
                                             .leaving_place = "@c 1",
                                             .waiting_set = "t:waiting:r",
                                             .counter_field = "queue:r",
                                             .amnesia_defence = false,
                                             .leaving_claim = "@c 1",
                                             .pre_claim = "",
                                             .next_place = ""}));
  add("queue_leave (line)",
      encode(QueueLeaveCall{
          .sorted_sets = {"t:waiting:r"}, .set_count = 1, .claims_hash = "", .waiter_id = "@c 1"}));
  add("queue_leave (fair)", encode(QueueLeaveCall{.sorted_sets = {queue.queue, queue.due},
                                                  .set_count = 2,
                                                  .claims_hash = queue.claims,
                                                  .waiter_id = "@c 2"}));
  add("pass_turn",
      encode(PassTurnCall{.lock_key = lock, .waiting_set = "t:waiting:r", .value = "v1"}));
  return out;
}

}  // namespace redlock::test
