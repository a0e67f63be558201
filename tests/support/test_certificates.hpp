// Throw-away certificates for TLS tests, made with the `openssl` command at
// test time in a temporary directory (removed on destruction): a CA, a
// server certificate it signs for 127.0.0.1, ::1 and localhost, one it signs
// for another name only, a client certificate it signs, and a second CA
// that signed none of them. Keys are P-256, certificates valid two days.
//
// Building one runs a dozen openssl commands (well under a second);
// shared() makes them once per process. Throws std::runtime_error with the
// command's output when openssl fails.
#pragma once

#include <filesystem>
#include <string>

namespace redlock::test {

class TestCertificates {
 public:
  TestCertificates();
  ~TestCertificates();
  TestCertificates(const TestCertificates&) = delete;
  TestCertificates& operator=(const TestCertificates&) = delete;

  // One set for the whole process, made on first use (not thread-safe:
  // call it first from the test's main thread).
  static const TestCertificates& shared();

  [[nodiscard]] std::string ca_file() const { return (dir_ / "ca.pem").string(); }
  // The directory holding only ca.pem, hashed as OpenSSL's CA directories are.
  [[nodiscard]] std::string ca_dir() const { return (dir_ / "ca.d").string(); }
  [[nodiscard]] std::string server_cert() const { return (dir_ / "server.pem").string(); }
  [[nodiscard]] std::string server_key() const { return (dir_ / "server.key").string(); }
  // Signed by the CA for "wrong.example" only.
  [[nodiscard]] std::string wrong_name_cert() const { return (dir_ / "wrong.pem").string(); }
  [[nodiscard]] std::string wrong_name_key() const { return (dir_ / "wrong.key").string(); }
  [[nodiscard]] std::string client_cert() const { return (dir_ / "client.pem").string(); }
  [[nodiscard]] std::string client_key() const { return (dir_ / "client.key").string(); }
  // A CA that signed nothing here: trusting it alone, no server verifies.
  [[nodiscard]] std::string other_ca_file() const { return (dir_ / "other-ca.pem").string(); }

 private:
  void run(const std::string& command) const;
  void make_signed(const std::string& name, const std::string& subject,
                   const std::string& extensions) const;

  std::filesystem::path dir_;
};

}  // namespace redlock::test
