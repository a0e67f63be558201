#include "worker_resource.hpp"

#include <hiredis/hiredis.h>

#include <cstdlib>

namespace redlock::chaos {
namespace {

NodeConfig resource_node(const WorkerOptions& options) {
  NodeConfig node;
  node.name = "resource";
  node.host = options.resource_host;
  node.port = static_cast<std::uint16_t>(options.resource_port);
  return node;
}

// Bounds every resource operation. Generous: a write held in the network
// (s08) must arrive late rather than fail, even on a loaded machine.
constexpr Milliseconds kResourceTimeout{5000};

std::string error_text(const FencedResult& result) {
  if (result.error == errc::fenced_out) return "fenced_out";
  return result.error.message() + (result.detail.empty() ? "" : ": " + result.detail);
}

// fenced_out changed nothing; any other failure of the gate may have
// happened after the store applied the operation.
ProtectedResource::Result refused(const FencedResult& result) {
  return {false, 0, error_text(result), result.error != errc::fenced_out};
}

}  // namespace

ProtectedResource::ProtectedResource(const WorkerOptions& options)
    : fenced_(options.fenced),
      gate_(resource_node(options), kResourceTimeout),
      host_(options.resource_host),
      port_(options.resource_port) {}

ProtectedResource::~ProtectedResource() {
  if (plain_ != nullptr) redisFree(plain_);
}

ProtectedResource::Result ProtectedResource::read(const Storage& storage) {
  const std::string& key = storage.keys.counter;
  if (fenced_ && storage.token) {
    FencedResult result = gate_.get(key, *storage.token);
    if (!result.ok()) return refused(result);
    return {true, result.value ? std::atoll(result.value->c_str()) : 0, {}};
  }
  return plain_command({"GET", key}, true);
}

ProtectedResource::Result ProtectedResource::write(const Storage& storage, long long value) {
  const std::string& key = storage.keys.counter;
  const std::string text = std::to_string(value);
  if (fenced_ && storage.token) {
    FencedResult result = gate_.set(key, *storage.token, text);
    if (!result.ok()) return refused(result);
    return {true, value, {}};
  }
  Result result = plain_command({"SET", key, text}, false);
  result.integer = value;
  return result;
}

ProtectedResource::Result ProtectedResource::append(const Storage& storage,
                                                    const std::string& entry) {
  const std::string& key = storage.keys.log;
  if (fenced_ && storage.token) {
    FencedResult result = gate_.append(key, *storage.token, entry);
    if (!result.ok()) return refused(result);
    return {true, result.integer, {}};
  }
  return plain_command({"RPUSH", key, entry}, false);
}

ProtectedResource::Result ProtectedResource::plain_command(const std::vector<std::string>& argv,
                                                           bool parse_bulk) {
  if (plain_ == nullptr) {
    const timeval timeout{kResourceTimeout.count() / 1000, 0};
    plain_ = redisConnectWithTimeout(host_.c_str(), port_, timeout);
    if (plain_ == nullptr || plain_->err != 0) {
      std::string why = plain_ == nullptr ? "out of memory" : plain_->errstr;
      if (plain_ != nullptr) redisFree(plain_);
      plain_ = nullptr;
      return {false, 0, "connect: " + why, false};
    }
    redisSetTimeout(plain_, timeout);
  }
  std::vector<const char*> args;
  std::vector<std::size_t> lengths;
  for (const std::string& arg : argv) {
    args.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(plain_, static_cast<int>(args.size()), args.data(), lengths.data()));
  if (reply == nullptr) {
    std::string why = plain_->errstr;
    redisFree(plain_);
    plain_ = nullptr;
    return {false, 0, why, true};
  }
  Result result{true, 0, {}};
  if (reply->type == REDIS_REPLY_ERROR) {
    result = {false, 0, std::string(reply->str, reply->len), false};
  } else if (reply->type == REDIS_REPLY_INTEGER) {
    result.integer = reply->integer;
  } else if (parse_bulk && reply->type == REDIS_REPLY_STRING) {
    result.integer = std::atoll(std::string(reply->str, reply->len).c_str());
  }
  freeReplyObject(reply);
  return result;
}

}  // namespace redlock::chaos
