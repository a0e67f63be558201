// A NodeConnection's unanswered requests: one timer for the earliest
// deadline; a request past it is answered "timeout" (its operation let go
// at once), and a connection that has owed its oldest answer for the stall
// limit is reset. The session itself is in node_connection.cpp.
#include <algorithm>
#include <string>

#include "redlock/clock.hpp"
#include "text/escape.hpp"
#include "transport/loop_context.hpp"
#include "transport/node_connection.hpp"
#include "transport/node_connection_inside.hpp"
#include "transport/node_slot.hpp"
#include "transport/resp_writer.hpp"

namespace redlock::detail {

namespace {

// How many full read buffers a deadline reads before judging (64 KiB).
constexpr int kMaxReadsBeforeDeadline = 4;

}  // namespace

void NodeConnection::arm_deadline() {
  TimePoint earliest = TimePoint::max();
  for (const Slot& slot : slots_) {
    if (!slot.handshake && !slot.answered) earliest = std::min(earliest, slot.deadline);
  }
  // And the moment a node that owes an answer to a timed-out request has
  // stalled for good (on_deadline resets the connection then).
  earliest = std::min(earliest, stall_deadline());
  if (earliest == deadline_armed_for_) return;
  loop_.timers().cancel(deadline_timer_);
  deadline_timer_ = TimerQueue::kNone;
  deadline_armed_for_ = earliest;
  if (earliest == TimePoint::max()) return;
  const auto wait = std::chrono::ceil<Microseconds>(earliest - SteadyClock::now());
  deadline_timer_ = loop_.timers().schedule_after(std::max(wait, Microseconds(0)), [this] {
    deadline_timer_ = TimerQueue::kNone;
    deadline_armed_for_ = TimePoint::max();
    on_deadline();
  });
}

void NodeConnection::read_arrived() {
  if (tcp_ == nullptr || (state_ != State::handshaking && state_ != State::ready)) return;
  uv_os_fd_t fd = -1;
  if (uv_fileno(tcp_->handle(), &fd) != 0) return;
  const std::uint64_t generation = generation_;
  // Bounded: a node that never stops sending is the reader's budget's to
  // stop, and the loop's to go on with meanwhile.
  for (int read = 0; read < kMaxReadsBeforeDeadline && generation == generation_; ++read) {
    const std::span<char> shared = loop_.read_buffer();
    const ssize_t got = ::recv(fd, shared.data(), shared.size(), MSG_DONTWAIT);
    if (got == 0) {
      on_read(UV_EOF, nullptr);
      return;
    }
    // Nothing more (EAGAIN), or an error the loop's own read reports.
    if (got < 0) return;
    on_read(got, shared.data());
    if (static_cast<std::size_t>(got) < shared.size()) return;
  }
}

void NodeConnection::on_deadline() {
  const std::uint64_t generation = generation_;
  // libuv runs due timers before it polls for I/O: after the loop was busy
  // past a request's deadline, the answer may be waiting in the socket.
  // What has arrived is read before any request is judged late, so a stall
  // of the client's own (a long callback, the process descheduled) is not
  // charged to the node.
  read_arrived();
  if (generation != generation_) return;
  const TimePoint now = SteadyClock::now();
  const std::string detail =
      "no answer within " +
      number_text(std::chrono::duration_cast<Milliseconds>(request_timeout_).count()) + " ms";
  // Index loop: a sink may send() more requests, which appends to slots_.
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (slot.handshake || slot.answered || slot.deadline > now) continue;
    slot.answered = true;
    if (!slot.sink) continue;
    stats_.timeouts.fetch_add(1, std::memory_order_relaxed);
    // From now on the slot only keeps its place for the late reply, which
    // nobody reads: the operation (the sink) and the request's bytes go
    // now, not when the node answers — a stalled node must not keep every
    // operation sent to it alive. A cleanup keeps its bytes: it is sent
    // again after a reset.
    std::shared_ptr<ResponseSink> sink = std::move(slot.sink);
    slot.prepared = nullptr;
    if (!slot.cleanup) std::string().swap(slot.tail);
    NodeResponse response;
    response.kind = NodeResponse::Kind::timeout;
    response.detail = detail;
    response.may_have_run = slot.written;
    response.latency = std::chrono::ceil<Microseconds>(loop_.clock().now() - slot.sent_at);
    const std::uint32_t tag = slot.tag;
    sink->on_response(index_, tag, response);
    if (generation != generation_) return;
  }
  if (now >= stall_deadline()) {
    reset("no answer for " +
          number_text(std::chrono::duration_cast<Milliseconds>(stall_limit()).count()) +
          " ms: connection reset");
    return;
  }
  arm_deadline();
}

Microseconds NodeConnection::stall_limit() const noexcept {
  const Microseconds wait = node_.min_replicas > 0 ? Microseconds(wait_timeout_) : Microseconds(0);
  return request_timeout_ * kStallTimeouts + wait;
}

const NodeConnection::Slot* NodeConnection::oldest_timed_out() const noexcept {
  // Replies come in order, so the first request still waiting is the one
  // the node owes first; the handshake has the connect timeout, and a
  // command without deadline (SUBSCRIBE) is not a request.
  for (const Slot& slot : slots_) {
    if (slot.handshake || slot.deadline == TimePoint::max()) continue;
    return slot.answered ? &slot : nullptr;
  }
  return nullptr;
}

TimePoint NodeConnection::stall_deadline() const noexcept {
  const Slot* oldest = oldest_timed_out();
  return oldest != nullptr ? oldest->deadline - timeout_of(*oldest) + stall_limit()
                           : TimePoint::max();
}

Microseconds NodeConnection::timeout_of(const Slot& slot) const noexcept {
  // A script may ask for more than the node timeout (a release's requests).
  if (slot.script == nullptr) return request_timeout_;
  return std::max<Microseconds>(request_timeout_, slot.script->min_timeout);
}

bool NodeConnection::unresponsive() const noexcept {
  if (slots_.size() < kMaxQueuedWhileUnresponsive) return false;
  // A session still being set up a request timeout after the connect began
  // is as overdue as a request that timed out.
  const bool setup_overdue = (state_ == State::connecting || state_ == State::handshaking) &&
                             SteadyClock::now() - connect_started_ >= request_timeout_;
  return setup_overdue || oldest_timed_out() != nullptr;
}

std::string NodeConnection::unresponsive_text() const {
  return "unresponsive: " + number_text(static_cast<long long>(slots_.size())) +
         " requests unanswered";
}

}  // namespace redlock::detail
