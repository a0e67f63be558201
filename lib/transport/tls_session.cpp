#include "transport/tls_session.hpp"

#include <arpa/inet.h>
#include <sys/stat.h>

#include <array>
#include <climits>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "text/escape.hpp"
#include "transport/openssl_api.hpp"

namespace redlock::detail {
namespace {

// The newest error OpenSSL queued, as text ("wrong version number"), and
// the queue emptied: a later failure must not report this one.
std::string take_openssl_error() {
  unsigned long last = 0;
  while (const unsigned long code = openssl().ERR_get_error()) last = code;
  if (last == 0) return {};
  const char* reason = openssl().ERR_reason_error_string(last);
  if (reason != nullptr) return reason;
  std::array<char, 256> text{};
  openssl().ERR_error_string_n(last, text.data(), text.size());
  return text.data();
}

bool is_ip_literal(const std::string& host) {
  in6_addr v6{};
  in_addr v4{};
  return inet_pton(AF_INET, host.c_str(), &v4) == 1 || inet_pton(AF_INET6, host.c_str(), &v6) == 1;
}

// What a context was built from, as the file system has it now: the
// settings, and each file's inode, size and modification time (the system
// store's when no CA is named). Two equal keys may share a context.
std::string context_key(const TlsConfig& config) {
  std::string key;
  const auto add = [&key](const std::string& text) {
    key += std::to_string(text.size());
    key += ':';
    key += text;
  };
  const auto stamp = [&add](const std::string& path) {
    add(path);
    struct stat info {};
    if (path.empty() || ::stat(path.c_str(), &info) != 0) {
      add("-");
      return;
    }
    add(std::to_string(info.st_dev) + "." + std::to_string(info.st_ino) + "." +
        std::to_string(info.st_size) + "." + std::to_string(info.st_mtim.tv_sec) + "." +
        std::to_string(info.st_mtim.tv_nsec));
  };
  add(config.verify ? "verify" : "no-verify");
  if (config.ca_file.empty() && config.ca_dir.empty()) {
    stamp(openssl().X509_get_default_cert_file());
    stamp(openssl().X509_get_default_cert_dir());
  } else {
    stamp(config.ca_file);
    stamp(config.ca_dir);
  }
  stamp(config.cert_file);
  stamp(config.key_file);
  return key;
}

// The contexts built so far, by key; never destroyed (OpenSSL may be shut
// down by its own exit handler before static destructors would run).
struct ContextCache {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<TlsClientContext>> by_key;
};
ContextCache& context_cache() {
  static auto* cache = new ContextCache();  // NOLINT(cppcoreguidelines-owning-memory)
  return *cache;
}
// Beyond this many distinct contexts (settings, or generations of rotated
// files) the cache starts over.
constexpr std::size_t kMaxCachedContexts = 64;

}  // namespace

std::shared_ptr<TlsClientContext> TlsClientContext::create(const TlsConfig& config,
                                                           std::string& error) {
  // OpenSSL is loaded here, at the first TLS node's first connect
  // (openssl_api.hpp).
  std::string load_error;
  if (load_openssl(load_error) == nullptr) {
    error = "TLS: " + escape_text(load_error);
    return nullptr;
  }
  const std::string key = context_key(config);
  ContextCache& cache = context_cache();
  {
    const std::lock_guard<std::mutex> lock(cache.mutex);
    const auto found = cache.by_key.find(key);
    if (found != cache.by_key.end()) return found->second;
  }
  std::shared_ptr<TlsClientContext> built = build(config, error);
  if (!built) return nullptr;
  const std::lock_guard<std::mutex> lock(cache.mutex);
  if (cache.by_key.size() >= kMaxCachedContexts) cache.by_key.clear();
  return cache.by_key.emplace(key, std::move(built)).first->second;
}

std::shared_ptr<TlsClientContext> TlsClientContext::build(const TlsConfig& config,
                                                          std::string& error) {
  openssl().ERR_clear_error();
  SSL_CTX* context = openssl().SSL_CTX_new(openssl().TLS_client_method());
  if (context == nullptr) {
    error = "TLS: cannot create a context: " + take_openssl_error();
    return nullptr;
  }
  auto owned = std::shared_ptr<TlsClientContext>(new TlsClientContext(context, config.verify));
  // TLS 1.2 is the oldest version Redis and today's guidance accept.
  (void)openssl().SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, nullptr);
  // The reads are driven by hand; a renegotiation must not make SSL_read
  // return "want read" with data still buffered.
  (void)openssl().SSL_CTX_ctrl(context, SSL_CTRL_MODE, SSL_MODE_AUTO_RETRY, nullptr);
  const auto failed = [&error](std::string what) {
    error = "TLS: " + std::move(what) + ": " + escape_text(take_openssl_error());
    return nullptr;
  };
  if (config.verify) {
    openssl().SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
    if (!config.ca_file.empty() || !config.ca_dir.empty()) {
      const char* file = config.ca_file.empty() ? nullptr : config.ca_file.c_str();
      const char* dir = config.ca_dir.empty() ? nullptr : config.ca_dir.c_str();
      if (openssl().SSL_CTX_load_verify_locations(context, file, dir) != 1) {
        return failed("cannot load the CA certificates from " +
                      escape_text(file != nullptr ? config.ca_file : config.ca_dir));
      }
    } else if (openssl().SSL_CTX_set_default_verify_paths(context) != 1) {
      return failed("cannot load the system's CA certificates");
    }
  } else {
    openssl().SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nullptr);
  }
  if (!config.cert_file.empty()) {
    if (openssl().SSL_CTX_use_certificate_chain_file(context, config.cert_file.c_str()) != 1) {
      return failed("cannot load the client certificate " + escape_text(config.cert_file));
    }
    if (openssl().SSL_CTX_use_PrivateKey_file(context, config.key_file.c_str(), SSL_FILETYPE_PEM) !=
        1) {
      return failed("cannot load the client key " + escape_text(config.key_file));
    }
    if (openssl().SSL_CTX_check_private_key(context) != 1) {
      return failed("the client key " + escape_text(config.key_file) +
                    " does not match the certificate " + escape_text(config.cert_file));
    }
  }
  return owned;
}

