// Observe (docs/engine.md, "Leader election"): follows an election's
// leader. Reads it by majority (an inspection of the election's resource)
// at once, again whenever a release or an election is published on the
// election's channels, and every poll interval besides; calls back with the
// first view and with every change of leader (term or payload, or a leader
// appearing or going), and once at the end with cancelled / shutting_down.
#pragma once

#include <optional>

#include "operations/client_core.hpp"
#include "operations/operation.hpp"
#include "operations/wakeup_hub.hpp"
#include "redlock/async_client.hpp"
#include "redlock/election.hpp"
#include "transport/timer_queue.hpp"

namespace redlock::detail {

class ObserveOperation final : public Operation, public Wakeable {
 public:
  ObserveOperation(ClientCore& core, Election election, const ObserveOptions& options,
                   AsyncClient::LeaderCallback callback);

  void start();
  void on_response(std::size_t, std::uint32_t, const NodeResponse&) override {}
  void cancel() override;
  void abort(std::error_code why) override;
  // A release or an election was published: read again (never counts as
  // the one waiter a release wakes: other waiters of the client still are).
  bool wake() override;
  // Another node's copy of a release: read again as well (reads in a row
  // fold into one more), since the read the first copy started may have
  // reached the nodes before the release did.
  void heard_again() override { read(); }

 private:
  void read();
  void on_read(Inspection inspection);
  // Reads again after `after` (the poll, or a settling read).
  void schedule_read(Microseconds after);
  // No more reads; returns the callback, for its last call.
  [[nodiscard]] AsyncClient::LeaderCallback stop();
  // Whether `next` differs from what was last delivered.
  [[nodiscard]] bool changed(const LeaderResult& next) const;

  Election election_;
  Microseconds poll_;
  AsyncClient::LeaderCallback callback_;
  std::string release_channel_;
  std::string elected_channel_;
  TimerQueue::Id poll_timer_ = TimerQueue::kNone;
  bool reading_ = false;
  bool read_again_ = false;
  bool done_ = false;
  std::optional<LeaderResult> last_;
  // The last leader seen: its lock value and term.
  std::string last_value_;
  std::uint64_t last_term_ = 0;
  // Reads in a row that found a new leader still in its token round.
  int settle_reads_ = 0;
};

}  // namespace redlock::detail
