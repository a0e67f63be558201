#include "transport/server_facts.hpp"

#include <cctype>

namespace redlock::detail {
namespace {

constexpr std::array<ServerQuestion, 4> kQuestions{{
    {{"CONFIG", "GET", "appendonly"}, 3, ServerFact::appendonly},
    {{"CONFIG", "GET", "appendfsync"}, 3, ServerFact::appendfsync},
    {{"CONFIG", "GET", "no-appendfsync-on-rewrite"}, 3, ServerFact::no_fsync_on_rewrite},
    {{"INFO", "server", ""}, 2, ServerFact::run_id},
}};

}  // namespace

std::span<const ServerQuestion> ServerFacts::handshake_questions() noexcept { return kQuestions; }

std::span<const ServerQuestion> ServerFacts::recheck_questions() noexcept {
  return std::span<const ServerQuestion>(kQuestions).first(3);
}

void ServerFacts::forget() noexcept {
  appendonly_.clear();
  appendfsync_.clear();
  no_fsync_on_rewrite_.clear();
  run_id_.clear();
}

void ServerFacts::record(ServerFact fact, const redisReply& reply) {
  if (fact == ServerFact::run_id) {
    run_id_ = reply.type == REDIS_REPLY_STRING ? run_id_in(std::string_view(reply.str, reply.len))
                                               : std::string();
    return;
  }
  std::string value;
  if (reply.type == REDIS_REPLY_ARRAY && reply.elements == 2 &&
      reply.element[1]->type == REDIS_REPLY_STRING) {
    value.assign(reply.element[1]->str, reply.element[1]->len);
  }
  switch (fact) {
    case ServerFact::appendonly:
      appendonly_ = std::move(value);
      break;
    case ServerFact::appendfsync:
      appendfsync_ = std::move(value);
      break;
    case ServerFact::no_fsync_on_rewrite:
      no_fsync_on_rewrite_ = std::move(value);
      break;
    default:
      break;
  }
}

Persistence ServerFacts::persistence() const noexcept {
  if (appendonly_.empty()) return Persistence::unknown;
  if (appendonly_ != "yes") return Persistence::none;
  if (appendfsync_ == "always") {
    // Unknown counts as "yes": durability is what has to be shown.
    return no_fsync_on_rewrite_ == "no" ? Persistence::aof_always
                                        : Persistence::aof_always_but_rewrite;
  }
  if (appendfsync_ == "everysec") return Persistence::aof_everysec;
  if (appendfsync_ == "no") return Persistence::aof_no;
  return Persistence::unknown;
}

std::string run_id_in(std::string_view info) {
  constexpr std::string_view kField = "run_id:";
  const std::size_t at = info.find(kField);
  if (at == std::string_view::npos || (at > 0 && info[at - 1] != '\n')) return {};
  const std::size_t begin = at + kField.size();
  std::size_t end = begin;
  while (end < info.size() && end - begin < 64 &&
         std::isxdigit(static_cast<unsigned char>(info[end]))) {
    ++end;
  }
  return std::string(info.substr(begin, end - begin));
}

}  // namespace redlock::detail