TlsClientContext::~TlsClientContext() { openssl().SSL_CTX_free(context_); }

TlsSession::TlsSession(std::shared_ptr<TlsClientContext> context, std::string_view server_name)
    : context_(std::move(context)) {
  openssl().ERR_clear_error();
  ssl_ = openssl().SSL_new(context_->get());
  network_in_ = openssl().BIO_new(openssl().BIO_s_mem());
  network_out_ = openssl().BIO_new(openssl().BIO_s_mem());
  if (ssl_ == nullptr || network_in_ == nullptr || network_out_ == nullptr) {
    error_ = "TLS: cannot create a session: " + take_openssl_error();
    if (ssl_ != nullptr) openssl().SSL_free(ssl_);
    ssl_ = nullptr;
    if (network_in_ != nullptr) openssl().BIO_free(network_in_);
    if (network_out_ != nullptr) openssl().BIO_free(network_out_);
    network_in_ = network_out_ = nullptr;
    return;
  }
  // An empty memory BIO reads as "try again", not as the end of the stream.
  (void)openssl().BIO_ctrl(network_in_, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nullptr);
  openssl().SSL_set_bio(ssl_, network_in_, network_out_);  // the session owns both now
  openssl().SSL_set_connect_state(ssl_);
  const std::string name(server_name);
  const bool ip = is_ip_literal(name);
  // SNI carries host names only (RFC 6066).
  // (SSL_set_tlsext_host_name, spelled out: the macro casts C-style and
  // names SSL_ctrl itself.)
  if (!ip && !name.empty()) {
    openssl().SSL_ctrl(ssl_, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                       const_cast<char*>(name.c_str()));
  }
  if (context_->verify() && !name.empty()) {
    X509_VERIFY_PARAM* param = openssl().SSL_get0_param(ssl_);
    const int set = ip ? openssl().X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                       : openssl().X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
    if (set != 1) {
      error_ = "TLS: cannot check the certificate against " + escape_text(name);
      openssl().SSL_free(ssl_);
      ssl_ = nullptr;
    }
  }
}

std::unique_ptr<TlsSession> TlsSession::open(const NodeConfig& node, std::string& out,
                                             std::string& error) {
  std::shared_ptr<TlsClientContext> context = TlsClientContext::create(node.tls, error);
  if (!context) return nullptr;
  auto session = std::make_unique<TlsSession>(
      std::move(context), node.tls.server_name.empty() ? node.host : node.tls.server_name);
  if (!session->valid() || !session->start(out)) {
    error = session->error();
    return nullptr;
  }
  return session;
}

