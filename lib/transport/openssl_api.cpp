#include "transport/openssl_api.hpp"

#include <dlfcn.h>
#include <openssl/opensslv.h>

namespace redlock::detail {
namespace {

#define REDLOCK_STRINGIFY_(x) #x
#define REDLOCK_STRINGIFY(x) REDLOCK_STRINGIFY_(x)

struct Loaded {
  OpenSslApi api{};
  std::string error;  // empty once loaded
};

// Resolves `name` into `slot`; false (and the name in `error`) when absent.
template <typename Function>
bool resolve(void* library, const char* name, Function& slot, std::string& error) {
  void* symbol = ::dlsym(library, name);
  if (symbol == nullptr) {
    if (error.empty()) error = std::string("no ") + name + " in " + openssl_library_name();
    return false;
  }
  slot = reinterpret_cast<Function>(symbol);  // NOLINT: dlsym's way
  return true;
}

Loaded load() {
  Loaded loaded;
  // RTLD_LOCAL: OpenSSL's symbols are this table's, not the process's; a
  // program that links its own OpenSSL keeps its own.
  void* library = ::dlopen(openssl_library_name(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    loaded.error = std::string("cannot load ") + openssl_library_name() +
                   (why != nullptr ? std::string(": ") + why : std::string());
    return loaded;
  }
  OpenSslApi& api = loaded.api;
  std::string& error = loaded.error;
  bool ok = true;
#define REDLOCK_RESOLVE(name) ok = resolve(library, #name, api.name, error) && ok
  REDLOCK_RESOLVE(ERR_get_error);
  REDLOCK_RESOLVE(ERR_reason_error_string);
  REDLOCK_RESOLVE(ERR_error_string_n);
  REDLOCK_RESOLVE(ERR_clear_error);
  REDLOCK_RESOLVE(X509_get_default_cert_file);
  REDLOCK_RESOLVE(X509_get_default_cert_dir);
  REDLOCK_RESOLVE(X509_verify_cert_error_string);
  REDLOCK_RESOLVE(X509_VERIFY_PARAM_set1_host);
  REDLOCK_RESOLVE(X509_VERIFY_PARAM_set1_ip_asc);
  REDLOCK_RESOLVE(BIO_new);
  REDLOCK_RESOLVE(BIO_s_mem);
  REDLOCK_RESOLVE(BIO_free);
  REDLOCK_RESOLVE(BIO_write);
  REDLOCK_RESOLVE(BIO_ctrl);
  REDLOCK_RESOLVE(TLS_client_method);
  REDLOCK_RESOLVE(SSL_CTX_new);
  REDLOCK_RESOLVE(SSL_CTX_free);
  REDLOCK_RESOLVE(SSL_CTX_ctrl);
  REDLOCK_RESOLVE(SSL_CTX_set_verify);
  REDLOCK_RESOLVE(SSL_CTX_load_verify_locations);
  REDLOCK_RESOLVE(SSL_CTX_set_default_verify_paths);
  REDLOCK_RESOLVE(SSL_CTX_use_certificate_chain_file);
  REDLOCK_RESOLVE(SSL_CTX_use_PrivateKey_file);
  REDLOCK_RESOLVE(SSL_CTX_check_private_key);
  REDLOCK_RESOLVE(SSL_new);
  REDLOCK_RESOLVE(SSL_free);
  REDLOCK_RESOLVE(SSL_set_bio);
  REDLOCK_RESOLVE(SSL_set_connect_state);
  REDLOCK_RESOLVE(SSL_ctrl);
  REDLOCK_RESOLVE(SSL_get0_param);
  REDLOCK_RESOLVE(SSL_do_handshake);
  REDLOCK_RESOLVE(SSL_get_error);
  REDLOCK_RESOLVE(SSL_read);
  REDLOCK_RESOLVE(SSL_write);
  REDLOCK_RESOLVE(SSL_get_verify_result);
#undef REDLOCK_RESOLVE
  if (!ok) ::dlclose(library);
  return loaded;
}

const Loaded& loaded_once() {
  // Never destroyed: OpenSSL stays loaded until the process exits.
  static const Loaded* const loaded =
      new Loaded(load());  // NOLINT(cppcoreguidelines-owning-memory)
  return *loaded;
}

}  // namespace

const char* openssl_library_name() noexcept {
#if defined(OPENSSL_SHLIB_VERSION)
  return "libssl.so." REDLOCK_STRINGIFY(OPENSSL_SHLIB_VERSION);
#else
  return "libssl.so." SHLIB_VERSION_NUMBER;
#endif
}

const OpenSslApi* load_openssl(std::string& error) {
  const Loaded& loaded = loaded_once();
  if (!loaded.error.empty()) {
    error = loaded.error;
    return nullptr;
  }
  return &loaded.api;
}

const OpenSslApi& openssl() { return loaded_once().api; }

}  // namespace redlock::detail
