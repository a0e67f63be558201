#include "scripts/set_acquire.hpp"

#include <charconv>
#include <string>

#include "scripts/script_calls.hpp"
#include "transport/resp_writer.hpp"

namespace redlock::detail {

namespace {

// Where EXEC's answer keeps each command's answer.
constexpr std::size_t kMarker = 0;
constexpr std::size_t kRecovering = 1;
constexpr std::size_t kFirstSet = 2;

// The node rules' verdict: nothing (they allow), or the answer.
bool rules_refuse(const redisReply& exec, bool defence, SetAcquireAnswer& answer) noexcept {
  if (defence) {
    const redisReply* marker = exec.element[kMarker];
    if (marker->type != REDIS_REPLY_INTEGER) {
      answer.passed = marker;
      return true;
    }
    if (marker->integer == 0) {
      answer.code = ReplyCode::unmarked;
      answer.number = 0;
      return true;
    }
  }
  const redisReply* recovering = exec.element[kRecovering];
  if (recovering->type != REDIS_REPLY_INTEGER) {
    answer.passed = recovering;
    return true;
  }
  // -2: no recovering key. Any other answer, -1 included (a key without
  // an expiry), refuses as the script does.
  if (recovering->integer != -2) {
    answer.code = ReplyCode::recovering;
    answer.number = recovering->integer;
    return true;
  }
  return false;
}

}  // namespace

bool answers_set_acquire(const redisReply& exec, std::size_t requests) noexcept {
  return exec.type == REDIS_REPLY_ARRAY && exec.elements == kFirstSet + requests;
}

SetAcquireAnswer set_acquire_answer(const redisReply& exec, std::size_t request,
                                    bool defence) noexcept {
  SetAcquireAnswer answer;
  const redisReply* set = exec.element[kFirstSet + request];
  // SET ... NX answers +OK when it took the key and nil when the key
  // exists; anything else says nothing sure, so the key is released again
  // whatever the answer becomes.
  const bool took = set->type == REDIS_REPLY_STATUS;
  const bool sure = took || set->type == REDIS_REPLY_NIL;
  if (rules_refuse(exec, defence, answer)) {
    answer.undo = !(sure && !took);
    return answer;
  }
  if (!sure) {
    answer.passed = set;
    answer.undo = set->type != REDIS_REPLY_ERROR;
    return answer;
  }
  answer.code = took ? ReplyCode::done : ReplyCode::refused;
  answer.number = took ? 0 : -1;
  return answer;
}

namespace {

// What one request of the transaction carries (its tail, as the acquire
// sent it: KEYS lock key, marker, recovering key; ARGV value, ttl ms,
// amnesia defence).
struct SetRequest {
  TailBulk key;
  TailBulk marker;
  TailBulk recovering;
  TailBulk value;
  TailBulk ttl;
  bool defence = false;
};

SetRequest read_request(const EncodedRequest& request) noexcept {
  SetRequest read;
  std::size_t at = request.layout.keys_offset;
  read.key = next_tail_bulk(request.tail, at);
  read.marker = next_tail_bulk(request.tail, at);
  read.recovering = next_tail_bulk(request.tail, at);
  at = request.layout.args_offset;
  read.value = next_tail_bulk(request.tail, at);
  read.ttl = next_tail_bulk(request.tail, at);
  read.defence = next_tail_bulk(request.tail, at).bytes == "1";
  return read;
}

// The release of the request's value at its key (publishing nothing,
// naming no one): what a key its SET took is undone by.
void release_call(const SetRequest& request, ScriptCall& cleanup, Milliseconds& lives) {
  cleanup = encode(ReleaseCall{.lock_key = request.key.bytes,
                               .marker_key = request.marker.bytes,
                               .recovering_key = request.recovering.bytes,
                               .value = request.value.bytes});
  long long ttl = 0;
  (void)std::from_chars(request.ttl.bytes.data(),
                        request.ttl.bytes.data() + request.ttl.bytes.size(), ttl);
  lives = Milliseconds(ttl);
}

class SetAcquireForm final : public TransactionForm {
 public:
  std::size_t encode(std::string& out, std::span<const EncodedRequest> requests) const override {
    // The shared keys are the first request's (a batch holds only requests
    // with the same ones).
    const SetRequest head = read_request(requests.front());
    append_command(out, {"MULTI"});
    out += "*2\r\n$6\r\nEXISTS\r\n";
    out += head.marker.whole;
    out += "*2\r\n$4\r\nPTTL\r\n";
    out += head.recovering.whole;
    for (const EncodedRequest& each : requests) {
      const SetRequest request = read_request(each);
      out += "*6\r\n$3\r\nSET\r\n";
      out += request.key.whole;
      out += request.value.whole;
      out += "$2\r\nNX\r\n$2\r\nPX\r\n";
      out += request.ttl.whole;
    }
    append_command(out, {"EXEC"});
    // MULTI's reply and each queued command's.
    return requests.size() + 3;
  }

  bool answers(const redisReply& exec, std::size_t count) const noexcept override {
    return answers_set_acquire(exec, count);
  }

  bool answer(const redisReply& exec, std::size_t index, const EncodedRequest& request,
              TransactionAnswer& out, ScriptCall& cleanup, Milliseconds& lives) const override {
    out.count = 2;
    if (request.tail.empty()) {
      // A request that timed out kept no bytes: its acquire was told the
      // node may have run it, and releases its value there itself; this
      // answer goes to no one that counts it.
      out.numbers = {code(ReplyCode::refused), 0, 0};
      return false;
    }
    const SetRequest read = read_request(request);
    const SetAcquireAnswer answer = set_acquire_answer(exec, index, read.defence);
    out.passed = answer.passed;
    out.numbers = {code(answer.code), answer.number, 0};
    if (!answer.undo) return false;
    release_call(read, cleanup, lives);
    return true;
  }

  bool cleanup_after_failure(const EncodedRequest& request, ScriptCall& cleanup,
                             Milliseconds& lives) const override {
    if (request.tail.empty()) return false;
    release_call(read_request(request), cleanup, lives);
    return true;
  }
};

}  // namespace

const TransactionForm& set_acquire_form() {
  static const SetAcquireForm form;
  return form;
}

}  // namespace redlock::detail