TlsSession::~TlsSession() {
  if (ssl_ != nullptr) openssl().SSL_free(ssl_);
}

bool TlsSession::start(std::string& out) {
  const bool ok = step_handshake();
  drain(out);
  return ok;
}

bool TlsSession::step_handshake() {
  openssl().ERR_clear_error();
  const int rc = openssl().SSL_do_handshake(ssl_);
  if (rc == 1) {
    established_ = true;
    return true;
  }
  const int ssl_error = openssl().SSL_get_error(ssl_, rc);
  if (ssl_error == SSL_ERROR_WANT_READ || ssl_error == SSL_ERROR_WANT_WRITE) return true;
  fail("TLS handshake failed", ssl_error);
  return false;
}

bool TlsSession::receive(const char* data, std::size_t size, std::string& out) {
  if (!error_.empty()) return false;
  while (size > 0) {
    const int chunk = static_cast<int>(std::min<std::size_t>(size, INT_MAX));
    if (openssl().BIO_write(network_in_, data, chunk) != chunk) {
      error_ = "TLS: out of memory";
      return false;
    }
    data += chunk;
    size -= static_cast<std::size_t>(chunk);
  }
  bool ok = true;
  if (!established_) ok = step_handshake();
  drain(out);
  return ok;
}

long TlsSession::read(char* buffer, std::size_t size) {
  if (!error_.empty()) return -1;
  if (!established_) return 0;
  openssl().ERR_clear_error();
  const int chunk = static_cast<int>(std::min<std::size_t>(size, INT_MAX));
  const int got = openssl().SSL_read(ssl_, buffer, chunk);
  if (got > 0) return got;
  const int ssl_error = openssl().SSL_get_error(ssl_, got);
  if (ssl_error == SSL_ERROR_WANT_READ || ssl_error == SSL_ERROR_WANT_WRITE) return 0;
  if (ssl_error == SSL_ERROR_ZERO_RETURN) {
    error_ = "the node closed the TLS session";
    return -1;
  }
  fail("TLS", ssl_error);
  return -1;
}

bool TlsSession::encrypt(std::string_view plain, std::string& out) {
  if (!error_.empty()) return false;
  openssl().ERR_clear_error();
  while (!plain.empty()) {
    const int chunk = static_cast<int>(std::min<std::size_t>(plain.size(), INT_MAX));
    const int wrote = openssl().SSL_write(ssl_, plain.data(), chunk);
    if (wrote <= 0) {
      fail("TLS write", openssl().SSL_get_error(ssl_, wrote));
      return false;
    }
    plain.remove_prefix(static_cast<std::size_t>(wrote));
  }
  drain(out);
  return true;
}

void TlsSession::drain(std::string& out) {
  char* data = nullptr;
  const long pending =
      openssl().BIO_ctrl(network_out_, BIO_CTRL_INFO, 0, static_cast<void*>(&data));
  if (pending <= 0) return;
  out.append(data, static_cast<std::size_t>(pending));
  (void)openssl().BIO_ctrl(network_out_, BIO_CTRL_RESET, 0, nullptr);
}

void TlsSession::fail(std::string_view what, int ssl_error) {
  std::string reason;
  const long verify = openssl().SSL_get_verify_result(ssl_);
  if (verify != X509_V_OK && !established_) {
    reason = std::string("certificate verify failed: ") +
             openssl().X509_verify_cert_error_string(verify);
    openssl().ERR_clear_error();
  } else {
    reason = take_openssl_error();
    if (reason.empty()) {
      reason = ssl_error == SSL_ERROR_SYSCALL ? "the node closed the connection"
                                              : "error " + std::to_string(ssl_error);
    }
    // A plain-text server answers a ClientHello with a RESP error or
    // nothing OpenSSL can read as a record.
    if (reason == "wrong version number" || reason == "packet length too long" ||
        reason == "record layer failure") {
      reason += " (is the node serving plain TCP here, not TLS?)";
    }
  }
  error_ = std::string(what) + ": " + escape_text(reason);
}

}  // namespace redlock::detail
