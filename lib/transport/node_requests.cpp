// NodeConnection's requests on their way out: encoding a script request
// (or a prepared one), leaving batchable requests pending until the loop
// turn's flush, and encoding a run of them as one call of the script's
// batched form (transport/script.hpp); a NOSCRIPT answer sends the
// request or the batch again as EVAL, and a batch's reply is handed out
// per request. The session itself is in node_connection.cpp.
#include <hiredis/hiredis.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/hash_slot.hpp"
#include "protocol/validity.hpp"
#include "transport/loop_context.hpp"
#include "transport/node_connection.hpp"
#include "transport/node_slot.hpp"
#include "transport/resp_writer.hpp"

namespace redlock::detail {

std::string_view NodeConnection::tail_of(const Slot& slot) noexcept {
  return slot.prepared != nullptr ? slot.prepared->tail() : std::string_view(slot.tail);
}

namespace {

// "numkeys key... arg..." as RESP bulk strings: what follows the script's
// name in EVALSHA and EVAL alike.
template <typename Keys, typename Args>
std::string encode_tail(const Keys& keys, const Args& args, TailLayout& layout) {
  // Sized once: growing it argument by argument was most of a request's
  // allocations.
  std::size_t size = 16;
  for (std::string_view key : keys) size += key.size() + 16;
  for (std::string_view arg : args) size += arg.size() + 16;
  std::string tail;
  tail.reserve(size);
  append_bulk(tail, number_text(static_cast<long long>(keys.size())));
  layout.keys_offset = static_cast<std::uint32_t>(tail.size());
  layout.second_key_offset = layout.keys_offset;
  std::size_t index = 0;
  for (std::string_view key : keys) {
    append_bulk(tail, key);
    if (index++ == 0) layout.second_key_offset = static_cast<std::uint32_t>(tail.size());
  }
  layout.args_offset = static_cast<std::uint32_t>(tail.size());
  for (std::string_view arg : args) append_bulk(tail, arg);
  return tail;
}

// "*argc EVALSHA sha" or "*argc EVAL body": the head of a script request.
void append_script_head(std::string& out, const Script& script, std::size_t argc, bool use_eval) {
  append_array_header(out, argc);
  if (use_eval) {
    append_bulk(out, "EVAL");
    append_bulk(out, script.body);
  } else {
    append_bulk(out, "EVALSHA");
    append_bulk(out, script.sha1);
  }
}

}  // namespace

PreparedRequest::PreparedRequest(const Script& script, std::initializer_list<std::string_view> keys,
                                 std::initializer_list<std::string_view> args)
    : script_(&script),
      argc_(static_cast<std::uint32_t>(3 + keys.size() + args.size())),
      key_count_(static_cast<std::uint32_t>(keys.size())) {
  encode(encode_tail(keys, args, layout_));
}

PreparedRequest::PreparedRequest(const ScriptCall& call)
    : script_(call.script),
      argc_(static_cast<std::uint32_t>(3 + call.keys.size() + call.args.size())),
      key_count_(static_cast<std::uint32_t>(call.keys.size())) {
  encode(encode_tail(call.keys, call.args, layout_));
}

void PreparedRequest::encode(std::string tail) {
  // Only the tail is kept, at exactly its size: a held lock keeps its
  // request for as long as it is held, and the "EVALSHA sha" head (64
  // bytes) is the same for every request of a script, written per send.
  tail_ = std::move(tail);
  tail_.shrink_to_fit();
}

void NodeConnection::send(Request request) {
  if (request.script == nullptr) {
    send_plain_command(request.command, request.sent_at, std::move(request.sink), request.tag);
    return;
  }
  if (request.cleanup) {
    if (state_ == State::closed) return;
    DeferredCleanup cleanup{request.script, {}, {}, 0, 0, request.expires_at};
    if (request.call != nullptr) {
      cleanup.key_count = request.call->keys.size();
      cleanup.argc = 3 + request.call->keys.size() + request.call->args.size();
      cleanup.tail = encode_tail(request.call->keys, request.call->args, cleanup.layout);
    } else {
      cleanup.key_count = request.keys.size();
      cleanup.argc = 3 + request.keys.size() + request.args.size();
      cleanup.tail = encode_tail(request.keys, request.args, cleanup.layout);
    }
    send_cleanup_encoded(std::move(cleanup));
    return;
  }
  if (request.prepared != nullptr) {
    send_prepared_request(*request.prepared, request.sent_at, std::move(request.sink), request.tag);
    return;
  }
  TailLayout layout;
  std::string tail;
  std::size_t key_count = 0;
  std::size_t arg_count = 0;
  if (request.call != nullptr) {
    tail = encode_tail(request.call->keys, request.call->args, layout);
    key_count = request.call->keys.size();
    arg_count = request.call->args.size();
  } else {
    tail = encode_tail(request.keys, request.args, layout);
    key_count = request.keys.size();
    arg_count = request.args.size();
  }
  send_encoded(*request.script, std::move(tail), layout, key_count, 3 + key_count + arg_count,
               request.require_replicas, request.sent_at, std::move(request.sink), request.tag);
}

bool NodeConnection::failed_before_queueing(std::shared_ptr<ResponseSink>& sink,
                                            std::uint32_t tag) {
  if (state_ == State::backoff || state_ == State::closed || state_ == State::idle) {
    fail_later(std::move(sink), tag,
               last_error_.empty() ? std::string("not connected") : last_error_);
    return true;
  }
  if (unresponsive()) {
    fail_later(std::move(sink), tag, unresponsive_text());
    return true;
  }
  return false;
}

void NodeConnection::send_plain_command(std::span<const std::string_view> words, TimePoint sent_at,
                                        std::shared_ptr<ResponseSink> sink, std::uint32_t tag) {
  if (words.empty()) {
    fail_later(std::move(sink), tag, "no command");
    return;
  }
  if (failed_before_queueing(sink, tag)) return;
  // Encoded in queue order: what is pending goes out before this one (a
  // reply is matched to its request by position).
  emit_pending();
  Slot& slot = slots_.emplace_back();
  slot.sink = std::move(sink);
  slot.tag = tag;
  // The whole command, encoded once: emit_pending and append_request write
  // a slot without a script as its tail alone.
  append_array_header(slot.tail, words.size());
  for (const std::string_view word : words) append_bulk(slot.tail, word);
  slot.argc = words.size();
  note_subscription(words);
  queue_script(slot, sent_at, state_ != State::ready);
}

void NodeConnection::send_prepared_request(const PreparedRequest& request, TimePoint sent_at,
                                           std::shared_ptr<ResponseSink> sink, std::uint32_t tag) {
  if (failed_before_queueing(sink, tag)) return;
  // Built in its place in the queue: a slot is large, and moving it per
  // request was a measurable part of a renewal. An extend waits for the
  // turn's flush like the other batchable requests: the renewals of many
  // guards due in one turn then leave as one batched call per node.
  const bool batchable = request.script().batched;
  if (!batchable) emit_pending();
  Slot& slot = slots_.emplace_back();
  slot.sink = std::move(sink);
  slot.tag = tag;
  slot.script = &request.script();
  slot.argc = request.argc();
  slot.prepared = &request;
  slot.layout = request.layout();
  slot.key_count = static_cast<std::uint16_t>(request.key_count());
  queue_script(slot, sent_at, batchable);
}

void NodeConnection::send_encoded(const Script& script, std::string tail, TailLayout layout,
                                  std::size_t key_count, std::size_t argc, bool require_replicas,
                                  TimePoint sent_at, std::shared_ptr<ResponseSink> sink,
                                  std::uint32_t tag) {
  if (failed_before_queueing(sink, tag)) return;
  const bool with_wait = require_replicas && node_.min_replicas > 0;
  const bool batchable = !with_wait && script.batched;
  // Encoded in queue order: what is pending goes out before this one.
  if (!batchable) emit_pending();
  Slot& slot = slots_.emplace_back();
  slot.sink = std::move(sink);
  slot.tag = tag;
  slot.script = &script;
  slot.argc = argc;
  slot.tail = std::move(tail);
  slot.layout = layout;
  slot.key_count = static_cast<std::uint16_t>(key_count);
  slot.with_wait = with_wait;
  slot.expected = slot.with_wait ? 2 : 1;
  queue_script(slot, sent_at, batchable);
}

void NodeConnection::send_cleanup_encoded(DeferredCleanup cleanup) {
  // A node that takes no more requests (unresponsive()) takes no more
  // cleanups either: a refused release comes back here as a cleanup, and
  // queueing it would grow the queue by one per refusal. It waits in the
  // bounded deferred list until the node answers again.
  if (state_ == State::backoff || state_ == State::idle || unresponsive()) {
    defer_cleanup(std::move(cleanup));
    return;
  }
  if (!cleanup.script->batched) emit_pending();
  queue_cleanup(std::move(cleanup), loop_.clock().now());
}

void NodeConnection::queue_cleanup(DeferredCleanup cleanup, TimePoint now) {
  Slot& slot = slots_.emplace_back();
  slot.script = cleanup.script;
  slot.argc = cleanup.argc;
  slot.tail = std::move(cleanup.tail);
  slot.layout = cleanup.layout;
  slot.key_count = static_cast<std::uint16_t>(cleanup.key_count);
  slot.cleanup = true;
  slot.expires_at = cleanup.expires_at;
  queue_script(slot, now, slot.script->batched);
}

void NodeConnection::defer_cleanup(DeferredCleanup cleanup) {
  if (state_ == State::closed || loop_.clock().now() >= cleanup.expires_at) return;
  if (deferred_cleanups_.size() >= kMaxDeferredCleanups) {
    // Bounded: the oldest entry is the one closest to expiring by itself.
    deferred_cleanups_.erase(deferred_cleanups_.begin());
  }
  deferred_cleanups_.push_back(std::move(cleanup));
}

void NodeConnection::resend_deferred_cleanups() {
  if (deferred_cleanups_.empty()) return;
  std::vector<DeferredCleanup> due = std::exchange(deferred_cleanups_, {});
  const TimePoint now = loop_.clock().now();
  for (DeferredCleanup& entry : due) {
    if (now >= entry.expires_at) continue;
    if (unresponsive()) {
      defer_cleanup(std::move(entry));
    } else {
      queue_cleanup(std::move(entry), now);
    }
  }
}

void NodeConnection::queue_script(Slot& slot, TimePoint sent_at, bool defer) {
  slot.sent_at = sent_at;
  // A request queued before the session is ready also waits for the connect
  // and handshake, which the connect timeout bounds; counting that against
  // the request timeout would fail every first request of a short-lived
  // process on a slower network. Validity still counts from t0.
  slot.before_ready = state_ != State::ready;
  const Microseconds setup = slot.before_ready ? Microseconds(connect_timeout_) : Microseconds(0);
  // With the steady clock as the client's clock (loop_context.hpp), one
  // reading serves validity and the request deadline alike.
  const TimePoint now = loop_.clock_is_steady() ? sent_at : SteadyClock::now();
  slot.deadline = now + setup + timeout_of(slot) +
                  (slot.with_wait ? Microseconds(wait_timeout_) : Microseconds(0));
  // Nothing that could grant leaves before the handshake has been
  // answered: a node that froze after accepting the connection would run it
  // when it resumes, after this client had given up on the connection and
  // could no longer send the request's cleanup behind it. Until then every
  // request waits, unencoded, for emit_pending.
  if (defer || state_ != State::ready) {
    ++pending_count_;
  } else {
    encode_lone(slots_.size() - 1, false);
    slot.written = true;
  }
  want_flush();
  if (slot.deadline < deadline_armed_for_) arm_deadline();
}

void NodeConnection::emit_pending() {
  if (pending_count_ == 0 || state_ != State::ready) return;
  std::size_t i = slots_.size() - pending_count_;
  pending_count_ = 0;
  while (i < slots_.size()) {
    Slot& slot = slots_[i];
    if (slot.answered && !slot.cleanup) {
      // Its sink was told `timeout` while it still waited to leave: it must
      // not run on the node now. A PING keeps its place in the queue.
      slot.sink.reset();
      slot.script = nullptr;
      slot.prepared = nullptr;
      slot.with_wait = false;
      slot.expected = 1;
      append_command(outbuf_, {"PING"});
      ++i;
      continue;
    }
    std::size_t run = 1;
    while (i + run < slots_.size() && run < kMaxBatch && batches_with(slots_[i], slots_[i + run])) {
      ++run;
    }
    if (run == 1) {
      encode_lone(i, false);
    } else {
      append_batch(i, run, false);
      stats_.batched.fetch_add(run, std::memory_order_relaxed);
    }
    for (std::size_t k = i; k < i + run; ++k) slots_[k].written = true;
    i += run;
  }
}

bool NodeConnection::batches_with(const Slot& first, const Slot& next) const {
  // The same script and number of arguments, and the same keys after the
  // first (they are sent once for the whole batch, scripts.hpp). Requests
  // queued before the session was ready include every kind: only a
  // batchable script without WAIT joins a batch.
  if (first.script == nullptr || !first.script->batched || first.with_wait || next.with_wait ||
      (next.answered && !next.cleanup)) {
    return false;
  }
  if (next.script != first.script || next.argc != first.argc || next.key_count != first.key_count) {
    return false;
  }
  if (setup_.one_slot_per_call && first.key_count > 0) {
    std::size_t first_at = first.layout.keys_offset;
    std::size_t next_at = next.layout.keys_offset;
    if (hash_slot(next_tail_bulk(tail_of(first), first_at).bytes) !=
        hash_slot(next_tail_bulk(tail_of(next), next_at).bytes)) {
      return false;
    }
  }
  const std::string_view mine = tail_of(first).substr(
      first.layout.second_key_offset, first.layout.args_offset - first.layout.second_key_offset);
  const std::string_view theirs = tail_of(next).substr(
      next.layout.second_key_offset, next.layout.args_offset - next.layout.second_key_offset);
  return mine == theirs;
}

void NodeConnection::append_head(const Script& requested, std::size_t argc, bool use_eval) {
  const Script& script = sent_as(requested);
  const std::size_t bit = script.number;
  append_script_head(outbuf_, script, argc, use_eval || !loaded_.test(bit));
  loaded_.set(bit);
}

void NodeConnection::append_batch(std::size_t first, std::size_t count, bool use_eval) {
  // EVALSHA sha numkeys, the shared keys once (from the first request: the
  // run holds only requests with the same ones, batches_with), each
  // request's first key, then every request's arguments.
  const Slot& head = slots_[first];
  if (head.script->transaction) {
    append_transaction(first, count);
    return;
  }
  const std::size_t shared = head.key_count - 1U;
  const std::size_t args = head.argc - 3 - head.key_count;
  append_head(*head.script, 3 + shared + count * (1 + args), use_eval);
  append_bulk(outbuf_, number_text(static_cast<long long>(shared + count)));
  outbuf_.append(tail_of(head).substr(head.layout.second_key_offset,
                                      head.layout.args_offset - head.layout.second_key_offset));
  for (std::size_t i = first; i < first + count; ++i) {
    const Slot& slot = slots_[i];
    outbuf_.append(tail_of(slot).substr(slot.layout.keys_offset,
                                        slot.layout.second_key_offset - slot.layout.keys_offset));
  }
  for (std::size_t i = first; i < first + count; ++i) {
    const Slot& slot = slots_[i];
    outbuf_.append(tail_of(slot).substr(slot.layout.args_offset));
  }
  slots_[first].batch_size = static_cast<std::uint16_t>(count);
  if (count == 1 && head.with_wait) {
    append_command(outbuf_,
                   {"WAIT", number_text(node_.min_replicas), number_text(wait_timeout_.count())});
  }
}

void NodeConnection::append_transaction(std::size_t first, std::size_t count) {
  std::array<EncodedRequest, kMaxBatch> requests{};
  for (std::size_t i = 0; i < count; ++i) {
    requests[i] = {tail_of(slots_[first + i]), slots_[first + i].layout};
  }
  const std::size_t skip = slots_[first].script->transaction->encode(
      outbuf_, std::span<const EncodedRequest>(requests.data(), count));
  slots_[first].batch_size = static_cast<std::uint16_t>(count);
  // The replies before EXEC's (MULTI's, each queued command's).
  slots_[first].skip = static_cast<std::uint16_t>(skip);
}

void NodeConnection::encode_lone(std::size_t index, bool use_eval) {
  Slot& slot = slots_[index];
  if (slot.script == nullptr || !slot.script->batched) {
    append_request(slot, use_eval);
    return;
  }
  if (slot.prepared != nullptr && !use_eval && slot.script->shared_keys == 0 && !slot.with_wait) {
    // Without shared keys a batch of one is the request as it was prepared,
    // byte for byte: its tail behind the script's head (either head).
    append_head(*slot.script, slot.argc, false);
    outbuf_ += slot.prepared->tail();
    slot.batch_size = 1;
    return;
  }
  append_batch(index, 1, use_eval);
}

void NodeConnection::append_request(const Slot& slot, bool use_eval) {
  if (slot.script == nullptr) {
    // A plain command (send_plain_command): its tail is all of it.
    outbuf_ += slot.tail;
    return;
  }
  append_head(*slot.script, slot.argc, use_eval);
  outbuf_ += tail_of(slot);
  if (slot.with_wait) {
    append_command(outbuf_,
                   {"WAIT", number_text(node_.min_replicas), number_text(wait_timeout_.count())});
  }
}

void NodeConnection::resend_with_eval(std::size_t count) {
  // The node lost its script cache (restart, SCRIPT FLUSH): the request, or
  // the batch, goes again with its script's body; EVAL also caches the
  // script again for the next EVALSHA. A request that timed out meanwhile
  // does not go again: it was reported as not answered, and running it now,
  // behind the clean-ups sent since, could leave a grant nobody undoes.
  std::vector<Slot> again;
  again.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    Slot slot = slots_.take_front();
    if (slot.answered && !slot.cleanup) continue;
    again.push_back(std::move(slot));
  }
  if (again.empty()) return;
  emit_pending();
  const std::size_t first = slots_.size();
  for (Slot& slot : again) {
    slot.evaled = true;
    slot.received = 0;
    slot.replies = {};
    slot.batch_size = 0;
    slots_.push_back(std::move(slot));
  }
  if (again.size() == 1) {
    encode_lone(first, true);
  } else {
    append_batch(first, again.size(), true);
  }
  want_flush();
}

