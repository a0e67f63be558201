#include "scripts/set_acquire.hpp"

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

}  // namespace redlock::detail
