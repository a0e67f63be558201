// OpenSSL, loaded when the first TLS node is configured instead of with the
// library: a process that never speaks TLS maps no libssl or libcrypto
// (their relocations alone cost 1.2 MiB of resident memory and a
// millisecond at start-up). The TLS code calls OpenSSL only through this
// table (tls_session.cpp).
//
// Lifetime: the first successful load_openssl() loads libssl (and with it
// libcrypto) once for the process and never unloads it; the table it
// returns lives as long. Thread-safe.
#pragma once

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <string>

namespace redlock::detail {

struct OpenSslApi {
  // libcrypto
  decltype(&::ERR_get_error) ERR_get_error;
  decltype(&::ERR_reason_error_string) ERR_reason_error_string;
  decltype(&::ERR_error_string_n) ERR_error_string_n;
  decltype(&::ERR_clear_error) ERR_clear_error;
  decltype(&::X509_get_default_cert_file) X509_get_default_cert_file;
  decltype(&::X509_get_default_cert_dir) X509_get_default_cert_dir;
  decltype(&::X509_verify_cert_error_string) X509_verify_cert_error_string;
  decltype(&::X509_VERIFY_PARAM_set1_host) X509_VERIFY_PARAM_set1_host;
  decltype(&::X509_VERIFY_PARAM_set1_ip_asc) X509_VERIFY_PARAM_set1_ip_asc;
  decltype(&::BIO_new) BIO_new;
  decltype(&::BIO_s_mem) BIO_s_mem;
  decltype(&::BIO_free) BIO_free;
  decltype(&::BIO_write) BIO_write;
  decltype(&::BIO_ctrl) BIO_ctrl;
  // libssl
  decltype(&::TLS_client_method) TLS_client_method;
  decltype(&::SSL_CTX_new) SSL_CTX_new;
  decltype(&::SSL_CTX_free) SSL_CTX_free;
  decltype(&::SSL_CTX_ctrl) SSL_CTX_ctrl;
  decltype(&::SSL_CTX_set_verify) SSL_CTX_set_verify;
  decltype(&::SSL_CTX_load_verify_locations) SSL_CTX_load_verify_locations;
  decltype(&::SSL_CTX_set_default_verify_paths) SSL_CTX_set_default_verify_paths;
  decltype(&::SSL_CTX_use_certificate_chain_file) SSL_CTX_use_certificate_chain_file;
  decltype(&::SSL_CTX_use_PrivateKey_file) SSL_CTX_use_PrivateKey_file;
  decltype(&::SSL_CTX_check_private_key) SSL_CTX_check_private_key;
  decltype(&::SSL_new) SSL_new;
  decltype(&::SSL_free) SSL_free;
  decltype(&::SSL_set_bio) SSL_set_bio;
  decltype(&::SSL_set_connect_state) SSL_set_connect_state;
  decltype(&::SSL_ctrl) SSL_ctrl;
  decltype(&::SSL_get0_param) SSL_get0_param;
  decltype(&::SSL_do_handshake) SSL_do_handshake;
  decltype(&::SSL_get_error) SSL_get_error;
  decltype(&::SSL_read) SSL_read;
  decltype(&::SSL_write) SSL_write;
  decltype(&::SSL_get_verify_result) SSL_get_verify_result;
};

// The library's SONAME, from the headers the library was built with
// ("libssl.so.3").
[[nodiscard]] const char* openssl_library_name() noexcept;

// Loads OpenSSL on the first call: the table, or null with `error` saying
// what could not be loaded (the library, or one of its functions).
[[nodiscard]] const OpenSslApi* load_openssl(std::string& error);

// The table, once load_openssl() has succeeded (every TLS context and
// session exists only after it has).
[[nodiscard]] const OpenSslApi& openssl();

}  // namespace redlock::detail
