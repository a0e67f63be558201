#include "node_probe.hpp"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

#include "scripts/scripts.hpp"
#include "transport/reply_reader.hpp"
#include "transport/resp_writer.hpp"
#include "transport/tls_session.hpp"

namespace redlock::cli {
namespace {

struct ContextFree {
  void operator()(redisContext* context) const noexcept { redisFree(context); }
};
struct ReplyFree {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using ContextPtr = std::unique_ptr<redisContext, ContextFree>;
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

timeval to_timeval(Milliseconds duration) {
  timeval value{};
  value.tv_sec = static_cast<time_t>(duration.count() / 1000);
  value.tv_usec = static_cast<suseconds_t>((duration.count() % 1000) * 1000);
  return value;
}

std::string address_of(const NodeConfig& node) {
  if (!node.unix_path.empty()) return "unix://" + node.unix_path;
  const bool ipv6 = node.host.find(':') != std::string::npos;
  return (ipv6 ? "[" + node.host + "]" : node.host) + ":" + std::to_string(node.port);
}

std::string timed_out(Milliseconds budget) {
  return "timed out after " + std::to_string(budget.count()) + " ms";
}

// One node's connection, every command on it bounded by one deadline for
// the whole probe and every reply by kMaxReplyBytes: a node that answers a
// byte a second, or streams an endless line or bulk string, costs no more
// than the probe's budget in time and about the limit in memory. The first
// failure is kept and ends the session: later commands are not sent.
//
// hiredis connects (TCP or a Unix socket) and parses; the session writes
// and reads the socket itself, through TLS when the node asks for it.
class Session {
 public:
  Session(redisContext* context, SteadyClock::time_point deadline, Milliseconds budget)
      : context_(context), deadline_(deadline), budget_(budget) {}

  [[nodiscard]] const std::string& failure() const noexcept { return failure_; }

  // Runs the TLS handshake on the connected socket; false (failure()) when
  // it fails or the deadline passes first.
  bool start_tls(const NodeConfig& node) {
    std::string error;
    std::shared_ptr<detail::TlsClientContext> context =
        detail::TlsClientContext::create(node.tls, error);
    if (!context) return failed("connect", error);
    tls_ = std::make_unique<detail::TlsSession>(
        std::move(context), node.tls.server_name.empty() ? node.host : node.tls.server_name);
    std::string hello;
    if (!tls_->valid() || !tls_->start(hello)) return failed("connect", tls_->error());
    if (!send_all(hello, "connect", true)) return false;
    while (!tls_->established()) {
      if (!receive("connect")) return false;
    }
    return true;
  }

  // The reply, or nullptr once the session has failed ("WHAT: why").
  ReplyPtr command(const std::vector<std::string>& words) {
    if (!failure_.empty()) return nullptr;
    const std::string& what = words.front();
    std::string encoded;
    detail::append_array_header(encoded, words.size());
    for (const std::string& word : words) detail::append_bulk(encoded, word);
    if (!send_all(encoded, what)) return nullptr;
    std::size_t received = 0;
    for (;;) {
      void* reply = nullptr;
      if (redisGetReplyFromReader(context_, &reply) != REDIS_OK) {
        return fail(what, "protocol error: " + std::string(context_->errstr));
      }
      if (reply != nullptr) return ReplyPtr(static_cast<redisReply*>(reply));
      // What the reader holds unparsed, and all that this reply has sent:
      // a bulk string or an error line is buffered whole until it ends.
      const redisReader& reader = *context_->reader;
      if (reader.len - reader.pos > kMaxReplyBytes || received > kMaxReplyBytes) {
        return fail(what,
                    "protocol error: reply larger than " + detail::byte_size_text(kMaxReplyBytes));
      }
      const std::optional<std::size_t> got = receive(what);
      if (!got) return nullptr;
      received += *got;
    }
  }

 private:
  ReplyPtr fail(const std::string& what, const std::string& why) {
    failure_ = what + ": " + why;
    return nullptr;
  }
  bool failed(const std::string& what, const std::string& why) {
    failure_ = what + ": " + why;
    return false;
  }

  // Writes `plain` whole (encrypted first over TLS, unless it is the TLS
  // session's own output already).
  bool send_all(std::string plain, const std::string& what, bool encrypted = false) {
    std::string ciphertext;
    if (tls_ && !encrypted) {
      if (!tls_->encrypt(plain, ciphertext)) return failed(what, tls_->error());
      plain.swap(ciphertext);
    }
    std::string_view left = plain;
    while (!left.empty()) {
      if (!wait_for(POLLOUT, what)) return false;
      const ssize_t sent =
          ::send(context_->fd, left.data(), left.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        return failed(what, std::generic_category().message(errno));
      }
      left.remove_prefix(static_cast<std::size_t>(sent));
    }
    return true;
  }

