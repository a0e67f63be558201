// Node addresses (lib/config/address.cpp): "host:port", "[v6]:port",
// "redis://user:pass@host:port/db", the same with rediss:// (TLS), and
// "unix:///path". A parsed address must survive a round trip through its
// URL form; what the reader says must not depend on the
// password. The same text goes through config_from_addresses() (the CLI's
// --node flags) as well.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "redlock/config.hpp"

namespace {

// Bounds an address far above any real one; a longer input is not a new case.
constexpr std::size_t kMaxAddressBytes = 1024;

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xF]);
    }
  }
  return out;
}

// The redis:// (rediss:// for TLS) form of a parsed address.
std::string url_of(const redlock::ParsedAddress& address) {
  std::string url = address.tls ? "rediss://" : "redis://";
  if (!address.username.empty() || !address.password.empty()) {
    url += percent_encode(address.username);
    if (!address.password.empty()) url += ":" + percent_encode(address.password);
    url += "@";
  }
  const bool v6 = address.host.find(':') != std::string::npos;
  url += v6 ? "[" + address.host + "]" : address.host;
  url += ":" + std::to_string(address.port);
  if (address.db) url += "/" + std::to_string(*address.db);
  return url;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxAddressBytes) return -1;
  const std::string_view text = redlock::fuzz::as_text(data, size);
  const redlock::AddressResult result = redlock::parse_address(text);
  if (redlock::fuzz::showing()) {
    std::fprintf(stderr, "%s\n",
                 result.address ? ("ok: host " + result.address->host + " port " +
                                   std::to_string(result.address->port))
                                      .c_str()
                                : result.error.c_str());
  }
  // The same address as a --node flag, once and twice.
  const std::vector<std::string> once{std::string(text)};
  const redlock::ConfigResult from_flag = redlock::config_from_addresses(once);
  // A flag's user needs a password in the URL: there is no password_env.
  const bool user_without_password =
      result.address && !result.address->username.empty() && result.address->password.empty();
  REDLOCK_FUZZ_CHECK(from_flag.ok() == (result.address && !user_without_password));
  if (from_flag.ok()) {
    REDLOCK_FUZZ_CHECK(!redlock::config_from_addresses({once[0], once[0]}).ok());
  }
  // What the readers say must not depend on the password (an error that
  // quotes the address shows it as ***).
  if (const std::optional<std::string> masked = redlock::fuzz::with_passwords_masked(text, false)) {
    const redlock::AddressResult same = redlock::parse_address(*masked);
    REDLOCK_FUZZ_CHECK(same.address.has_value() == result.address.has_value());
    REDLOCK_FUZZ_CHECK(same.error == result.error);
    const redlock::ConfigResult same_flag = redlock::config_from_addresses({*masked});
    REDLOCK_FUZZ_CHECK(same_flag.error.to_string() == from_flag.error.to_string());
  }
  if (!result.address) {
    REDLOCK_FUZZ_CHECK(!result.error.empty());
    return 0;
  }
  const redlock::ParsedAddress& address = *result.address;
  if (!address.unix_path.empty()) {
    // A socket's path: absolute, no host, and the same path once more.
    REDLOCK_FUZZ_CHECK(address.host.empty() && !address.tls);
    REDLOCK_FUZZ_CHECK(address.unix_path.front() == '/' && address.unix_path.size() <= 107);
    const redlock::AddressResult again = redlock::parse_address("unix://" + address.unix_path);
    REDLOCK_FUZZ_CHECK(again.address && again.address->unix_path == address.unix_path);
    return 0;
  }
  REDLOCK_FUZZ_CHECK(!address.host.empty());
  REDLOCK_FUZZ_CHECK(address.port != 0);
  REDLOCK_FUZZ_CHECK(!address.db || *address.db >= 0);
  const std::string url = url_of(address);
  const redlock::AddressResult again = redlock::parse_address(url);
  REDLOCK_FUZZ_CHECK(again.address.has_value());
  REDLOCK_FUZZ_CHECK(again.address->host == address.host);
  REDLOCK_FUZZ_CHECK(again.address->port == address.port);
  REDLOCK_FUZZ_CHECK(again.address->username == address.username);
  REDLOCK_FUZZ_CHECK(again.address->password == address.password);
  REDLOCK_FUZZ_CHECK(again.address->db == address.db);
  REDLOCK_FUZZ_CHECK(again.address->tls == address.tls);
  return 0;
}
