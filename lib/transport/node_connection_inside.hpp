// What node_connection.cpp (the session), node_io.cpp (bytes out, bytes
// and replies in) and node_deadlines.cpp (unanswered requests) share of a
// NodeConnection's inside: its socket holder and how a libuv error reads.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "transport/node_connection.hpp"

namespace redlock::detail {

// The socket: TCP, or a Unix domain socket's pipe. Both are streams, which
// is all the connection uses once connected.
struct NodeConnection::TcpHolder {
  union {
    uv_tcp_t tcp;
    uv_pipe_t pipe;
  };
  bool is_pipe = false;
  [[nodiscard]] uv_stream_t* stream() noexcept { return reinterpret_cast<uv_stream_t*>(&tcp); }
  [[nodiscard]] uv_handle_t* handle() noexcept { return reinterpret_cast<uv_handle_t*>(&tcp); }
  NodeConnection* owner = nullptr;  // null once the connection let go of it
  LoopContext* loop = nullptr;
  std::uint64_t generation = 0;
};

// "what: libuv's text for status".
inline std::string uv_error_text(std::string_view what, int status) {
  std::string text(what);
  text += ": ";
  text += uv_strerror(status);
  return text;
}

}  // namespace redlock::detail
