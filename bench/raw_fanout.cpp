#include "raw_fanout.hpp"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
// The stock adapter is a header of static C functions with C casts.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wconversion"
#include <hiredis/adapters/libuv.h>
#pragma GCC diagnostic pop

#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <utility>

#include "scripts/scripts.hpp"

namespace redlock::bench {

namespace {

constexpr std::string_view kReleaseScript =
    "if redis.call('GET',KEYS[1])==ARGV[1] then return redis.call('DEL',KEYS[1]) else return 0 "
    "end";
// 128 bits as 32 hex digits, the size of the library's lock values.
constexpr std::string_view kValue = "0123456789abcdef0123456789abcdef";
constexpr std::string_view kMinimalKeyPrefix = "bench:raw:";
// What the library's key scheme makes of resource "raw:<n>" (default prefix).
constexpr std::string_view kLockKeyPrefix = "redlock:lock:raw:";
constexpr std::string_view kChannelPrefix = "redlock:released:raw:";
constexpr std::string_view kWaitingPrefix = "redlock:waiting:raw:";
constexpr std::string_view kPrefix = "redlock:";
constexpr std::string_view kDefenceOn = "1";
constexpr std::string_view kMarkerValue = "redlock-node-transport-bench";
constexpr std::string_view kTtl = "10000";
constexpr std::chrono::milliseconds kSetupLimit{5000};

template <std::size_t N>
int send(redisAsyncContext* context, redisCallbackFn* callback, void* privdata,
         const std::array<std::string_view, N>& args) {
  std::array<const char*, N> argv{};
  std::array<std::size_t, N> lengths{};
  for (std::size_t i = 0; i < N; ++i) {
    argv[i] = args[i].data();
    lengths[i] = args[i].size();
  }
  return redisAsyncCommandArgv(context, callback, privdata, static_cast<int>(N), argv.data(),
                               lengths.data());
}

bool is_ok(const redisReply* reply) {
  return reply != nullptr && reply->type == REDIS_REPLY_STATUS &&
         std::string_view(reply->str, reply->len) == "OK";
}

bool is_one(const redisReply* reply) {
  return reply != nullptr && reply->type == REDIS_REPLY_INTEGER && reply->integer == 1;
}

// The one answer in the reply of a library script sent alone (a batch of
// one, scripts.hpp), or null.
const redisReply* only_answer(const redisReply* reply) {
  if (reply == nullptr || reply->type != REDIS_REPLY_ARRAY || reply->elements != 1) return nullptr;
  return reply->element[0];
}

// The acquire script's grant: {1, fence counter}.
bool is_grant(const redisReply* reply) {
  return reply != nullptr && reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
         is_one(reply->element[0]);
}

}  // namespace

struct RawFanoutDriver::Link {
  RawFanoutDriver* owner = nullptr;
  redisAsyncContext* context = nullptr;
  bool connected = false;
};

struct RawFanoutDriver::Cycle {
  RawFanoutDriver* owner = nullptr;
  std::size_t worker = 0;
  std::string key;
  std::string resource;  // library_scripts only
  std::string channel;   // library_scripts only
  std::string waiting;   // library_scripts only
  std::size_t set_replies = 0;
  std::size_t set_ok = 0;
  std::size_t release_replies = 0;
  std::size_t release_ok = 0;
  // Callbacks hiredis still owes this cycle; its state is reused at zero.
  std::size_t callbacks_owed = 0;
  bool release_sent = false;
  bool finished = false;
};

namespace {

void set_reply_callback(redisAsyncContext*, void* reply, void* privdata) {
  auto* cycle = static_cast<RawFanoutDriver::Cycle*>(privdata);
  cycle->owner->on_set_reply(*cycle, reply);
}

void release_reply_callback(redisAsyncContext*, void* reply, void* privdata) {
  auto* cycle = static_cast<RawFanoutDriver::Cycle*>(privdata);
  cycle->owner->on_release_reply(*cycle, reply);
}

void script_reply_callback(redisAsyncContext* context, void* reply, void* privdata) {
  auto* link = static_cast<RawFanoutDriver::Link*>(context->data);
  link->owner->on_script_loaded(reinterpret_cast<std::uintptr_t>(privdata), reply);
}

void marker_reply_callback(redisAsyncContext* context, void* reply, void*) {
  auto* link = static_cast<RawFanoutDriver::Link*>(context->data);
  link->owner->on_marker_set(reply);
}

void connect_callback(const redisAsyncContext* context, int status) {
  auto* link = static_cast<RawFanoutDriver::Link*>(context->data);
  link->owner->on_connected(*link, status);
}

void disconnect_callback(const redisAsyncContext* context, int) {
  auto* link = static_cast<RawFanoutDriver::Link*>(context->data);
  link->owner->on_disconnected(*link);
}

}  // namespace

RawFanoutDriver::RawFanoutDriver(uv_loop_t* loop, std::vector<BenchNode> nodes,
                                 RawCommands commands)
    : loop_(loop), nodes_(std::move(nodes)), commands_(commands) {
  if (commands_ == RawCommands::minimal) {
    scripts_ = {kReleaseScript};
  } else {
    scripts_ = {detail::script(detail::ScriptId::acquire).body,
                detail::script(detail::ScriptId::release).body};
    fence_key_ = detail::fence_key(kPrefix);
    marker_key_ = detail::marker_key(kPrefix);
    recovering_key_ = detail::recovering_key(kPrefix);
  }
  shas_.resize(scripts_.size());
}

RawFanoutDriver::~RawFanoutDriver() { shut_down(); }

std::string RawFanoutDriver::connect() {
  std::string error;
  for (const BenchNode& node : nodes_) {
    redisAsyncContext* context = redisAsyncConnect(node.host.c_str(), node.port);
    if (context == nullptr || context->err != 0) {
      error = "connect " + node.address() + ": " +
              (context != nullptr ? context->errstr : "out of memory");
      if (context != nullptr) redisAsyncFree(context);
      break;
    }
    auto link = std::make_unique<Link>();
    link->owner = this;
    link->context = context;
    context->data = link.get();
    redisLibuvAttach(context, loop_);
    redisAsyncSetConnectCallback(context, connect_callback);
    redisAsyncSetDisconnectCallback(context, disconnect_callback);
    links_.push_back(std::move(link));
    ++open_links_;
  }
  // Even after an error, the started connects are waited for, so that
  // shut_down() knows which contexts connected. The stock adapter drops a
  // socket error (a refused connect) without telling hiredis, hence the limit.
  const bool answered = run_loop_until(
      loop_, [this] { return connect_answers_ == links_.size(); }, kSetupLimit);
  if (!error.empty()) return error;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    if (!links_[i]->connected) {
      return "cannot connect to " + nodes_[i].address() + (answered ? "" : " (no answer)");
    }
  }
  for (auto& link : links_) {
    for (std::uintptr_t script = 0; script < scripts_.size(); ++script) {
      send<3>(link->context, script_reply_callback, reinterpret_cast<void*>(script),
              {"SCRIPT", "LOAD", scripts_[script]});
    }
  }
  if (!run_loop_until(
          loop_, [this] { return script_answers_ == links_.size() * scripts_.size(); },
          kSetupLimit)) {
    return "SCRIPT LOAD not answered";
  }
  if (script_error_.empty() && commands_ == RawCommands::library_scripts &&
      (shas_[0] != detail::script(detail::ScriptId::acquire).sha1 ||
       shas_[1] != detail::script(detail::ScriptId::release).sha1)) {
    script_error_ = "SCRIPT LOAD digests differ from the library's";
  }
  if (!script_error_.empty() || commands_ != RawCommands::library_scripts) return script_error_;
  const std::string marker = detail::marker_key(kPrefix);
  for (auto& link : links_) {
    send<4>(link->context, marker_reply_callback, nullptr, {"SET", marker, kMarkerValue, "NX"});
  }
  if (!run_loop_until(
          loop_, [this] { return marker_answers_ == links_.size(); }, kSetupLimit)) {
    return "SET of the node marker not answered";
  }
  return script_error_;
}

