#include "test_certificates.hpp"

#include <stdlib.h>  // NOLINT(modernize-deprecated-headers): mkdtemp

#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <system_error>

namespace redlock::test {
namespace {

constexpr const char* kNewKey = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

}  // namespace

TestCertificates::TestCertificates() {
  std::string pattern = (std::filesystem::temp_directory_path() / "redlock-certs-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp " + pattern + " failed");
  }
  dir_ = pattern;
  try {
    for (const char* ca : {"ca", "other-ca"}) {
      run(std::string("openssl req -x509 ") + kNewKey + " -keyout " + ca + ".key -out " + ca +
          ".pem -days 2 -subj /CN=redlock-test-" + ca +
          " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign");
    }
    make_signed("server", "/CN=localhost",
                "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\n"
                "extendedKeyUsage=serverAuth\n");
    make_signed("wrong", "/CN=wrong.example",
                "subjectAltName=DNS:wrong.example\nextendedKeyUsage=serverAuth\n");
    make_signed("client", "/CN=redlock-test-client", "extendedKeyUsage=clientAuth\n");
    std::filesystem::create_directory(dir_ / "ca.d");
    std::filesystem::copy_file(dir_ / "ca.pem", dir_ / "ca.d" / "ca.pem");
    run("openssl rehash ca.d");
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw;
  }
}

TestCertificates::~TestCertificates() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

const TestCertificates& TestCertificates::shared() {
  static const TestCertificates certificates;
  return certificates;
}

void TestCertificates::make_signed(const std::string& name, const std::string& subject,
                                   const std::string& extensions) const {
  std::ofstream(dir_ / (name + ".ext")) << extensions;
  run(std::string("openssl req -new ") + kNewKey + " -keyout " + name + ".key -out " + name +
      ".csr -subj " + subject);
  run("openssl x509 -req -in " + name + ".csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 " +
      "-out " + name + ".pem -extfile " + name + ".ext");
}

void TestCertificates::run(const std::string& command) const {
  const std::string full = "cd '" + dir_.string() + "' && " + command + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(full.c_str(), "r"), ::pclose);
  if (!pipe) throw std::runtime_error("cannot run: " + command);
  std::string output;
  char buffer[512];
  while (const std::size_t got = std::fread(buffer, 1, sizeof buffer, pipe.get())) {
    output.append(buffer, got);
  }
  const int status = ::pclose(pipe.release());
  if (status != 0) throw std::runtime_error("openssl failed: " + command + "\n" + output);
}

}  // namespace redlock::test
