#include "fake_link.hpp"

#include <gtest/gtest.h>

#include <charconv>
#include <stdexcept>

namespace redlock::test {

using detail::NodeResponse;
using detail::Request;

ParsedReply::ParsedReply(std::string_view resp) {
  redisReader* reader = redisReaderCreate();
  redisReaderFeed(reader, resp.data(), resp.size());
  void* out = nullptr;
  if (redisReaderGetReply(reader, &out) != REDIS_OK || out == nullptr) {
    redisReaderFree(reader);
    throw std::invalid_argument("not one whole RESP reply: " + std::string(resp));
  }
  redisReaderFree(reader);
  reply_ = static_cast<redisReply*>(out);
}

ParsedReply::~ParsedReply() {
  if (reply_ != nullptr) freeReplyObject(reply_);
}

std::string resp_integers(std::initializer_list<long long> values) {
  std::string out = "*" + std::to_string(values.size()) + "\r\n";
  for (long long value : values) out += ":" + std::to_string(value) + "\r\n";
  return out;
}

namespace {

// The keys and arguments of a request encoded beforehand, read back from
// its tail ("numkeys key... arg...").
void decode_tail(const detail::PreparedRequest& prepared, SentRequest& sent) {
  const std::string_view tail = prepared.tail();
  std::size_t at = 0;
  const std::string_view count = detail::next_tail_bulk(tail, at).bytes;
  std::size_t keys = 0;
  (void)std::from_chars(count.data(), count.data() + count.size(), keys);
  for (std::size_t i = 0; i < keys; ++i) {
    sent.keys.emplace_back(detail::next_tail_bulk(tail, at).bytes);
  }
  while (at < tail.size()) sent.args.emplace_back(detail::next_tail_bulk(tail, at).bytes);
}

}  // namespace

FakeLink::FakeLink(FakeNodes& nodes, std::size_t index, const NodeConfig& node, bool subscriber)
    : nodes_(nodes), index_(index), node_(node), subscriber_(subscriber) {}

void FakeLink::send(Request request) {
  SentRequest sent;
  sent.node = index_;
  sent.script = request.script;
  sent.sink = std::move(request.sink);
  sent.tag = request.tag;
  sent.cleanup = request.cleanup;
  if (request.prepared != nullptr) {
    decode_tail(*request.prepared, sent);
  } else if (request.call != nullptr) {
    sent.keys = request.call->keys;
    sent.args = request.call->args;
  } else {
    for (std::string_view key : request.keys) sent.keys.emplace_back(key);
    for (std::string_view arg : request.args) sent.args.emplace_back(arg);
  }
  nodes_.sent.push_back(std::move(sent));
}

void FakeLink::send_command(std::initializer_list<std::string_view> argv) {
  std::vector<std::string> command;
  for (std::string_view arg : argv) command.emplace_back(arg);
  commands.push_back(std::move(command));
}

void FakeLink::start() {
  if (ready_handler_) ready_handler_();
}

NodeHealth FakeLink::health() const {
  NodeHealth health;
  health.name = node_.name;
  health.connected = !closed_;
  health.persistence = Persistence::aof_always;
  return health;
}

void FakeLink::new_session() {
  ++session_;
  if (ready_handler_) ready_handler_();
}

void FakeLink::push(std::string_view channel, std::string_view payload) {
  if (push_handler_) push_handler_(channel, payload);
}

detail::LinkFactory FakeNodes::factory() {
  return
      [this](detail::LoopContext&, NodeMetrics&, std::size_t index, const NodeConfig& node,
             const LockConfig&, detail::SessionSetup setup) -> std::unique_ptr<detail::NodeLink> {
        // The lock links load scripts at set-up; the subscriber links ask for
        // nothing.
        const bool subscriber = setup.scripts.empty();
        auto link = std::make_unique<FakeLink>(*this, index, node, subscriber);
        std::vector<FakeLink*>& kind = subscriber ? subscribers_ : locks_;
        if (kind.size() <= index) kind.resize(index + 1, nullptr);
        kind[index] = link.get();
        return link;
      };
}

std::vector<SentRequest*> FakeNodes::pending(std::size_t node, detail::ScriptId id, bool cleanups) {
  std::vector<SentRequest*> found;
  for (SentRequest& request : sent) {
    if (request.node == node && request.id() == id && !request.answered &&
        (cleanups || !request.cleanup)) {
      found.push_back(&request);
    }
  }
  return found;
}

SentRequest* FakeNodes::one_pending(std::size_t node, detail::ScriptId id) {
  std::vector<SentRequest*> found = pending(node, id);
  EXPECT_EQ(found.size(), 1U) << "requests of " << detail::script(id).name << " pending on node "
                              << node;
  return found.size() == 1 ? found.front() : nullptr;
}

std::vector<SentRequest*> FakeNodes::cleanups(std::size_t node) {
  std::vector<SentRequest*> found;
  for (SentRequest& request : sent) {
    if (request.node == node && request.cleanup) found.push_back(&request);
  }
  return found;
}

void FakeNodes::reply(SentRequest& request, std::string_view resp, bool late) {
  const ParsedReply parsed(resp);
  const redisReply* replies[1] = {parsed.get()};
  NodeResponse response;
  response.kind = NodeResponse::Kind::reply;
  response.replies = replies;
  response.reply_count = 1;
  response.late = late;
  request.answered = true;
  if (request.sink) request.sink->on_response(request.node, request.tag, response);
}

void FakeNodes::time_out(SentRequest& request) {
  NodeResponse response;
  response.kind = NodeResponse::Kind::timeout;
  response.detail = "timed out (fake)";
  response.may_have_run = true;
  if (request.sink) request.sink->on_response(request.node, request.tag, response);
}

}  // namespace redlock::test
