// TLS between a node's socket and the reply reader: OpenSSL driven through
// memory BIOs, so that libuv keeps doing the I/O and the connection keeps
// its one write per loop turn.
//
// The caller moves the bytes: what the node sent goes in with receive(),
// plaintext comes out with read(), and every call that may produce bytes
// for the node (start, receive, encrypt) appends them to the caller's
// output buffer. Nothing here blocks, calls back or owns a socket.
//
// A TlsSession is made from a TlsClientContext (the CA store, the client
// certificate) for a node's TlsConfig. Contexts are shared: one per
// distinct settings in the process, reused while the files it was built
// from are unchanged, and built again at the next connect once any of them
// changed on disk (a rotated certificate, a new CA bundle). Building one
// costs ~0.2 ms with a CA file and ~25 ms with the system's store, which a
// reconnect should not pay each time.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "redlock/config.hpp"

using SSL_CTX = struct ssl_ctx_st;
using SSL = struct ssl_st;
using BIO = struct bio_st;

namespace redlock::detail {

class TlsClientContext {
 public:
  // The context for `config`, or null with `error` saying what could not be
  // loaded (a file, a key that does not match its certificate). Thread-safe.
  static std::shared_ptr<TlsClientContext> create(const TlsConfig& config, std::string& error);
  ~TlsClientContext();
  TlsClientContext(const TlsClientContext&) = delete;
  TlsClientContext& operator=(const TlsClientContext&) = delete;

  [[nodiscard]] SSL_CTX* get() const noexcept { return context_; }
  [[nodiscard]] bool verify() const noexcept { return verify_; }

 private:
  // A context built afresh (create() without its cache).
  static std::shared_ptr<TlsClientContext> build(const TlsConfig& config, std::string& error);
  TlsClientContext(SSL_CTX* context, bool verify) : context_(context), verify_(verify) {}
  SSL_CTX* context_;
  bool verify_;
};

class TlsSession {
 public:
  // A client session that checks the node's certificate against
  // `server_name` (a host name, or an IP address compared as one) when the
  // context verifies.
  TlsSession(std::shared_ptr<TlsClientContext> context, std::string_view server_name);
  // The session for `node` (its TlsConfig, checked against tls_server_name
  // or the node's host) with the handshake begun: the ClientHello is in
  // `out`. Null with `error` set when the context or the session cannot be
  // made. What both transports, the loop's and the blocking one, open.
  static std::unique_ptr<TlsSession> open(const NodeConfig& node, std::string& out,
                                          std::string& error);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Whether the session could be set up; error() says why not.
  [[nodiscard]] bool valid() const noexcept { return ssl_ != nullptr; }
  // Begins the handshake: the ClientHello goes to `out`. False on failure.
  bool start(std::string& out);
  // Takes bytes the node sent; moves the handshake on while it lasts.
  // Handshake messages and alerts for the node go to `out`. False once the
  // session has failed (error() says why).
  bool receive(const char* data, std::size_t size, std::string& out);
  // Decrypts into `buffer`: the byte count, 0 when nothing (more) is
  // decrypted yet, -1 on failure (error(); the node may have closed it).
  [[nodiscard]] long read(char* buffer, std::size_t size);
  // Encrypts `plain` to `out`. False on failure.
  bool encrypt(std::string_view plain, std::string& out);

  [[nodiscard]] bool established() const noexcept { return established_; }
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  bool step_handshake();
  void drain(std::string& out);
  // Sets error_ from OpenSSL's error queue and the verify result.
  void fail(std::string_view what, int ssl_error);

  std::shared_ptr<TlsClientContext> context_;
  SSL* ssl_ = nullptr;
  BIO* network_in_ = nullptr;   // what the node sent, for OpenSSL to read
  BIO* network_out_ = nullptr;  // what OpenSSL wrote, for the socket
  bool established_ = false;
  std::string error_;
};

}  // namespace redlock::detail
