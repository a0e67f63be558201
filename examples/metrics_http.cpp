// A lock client's metrics over HTTP, for Prometheus to scrape: GET /metrics
// answers with Metrics::prometheus(), the text exposition of every counter
// and histogram (redlock_acquires_total, redlock_node_latency_seconds, ...).
//
//   metrics_http --config quorum.toml [--port 9464] [--resource heartbeat]
//
// It listens on 127.0.0.1 only (a metrics port is no business of the
// network at large; put a proxy in front to publish it), prints
// "listening on 127.0.0.1:PORT" once ready (--port 0 takes a free port),
// and takes and releases --resource once a second so that the counters
// move. SIGINT or SIGTERM ends it. One request at a time, each bounded:
// a scrape is small and rare.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>

#include "example_setup.hpp"

namespace {

using namespace std::chrono_literals;

volatile std::sig_atomic_t stop_requested = 0;

extern "C" void on_stop_signal(int /*signal*/) { stop_requested = 1; }

// A listening socket on 127.0.0.1:port (0: any free port); -1 on failure.
int listen_on_loopback(std::uint16_t port) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return -1;
  const int yes = 1;
  (void)::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener, 16) != 0) {
    ::close(listener);
    return -1;
  }
  return listener;
}

std::uint16_t bound_port(int listener) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  if (::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  return ntohs(address.sin_port);
}

void send_all(int connection, std::string_view bytes) {
  while (!bytes.empty()) {
    // MSG_NOSIGNAL: a scraper that hangs up costs this write, not the process.
    const ssize_t sent = ::send(connection, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
}

std::string response(std::string_view status, std::string_view content_type,
                     std::string_view body) {
  std::string text = "HTTP/1.1 ";
  text.append(status);
  text += "\r\nContent-Type: ";
  text.append(content_type);
  text += "\r\nContent-Length: " + std::to_string(body.size());
  text += "\r\nConnection: close\r\n\r\n";
  text.append(body);
  return text;
}

// Reads one request's head (bounded in size and time) and answers it.
void serve_one(int connection, const redlock::Metrics& metrics) {
  const timeval limit{1, 0};
  (void)::setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  std::string head;
  char buffer[2048];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < 8192) {
    const ssize_t got = ::recv(connection, buffer, sizeof buffer, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // closed, or silent past the limit
    head.append(buffer, static_cast<std::size_t>(got));
  }
  const std::string_view request_line = std::string_view(head).substr(0, head.find("\r\n"));
  if (request_line.starts_with("GET /metrics ")) {
    // The exposition format's own content type (version 0.0.4).
    send_all(connection,
             response("200 OK", "text/plain; version=0.0.4; charset=utf-8", metrics.prometheus()));
  } else if (request_line.starts_with("GET ")) {
    send_all(connection, response("404 Not Found", "text/plain", "try /metrics\n"));
  } else {
    send_all(connection, response("405 Method Not Allowed", "text/plain", "GET only\n"));
  }
}

// One lock taken and released: what an application would be doing.
void take_and_release(redlock::BlockingClient& client, const redlock::Resource& resource) {
  redlock::GuardOptions options;
  options.acquire.wait = 0ms;  // busy is fine: it is counted too
  redlock::Guard guard = client.lock(resource, options);
  if (guard) (void)guard.release();
}

}  // namespace

int main(int argc, char** argv) {
  const example::Flags flags = example::parse_flags(argc, argv, {"--port", "--resource"});
  const auto port = flags.number("--port", 9464, 0, 65535);
  if (!flags.error.empty() || !port) {
    return example::usage(flags,
                          "metrics_http (--config FILE | --node HOST:PORT ...) [--port N] "
                          "[--resource NAME]");
  }
  std::optional<redlock::QuorumConfig> config = example::load_quorum(flags);
  if (!config) return example::exit_code::config;

  struct sigaction stop {};
  stop.sa_handler = on_stop_signal;  // no SA_RESTART: poll returns EINTR
  (void)::sigaction(SIGINT, &stop, nullptr);
  (void)::sigaction(SIGTERM, &stop, nullptr);

  redlock::BlockingClient client(std::move(*config));
  const redlock::Resource resource(flags.value("--resource", "heartbeat"));
  const int listener = listen_on_loopback(static_cast<std::uint16_t>(*port));
  if (listener < 0) {
    std::cerr << "metrics_http: cannot listen on 127.0.0.1:" << *port << ": "
              << std::strerror(errno) << '\n';
    return 71;  // EX_OSERR
  }
  take_and_release(client, resource);  // the first figures before the first scrape
  std::cout << "listening on 127.0.0.1:" << bound_port(listener) << std::endl;

  auto next_lock = std::chrono::steady_clock::now() + 1s;
  while (stop_requested == 0) {
    pollfd watched{listener, POLLIN, 0};
    // Short: a stop signal taken by the client's thread is still seen soon.
    const int ready = ::poll(&watched, 1, 200);
    if (ready > 0) {
      const int connection = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection >= 0) {
        serve_one(connection, *client.metrics());
        ::close(connection);
      }
    }
    if (std::chrono::steady_clock::now() >= next_lock) {
      take_and_release(client, resource);
      next_lock = std::chrono::steady_clock::now() + 1s;
    }
  }
  ::close(listener);
  return example::exit_code::ok;
}