void RawFanoutDriver::on_connected(Link& link, int status) noexcept {
  ++connect_answers_;
  link.connected = status == REDIS_OK;
  // On failure hiredis frees the context without a disconnect callback.
  if (!link.connected) {
    link.context = nullptr;
    --open_links_;
  }
}

void RawFanoutDriver::on_disconnected(Link& link) noexcept {
  if (link.context == nullptr) return;
  link.context = nullptr;
  --open_links_;
}

void RawFanoutDriver::on_script_loaded(std::size_t script, const void* reply_pointer) noexcept {
  ++script_answers_;
  const auto* reply = static_cast<const redisReply*>(reply_pointer);
  if (reply == nullptr || reply->type != REDIS_REPLY_STRING) {
    script_error_ = "SCRIPT LOAD failed";
    return;
  }
  const std::string sha(reply->str, reply->len);
  if (shas_[script].empty()) shas_[script] = sha;
  if (sha != shas_[script]) script_error_ = "SCRIPT LOAD returned different digests";
}

void RawFanoutDriver::on_marker_set(const void* reply_pointer) noexcept {
  ++marker_answers_;
  const auto* reply = static_cast<const redisReply*>(reply_pointer);
  if (reply == nullptr || reply->type == REDIS_REPLY_ERROR) script_error_ = "SET marker failed";
}

