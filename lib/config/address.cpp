// Node addresses: "host[:port]", "[ipv6][:port]",
// "redis://[user[:pass]@]host[:port][/db]", the same with rediss:// for TLS,
// and "unix:///absolute/path" for a Unix domain socket.
//
// Error messages say what was expected and what kind of thing was found,
// and quote nothing of the text: "redis://alice:s3cret" (a URL whose '@host'
// is missing) reads as host "alice" and port "s3cret", and
// "redis://alice:1234/s3cret" as a database "s3cret", so any part of an
// address may be a password. A message can be logged even then.
//
// IPv4 literals must be in the strict dotted-quad form (four decimal
// numbers, no leading zeros, as inet_pton reads them). The forms that only
// the legacy inet_aton reads ("127.1", "2130706433", "0x7f.0.0.1",
// "0177.0.0.1") name the same server as a dotted quad, and would let one
// server count as several masters of a quorum, so they are refused.
#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "redlock/config.hpp"

namespace redlock {
namespace {

constexpr std::uint16_t kDefaultRedisPort = 6379;
constexpr std::string_view kAddressForms =
    "host[:port], [ipv6][:port], redis[s]://[user[:pass]@]host[:port][/db] or "
    "unix:///path/to/redis.sock";
// sockaddr_un's sun_path holds 108 bytes, the terminating zero included.
constexpr std::size_t kMaxUnixPathBytes = 107;

// Parsing steps return this: empty on success, else what was expected.
using Problem = std::optional<std::string>;

bool is_ascii_alnum(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool is_all_digits(std::string_view text) noexcept {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Parses a decimal number made of digits only (no sign, no spaces).
template <typename Int>
std::optional<Int> parse_decimal(std::string_view text) noexcept {
  if (!is_all_digits(text)) return std::nullopt;
  Int value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

int hex_digit_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// URL userinfo is percent-encoded so that a password may hold ':', '@' or
// '/'. Returns nullopt on a malformed escape.
std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int high = hex_digit_value(text[i + 1]);
    const int low = hex_digit_value(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

Problem check_hostname(std::string_view host) {
  if (host.empty()) return "expected a host name or IP address, got an empty host";
  for (const char c : host) {
    if (is_ascii_alnum(c) || c == '-' || c == '.' || c == '_') continue;
    if (c == ':') return "expected brackets around an IPv6 address, e.g. [::1]:6379";
    return "expected a host name or IP address, got a character other than letters, digits, "
           "'-', '.' and '_' in the host";
  }
  // getaddrinfo reads whatever inet_aton reads as an IPv4 address; only the
  // dotted quad is the one spelling endpoint identities compare.
  const std::string text(host);
  in_addr ipv4{};
  if (inet_aton(text.c_str(), &ipv4) != 0 && inet_pton(AF_INET, text.c_str(), &ipv4) != 1) {
    return "expected an IPv4 address as four decimal numbers without leading zeros (a.b.c.d); "
           "shortened, octal and hexadecimal forms are refused";
  }
  return std::nullopt;
}

// "fe80::1%eth0": the part before '%' must be an IPv6 literal; the zone is
// an interface name, passed on to getaddrinfo as written.
Problem check_ipv6_literal(std::string_view host) {
  const std::size_t zone_start = host.find('%');
  const std::string literal(host.substr(0, zone_start));
  in6_addr parsed{};
  if (inet_pton(AF_INET6, literal.c_str(), &parsed) != 1) {
    return "expected an IPv6 address inside [ ]";
  }
  if (zone_start != std::string_view::npos) {
    const std::string_view zone = host.substr(zone_start + 1);
    const bool zone_ok = !zone.empty() && std::all_of(zone.begin(), zone.end(), [](char c) {
      return is_ascii_alnum(c) || c == '-' || c == '_' || c == '.';
    });
    if (!zone_ok) return "expected an interface name after '%' in the IPv6 address";
  }
  return std::nullopt;
}

Problem parse_port(std::string_view text, std::uint16_t& port) {
  if (text.empty()) return "expected a port number (1..65535) after ':'";
  const auto value = parse_decimal<std::uint32_t>(text);
  if (!value || *value == 0 || *value > std::numeric_limits<std::uint16_t>::max()) {
    // Not quoted, digits neither: "redis://user:123456" puts a password here.
    if (is_all_digits(text)) return "expected a port in 1..65535, got a number outside it";
    return "expected a port number (1..65535) after ':'";
  }
  port = static_cast<std::uint16_t>(*value);
  return std::nullopt;
}

// "host", "host:port", "[v6]" or "[v6]:port".
Problem parse_host_and_port(std::string_view text, ParsedAddress& out) {
  if (text.empty()) return "expected a host name or IP address, got an empty host";
  if (text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return "expected ']' after the IPv6 address";
    const std::string_view host = text.substr(1, close - 1);
    if (host.empty()) return "expected an IPv6 address inside [ ], got nothing";
    if (auto problem = check_ipv6_literal(host)) return problem;
    out.host = std::string(host);
    const std::string_view after = text.substr(close + 1);
    if (after.empty()) return std::nullopt;
    if (after.front() != ':') return "expected ':port' after ']'";
    return parse_port(after.substr(1), out.port);
  }
  const std::size_t colon = text.find(':');
  if (colon != std::string_view::npos && text.find(':', colon + 1) != std::string_view::npos) {
    return "expected brackets around an IPv6 address, e.g. [::1]:6379";
  }
  const std::string_view host = text.substr(0, colon);
  if (host.empty()) return "expected a host name or IP address before ':'";
  if (auto problem = check_hostname(host)) return problem;
  out.host = std::string(host);
  if (colon == std::string_view::npos) return std::nullopt;
  return parse_port(text.substr(colon + 1), out.port);
}

// "user:pass", ":pass" or "user", each part percent-encoded.
Problem parse_userinfo(std::string_view text, ParsedAddress& out) {
  const std::size_t colon = text.find(':');
  auto user = percent_decode(text.substr(0, colon));
  std::optional<std::string> password = std::string{};
  if (colon != std::string_view::npos) password = percent_decode(text.substr(colon + 1));
  if (!user || !password) {
    return "expected %XX escapes (two hex digits) in the URL's user and password";
  }
  if (colon != std::string_view::npos && password->empty()) {
    return "expected a password after ':' in the URL (or no ':' at all)";
  }
  out.username = std::move(*user);
  out.password = std::move(*password);
  return std::nullopt;
}

Problem parse_database(std::string_view text, ParsedAddress& out) {
  // "redis://host/" names no database, as in most Redis client libraries.
  if (text.empty()) return std::nullopt;
  const auto db = parse_decimal<int>(text);
  // Not quoted: "redis://user:1234/secret" puts a password here.
  if (!db) return "expected a database number (0, 1, ...) after '/'";
  out.db = *db;
  return std::nullopt;
}

// The part after "redis://".
Problem parse_redis_url_body(std::string_view body, ParsedAddress& out) {
  // The last '@' ends the userinfo: host, port and db never contain one, so
  // an unescaped '@' or '/' inside a password still parses.
  const std::size_t at = body.rfind('@');
  if (at != std::string_view::npos) {
    if (auto problem = parse_userinfo(body.substr(0, at), out)) return problem;
    body.remove_prefix(at + 1);
  }
  const std::size_t slash = body.find('/');
  if (auto problem = parse_host_and_port(body.substr(0, slash), out)) return problem;
  if (slash == std::string_view::npos) return std::nullopt;
  return parse_database(body.substr(slash + 1), out);
}

// The part after "unix://": an absolute path, which names no user, password
// or database (the quorum file's keys give those).
Problem parse_unix_path(std::string_view path, ParsedAddress& out) {
  if (path.empty() || path.front() != '/') {
    return "expected an absolute path after unix://, e.g. unix:///run/redis/redis.sock";
  }
  if (path.size() > kMaxUnixPathBytes) {
    return "expected a socket path of at most " + std::to_string(kMaxUnixPathBytes) +
           " bytes (the system's limit), got a longer one";
  }
  if (path.find('\0') != std::string_view::npos) {
    return "expected a socket path without NUL bytes";
  }
  if (path.back() == '/') return "expected a socket's path, got a directory's (ending in '/')";
  out.unix_path = std::string(path);
  out.port = 0;
  return std::nullopt;
}

AddressResult parse_address_or_throw(std::string_view text) {
  ParsedAddress parsed;
  parsed.port = kDefaultRedisPort;
  Problem problem;
  if (text.empty()) {
    problem = "expected an address (" + std::string(kAddressForms) + "), got an empty string";
  } else if (const std::size_t scheme_end = text.find("://");
             scheme_end != std::string_view::npos) {
    const std::string scheme = lowercase(text.substr(0, scheme_end));
    if (scheme == "redis" || scheme == "rediss") {
      parsed.tls = scheme == "rediss";
      problem = parse_redis_url_body(text.substr(scheme_end + 3), parsed);
    } else if (scheme == "unix") {
      problem = parse_unix_path(text.substr(scheme_end + 3), parsed);
    } else if (std::all_of(scheme.begin(), scheme.end(), is_ascii_alnum)) {
      problem = "expected redis://, rediss:// or unix://, got the scheme \"" + scheme + "://\"";
    } else {
      problem = "expected redis://, rediss:// or unix:// at the start of the address";
    }
  } else if (text.find_first_of("@/") != std::string_view::npos) {
    problem =
        "a user, password or database needs the URL form "
        "redis://[user[:pass]@]host[:port][/db]";
  } else {
    problem = parse_host_and_port(text, parsed);
  }
  if (problem) return {std::nullopt, std::move(*problem)};
  return {std::move(parsed), {}};
}

}  // namespace

AddressResult parse_address(std::string_view text) {
  try {
    return parse_address_or_throw(text);
  } catch (const std::bad_alloc&) {
    return {std::nullopt, "out of memory while parsing an address"};
  }
}

}  // namespace redlock