void NodeConnection::complete_transaction(TimePoint received_at) {
  Slot& front = slots_.front();
  const TransactionForm& form = *front.script->transaction;
  const std::size_t count = front.batch_size;
  const ReplyPtr exec = std::move(front.replies[0]);
  const ReplyPtr queued_error = std::move(front.replies[1]);
  // A failed transaction (EXECABORT after a refused command, or EXEC
  // without MULTI when MULTI itself was refused) is every request's
  // answer; the refused command's own error says why.
  const redisReply* whole = queued_error                      ? queued_error.get()
                            : exec->type == REDIS_REPLY_ERROR ? exec.get()
                                                              : nullptr;
  // (A transaction holds at most kMaxBatch requests: emit_pending.)
  if (count > kMaxBatch || (whole == nullptr && !form.answers(*exec, count))) {
    reset("transaction reply out of step: " + number_text(static_cast<long long>(count)) +
          " requests");
    return;
  }
  // Each request's answer, read once; the cleanups its form asks for go
  // first, ahead of anything the answers make their callers send.
  std::array<TransactionAnswer, kMaxBatch> answers{};
  const TimePoint now = loop_.clock().now();
  ScriptCall cleanup;
  for (std::size_t i = 0; i < count; ++i) {
    const EncodedRequest request{tail_of(slots_[i]), slots_[i].layout};
    Milliseconds lives{0};
    const bool undo = whole != nullptr ? form.cleanup_after_failure(request, cleanup, lives)
                                       : form.answer(*exec, i, request, answers[i], cleanup, lives);
    if (whole != nullptr) answers[i].passed = whole;
    // Kept while what it undoes may live: from now (the node ran the
    // transaction no later), plus the clock-drift allowance.
    if (undo) send_cleanup(cleanup, now + lives + drift_allowance(lives, drift_factor_, drift_ms_));
  }
  if (whole != nullptr) refused_transaction_ = true;
  const std::uint64_t generation = generation_;
  AnswerTally tally;
  for (std::size_t i = 0; i < count && generation == generation_; ++i) {
    const TransactionAnswer& answer = answers[i];
    // The answer as a script's array reply, made here: valid for the call.
    std::array<redisReply, 3> numbers{};
    std::array<redisReply*, 3> elements{};
    for (std::size_t k = 0; k < answer.count; ++k) {
      numbers[k].type = REDIS_REPLY_INTEGER;
      numbers[k].integer = answer.numbers[k];
      elements[k] = &numbers[k];
    }
    redisReply made{};
    made.type = REDIS_REPLY_ARRAY;
    made.elements = answer.count;
    made.element = elements.data();
    const std::array<const redisReply*, 1> mine{answer.passed != nullptr ? answer.passed : &made};
    deliver_front(mine.data(), 1, received_at, &tally);
  }
  flush_answers(tally);
}

void NodeConnection::complete_batch(TimePoint received_at) {
  Slot& front = slots_.front();
  if (front.script->transaction) {
    complete_transaction(received_at);
    return;
  }
  const std::size_t count = front.batch_size;
  const ReplyPtr reply = std::move(front.replies[0]);
  const ReplyPtr wait = std::move(front.replies[1]);
  const bool per_request = reply->type == REDIS_REPLY_ARRAY && reply->elements == count;
  if (!per_request && reply->type != REDIS_REPLY_ERROR) {
    reset("batched reply out of step: " + number_text(static_cast<long long>(count)) + " requests");
    return;
  }
  // An error for the whole call (BUSY, OOM, a denied command) is every
  // request's answer.
  const std::uint64_t generation = generation_;
  AnswerTally tally;
  for (std::size_t i = 0; i < count && generation == generation_; ++i) {
    // A lone request with WAIT behind it (count 1) gets WAIT's answer too.
    const std::array<const redisReply*, 2> mine{per_request ? reply->element[i] : reply.get(),
                                                wait.get()};
    deliver_front(mine.data(), wait ? 2 : 1, received_at, &tally);
  }
  flush_answers(tally);
}

}  // namespace redlock::detail