void RawFanoutDriver::start_cycle(std::size_t worker) {
  Cycle* cycle = nullptr;
  if (free_cycles_.empty()) {
    cycles_.push_back(std::make_unique<Cycle>());
    cycle = cycles_.back().get();
    cycle->owner = this;
  } else {
    cycle = free_cycles_.back();
    free_cycles_.pop_back();
  }
  *cycle = Cycle{this,
                 worker,
                 std::move(cycle->key),
                 std::move(cycle->resource),
                 std::move(cycle->channel),
                 std::move(cycle->waiting)};
  std::array<char, 24> digits{};
  const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), next_key_++).ptr;
  const std::string_view number(digits.data(), static_cast<std::size_t>(end - digits.data()));
  if (commands_ == RawCommands::minimal) {
    cycle->key.assign(kMinimalKeyPrefix).append(number);
  } else {
    cycle->key.assign(kLockKeyPrefix).append(number);
    cycle->resource.assign("raw:").append(number);
    cycle->channel.assign(kChannelPrefix).append(number);
    cycle->waiting.assign(kWaitingPrefix).append(number);
  }
  for (auto& link : links_) {
    ++cycle->callbacks_owed;
    const int sent =
        commands_ == RawCommands::minimal
            ? send<6>(link->context, set_reply_callback, cycle,
                      {"SET", cycle->key, kValue, "NX", "PX", kTtl})
            : send<12>(link->context, set_reply_callback, cycle,
                       {"EVALSHA", shas_[0], "4", marker_key_, recovering_key_, fence_key_,
                        cycle->key, kValue, kTtl, cycle->resource, kDefenceOn, ""});
    if (sent != REDIS_OK) {
      --cycle->callbacks_owed;
      ++cycle->set_replies;
    }
  }
  if (cycle->set_replies > links_.size() - quorum()) finish(*cycle, false, "SET not sent");
  recycle_if_done(*cycle);
}

void RawFanoutDriver::on_set_reply(Cycle& cycle, const void* reply) noexcept {
  --cycle.callbacks_owed;
  ++cycle.set_replies;
  const auto* answer = static_cast<const redisReply*>(reply);
  if (commands_ == RawCommands::minimal ? is_ok(answer) : is_grant(only_answer(answer))) {
    ++cycle.set_ok;
  }
  if (!cycle.release_sent && !cycle.finished) {
    if (cycle.set_ok == quorum()) {
      send_release(cycle);
    } else if (cycle.set_replies - cycle.set_ok > links_.size() - quorum()) {
      finish(cycle, false, "acquire refused by a majority");
    }
  }
  recycle_if_done(cycle);
}

void RawFanoutDriver::send_release(Cycle& cycle) {
  cycle.release_sent = true;
  if (listener_ != nullptr) listener_->acquired(cycle.worker);
  for (auto& link : links_) {
    ++cycle.callbacks_owed;
    const std::string& sha = shas_.back();
    const int sent =
        commands_ == RawCommands::minimal
            ? send<5>(link->context, release_reply_callback, &cycle,
                      {"EVALSHA", sha, "1", cycle.key, kValue})
            : send<8>(link->context, release_reply_callback, &cycle,
                      {"EVALSHA", sha, "1", cycle.key, kValue, cycle.channel, cycle.waiting, ""});
    if (sent != REDIS_OK) {
      --cycle.callbacks_owed;
      ++cycle.release_replies;
    }
  }
}

void RawFanoutDriver::on_release_reply(Cycle& cycle, const void* reply) noexcept {
  --cycle.callbacks_owed;
  ++cycle.release_replies;
  const auto* answer = static_cast<const redisReply*>(reply);
  if (is_one(commands_ == RawCommands::minimal ? answer : only_answer(answer))) ++cycle.release_ok;
  if (!cycle.finished) {
    if (cycle.release_ok == quorum()) {
      finish(cycle, true, nullptr);
    } else if (cycle.release_replies - cycle.release_ok > links_.size() - quorum()) {
      finish(cycle, false, "compare-and-delete refused by a majority");
    }
  }
  recycle_if_done(cycle);
}

void RawFanoutDriver::finish(Cycle& cycle, bool ok, const char* why) {
  cycle.finished = true;
  if (!ok) std::fprintf(stderr, "raw fan-out: %s (key %s)\n", why, cycle.key.c_str());
  if (listener_ != nullptr) listener_->cycle_done(cycle.worker, ok);
}

void RawFanoutDriver::recycle_if_done(Cycle& cycle) {
  if (cycle.finished && cycle.callbacks_owed == 0) free_cycles_.push_back(&cycle);
}

void RawFanoutDriver::shut_down() {
  // redisAsyncDisconnect lets pending replies arrive first, then frees the
  // context; the adapter's uv_poll_t closes with it.
  for (auto& link : links_) {
    if (link->context == nullptr) continue;
    if (link->connected) {
      redisAsyncDisconnect(link->context);
    } else {
      // A connect that never answered: free it outright.
      redisAsyncContext* context = std::exchange(link->context, nullptr);
      --open_links_;
      redisAsyncFree(context);
    }
  }
  if (!run_loop_until(
          loop_, [this] { return open_links_ == 0; }, kSetupLimit)) {
    std::fputs("raw fan-out: a connection did not close\n", stderr);
  }
  links_.clear();
}

}  // namespace redlock::bench