  // Reads once, when the socket has something, and feeds the reader (or,
  // over TLS, the session, whose plaintext goes to the reader): the bytes
  // read, or nullopt on failure.
  std::optional<std::size_t> receive(const std::string& what) {
    if (!wait_for(POLLIN, what)) return std::nullopt;
    char buffer[16384];
    const ssize_t count = ::recv(context_->fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (count == 0) {
      (void)failed(what, "the node closed the connection");
      return std::nullopt;
    }
    if (count < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
      {
        (void)failed(what, std::generic_category().message(errno));
        return std::nullopt;
      }
    }
    const auto size = static_cast<std::size_t>(count);
    if (!tls_) {
      if (redisReaderFeed(context_->reader, buffer, size) != REDIS_OK) {
        {
          (void)failed(what, "cannot allocate the reply");
          return std::nullopt;
        }
      }
      return size;
    }
    std::string answer;
    if (!tls_->receive(buffer, size, answer)) {
      (void)failed(what, tls_->error());
      return std::nullopt;
    }
    if (!answer.empty() && !send_all(answer, what, true)) return std::nullopt;
    for (;;) {
      const long plain = tls_->read(buffer, sizeof buffer);
      if (plain < 0) {
        (void)failed(what, tls_->error());
        return std::nullopt;
      }
      if (plain == 0) return size;
      if (redisReaderFeed(context_->reader, buffer, static_cast<std::size_t>(plain)) != REDIS_OK) {
        {
          (void)failed(what, "cannot allocate the reply");
          return std::nullopt;
        }
      }
    }
  }

  // Waits until the socket is ready for `events` or the deadline passed.
  bool wait_for(short events, const std::string& what) {
    for (;;) {
      const auto left = std::chrono::ceil<Milliseconds>(deadline_ - SteadyClock::now());
      if (left.count() <= 0) {
        (void)fail(what, timed_out(budget_));
        return false;
      }
      pollfd watched{context_->fd, events, 0};
      const int ready = ::poll(&watched, 1, static_cast<int>(left.count()));
      if (ready > 0) return true;  // readable, writable, or an error the I/O will report
      if (ready < 0 && errno != EINTR) {
        (void)fail(what, std::generic_category().message(errno));
        return false;
      }
    }
  }

  redisContext* context_;
  SteadyClock::time_point deadline_;
  Milliseconds budget_;
  std::unique_ptr<detail::TlsSession> tls_;
  std::string failure_;
};

std::string text_of(const redisReply& reply) {
  return {reply.str, static_cast<std::size_t>(reply.len)};
}

// CONFIG GET name → its value, or "unknown" when the node refuses.
std::string config_value(Session& session, const std::string& name) {
  ReplyPtr reply = session.command({"CONFIG", "GET", name});
  if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
      reply->element[1]->type != REDIS_REPLY_STRING) {
    return "unknown";
  }
  return text_of(*reply->element[1]);
}

// The value of "name:value" on a line of an INFO reply.
std::optional<std::string> info_field(const std::string& info, std::string_view name) {
  std::size_t line = 0;
  while (line < info.size()) {
    std::size_t end = info.find_first_of("\r\n", line);
    if (end == std::string::npos) end = info.size();
    const std::string_view text(info.data() + line, end - line);
    if (text.size() > name.size() && text.starts_with(name) && text[name.size()] == ':') {
      return std::string(text.substr(name.size() + 1));
    }
    line = end + 1;
  }
  return std::nullopt;
}

// INFO SECTION as text, or nullopt when the node refuses or sends no text.
std::optional<std::string> info_section(Session& session, const std::string& section) {
  ReplyPtr info = session.command({"INFO", section});
  if (!info || info->type != REDIS_REPLY_STRING) return std::nullopt;
  return text_of(*info);
}

// Runs AUTH and SELECT as configured; an error text, or "" on success.
std::string handshake(Session& session, const NodeConfig& node) {
  if (!node.password.empty()) {
    std::vector<std::string> auth{"AUTH"};
    if (!node.username.empty()) auth.push_back(node.username);
    auth.push_back(node.password);
    ReplyPtr reply = session.command(auth);
    if (!reply) return session.failure();
    // Redis's AUTH errors never repeat the password.
    if (reply->type == REDIS_REPLY_ERROR) return "AUTH failed: " + text_of(*reply);
  }
  if (node.db != 0) {
    ReplyPtr reply = session.command({"SELECT", std::to_string(node.db)});
    if (!reply) return session.failure();
    if (reply->type == REDIS_REPLY_ERROR) return "SELECT failed: " + text_of(*reply);
  }
  return "";
}

void probe_amnesia_state(Session& session, const std::string& key_prefix, NodeReport& report) {
  if (ReplyPtr reply = session.command({"GET", detail::marker_key(key_prefix)}); reply) {
    if (reply->type == REDIS_REPLY_NIL) {
      report.marked = false;
    } else if (reply->type == REDIS_REPLY_STRING) {
      report.marked = true;
      report.marker_max_ttl = detail::marker_max_ttl(std::string_view(reply->str, reply->len));
    }
  }
  if (ReplyPtr reply = session.command({"PTTL", key_prefix + "recovering"});
      reply && reply->type == REDIS_REPLY_INTEGER && reply->integer != -2) {
    report.recovering_ms = reply->integer;
  }
}

void probe_resource(Session& session, const std::string& key_prefix, const std::string& resource,
                    NodeReport& report) {
  const std::string key = key_prefix + "lock:" + resource;
  if (ReplyPtr reply = session.command({"PTTL", key});
      reply && reply->type == REDIS_REPLY_INTEGER) {
    report.pttl_ms = reply->integer;
  }
  if (ReplyPtr reply = session.command({"GET", key}); reply && reply->type == REDIS_REPLY_STRING) {
    report.holder = text_of(*reply);
  }
  if (ReplyPtr reply = session.command({"HGET", key_prefix + "fence", resource});
      reply && reply->type == REDIS_REPLY_STRING) {
    try {
      report.fence_counter = std::stoll(text_of(*reply));
    } catch (const std::exception&) {
      // Not a number: not a counter this library wrote; leave it unset.
    }
  }
}

}  // namespace

std::string persistence_mode(const NodeReport& report) {
  if (report.appendonly == "no") return "off";
  if (report.appendonly != "yes") return "unknown";
  if (report.appendfsync == "always") {
    // With no-appendfsync-on-rewrite yes the node skips its fsyncs while an
    // AOF rewrite runs: not durable, whatever appendfsync says.
    return report.no_fsync_on_rewrite == "no" ? "aof always" : "aof always, no fsync on rewrite";
  }
  if (report.appendfsync == "everysec") return "aof everysec";
  if (report.appendfsync == "no") return "aof no-fsync";
  return "aof";
}

NodeReport probe_node(const NodeConfig& node, Milliseconds timeout, const std::string& key_prefix,
                      const std::optional<std::string>& resource) {
  NodeReport report;
  report.name = node.name;
  report.address = address_of(node);
  try {
    const SteadyClock::time_point deadline = SteadyClock::now() + timeout;
    ContextPtr context(
        node.unix_path.empty()
            ? redisConnectWithTimeout(node.host.c_str(), node.port, to_timeval(timeout))
            : redisConnectUnixWithTimeout(node.unix_path.c_str(), to_timeval(timeout)));
    if (!context) {
      report.error = "cannot allocate a connection";
      return report;
    }
    if (context->err != 0) {
      // hiredis reports its own connect timeout as ETIMEDOUT.
      const bool expired = errno == ETIMEDOUT || SteadyClock::now() >= deadline;
      report.error = "connect: " + (expired ? timed_out(timeout) : std::string(context->errstr));
      return report;
    }
    Session session(context.get(), deadline, timeout);
    if (node.tls.enabled && !session.start_tls(node)) {
      report.error = session.failure();
      return report;
    }
    if (std::string failed = handshake(session, node); !failed.empty()) {
      report.error = std::move(failed);
      return report;
    }
    const auto sent = SteadyClock::now();
    ReplyPtr pong = session.command({"PING"});
    const auto answered = SteadyClock::now();
    if (!pong) {
      report.error = session.failure();
      return report;
    }
    if (pong->type == REDIS_REPLY_ERROR) {
      report.error = "PING: " + text_of(*pong);
      return report;
    }
    report.reachable = true;
    report.round_trip = std::chrono::duration_cast<Microseconds>(answered - sent);
    if (const auto info = info_section(session, "replication")) {
      report.role = info_field(*info, "role").value_or("unknown");
    }
    if (const auto info = info_section(session, "server")) {
      report.run_id = info_field(*info, "run_id");
    }
    report.appendonly = config_value(session, "appendonly");
    report.appendfsync = config_value(session, "appendfsync");
    report.no_fsync_on_rewrite = config_value(session, "no-appendfsync-on-rewrite");
    probe_amnesia_state(session, key_prefix, report);
    if (resource) probe_resource(session, key_prefix, *resource, report);
    report.error = session.failure();
  } catch (const std::exception& error) {
    report.error = error.what();
  }
  return report;
}

}  // namespace redlock::cli
