// parse_address: every accepted form, and what each rejection says.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "redlock/config.hpp"

namespace redlock {
namespace {

// Names each parameterized case after its `name` field.
template <typename Case>
std::string AddressCaseName(const testing::TestParamInfo<Case>& case_info) {
  return case_info.param.name;
}

struct AcceptedCase {
  const char* name;
  std::string text;
  std::string host;
  std::uint16_t port;
  std::string username;
  std::string password;
  std::optional<int> db;
};

void PrintTo(const AcceptedCase& accepted, std::ostream* out) { *out << accepted.text; }

class AcceptedAddress : public testing::TestWithParam<AcceptedCase> {};

TEST_P(AcceptedAddress, ParsesEveryPart) {
  const AcceptedCase& expected = GetParam();
  const AddressResult result = parse_address(expected.text);
  ASSERT_TRUE(result.address.has_value()) << result.error;
  EXPECT_EQ(result.address->host, expected.host);
  EXPECT_EQ(result.address->port, expected.port);
  EXPECT_EQ(result.address->username, expected.username);
  EXPECT_EQ(result.address->password, expected.password);
  EXPECT_EQ(result.address->db, expected.db);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, AcceptedAddress,
    testing::Values(
        AcceptedCase{"HostAndPort", "127.0.0.1:7101", "127.0.0.1", 7101, "", "", std::nullopt},
        AcceptedCase{"HostNameAndPort", "redis-a.internal:7000", "redis-a.internal", 7000, "", "",
                     std::nullopt},
        AcceptedCase{"HostAlone", "localhost", "localhost", 6379, "", "", std::nullopt},
        AcceptedCase{"LowestPort", "h:1", "h", 1, "", "", std::nullopt},
        AcceptedCase{"HighestPort", "h:65535", "h", 65535, "", "", std::nullopt},
        AcceptedCase{"Ipv6AndPort", "[::1]:7101", "::1", 7101, "", "", std::nullopt},
        AcceptedCase{"Ipv6Alone", "[2001:db8::7]", "2001:db8::7", 6379, "", "", std::nullopt},
        AcceptedCase{"Ipv6WithZone", "[fe80::1%eth0]:7101", "fe80::1%eth0", 7101, "", "",
                     std::nullopt},
        AcceptedCase{"UrlHostOnly", "redis://h", "h", 6379, "", "", std::nullopt},
        AcceptedCase{"UrlHostAndPort", "redis://h:7101", "h", 7101, "", "", std::nullopt},
        AcceptedCase{"UrlSchemeInCapitals", "REDIS://h:7101", "h", 7101, "", "", std::nullopt},
        AcceptedCase{"UrlWithDb", "redis://h:7101/3", "h", 7101, "", "", 3},
        AcceptedCase{"UrlWithDbZero", "redis://h/0", "h", 6379, "", "", 0},
        AcceptedCase{"UrlTrailingSlashNamesNoDb", "redis://h/", "h", 6379, "", "", std::nullopt},
        AcceptedCase{"UrlPasswordOnly", "redis://:pw@h:1", "h", 1, "", "pw", std::nullopt},
        AcceptedCase{"UrlUserAndPassword", "redis://alice:pw@h:1/2", "h", 1, "alice", "pw", 2},
        AcceptedCase{"UrlUserOnly", "redis://alice@h", "h", 6379, "alice", "", std::nullopt},
        AcceptedCase{"UrlIpv6", "redis://u:p@[::1]:7101/1", "::1", 7101, "u", "p", 1},
        AcceptedCase{"UrlPercentEncoded", "redis://al%69ce:p%40%3a%2F%25@h", "h", 6379, "alice",
                     "p@:/%", std::nullopt},
        AcceptedCase{"UrlUnescapedAtInPassword", "redis://u:p@ss@h:1", "h", 1, "u", "p@ss",
                     std::nullopt},
        AcceptedCase{"UrlUnescapedSlashInPassword", "redis://u:p/ss@h:1", "h", 1, "u", "p/ss",
                     std::nullopt}),
    AddressCaseName<AcceptedCase>);

struct RejectedCase {
  const char* name;
  std::string text;
  std::string error;
};

void PrintTo(const RejectedCase& rejected, std::ostream* out) { *out << rejected.text; }

class RejectedAddress : public testing::TestWithParam<RejectedCase> {};

TEST_P(RejectedAddress, SaysWhatWasExpected) {
  const RejectedCase& expected = GetParam();
  const AddressResult result = parse_address(expected.text);
  EXPECT_FALSE(result.address.has_value());
  EXPECT_EQ(result.error, expected.error);
}

INSTANTIATE_TEST_SUITE_P(
    Garbage, RejectedAddress,
    testing::Values(
        RejectedCase{"Empty", "",
                     "expected an address (host[:port], [ipv6][:port], "
                     "redis[s]://[user[:pass]@]host[:port][/db] or unix:///path/to/redis.sock), "
                     "got an empty string"},
        RejectedCase{"PortZero", "h:0", "expected a port in 1..65535, got a number outside it"},
        RejectedCase{"PortTooLarge", "h:65536",
                     "expected a port in 1..65535, got a number outside it"},
        RejectedCase{"PortHuge", "h:99999999999999999999",
                     "expected a port in 1..65535, got a number outside it"},
        RejectedCase{"PortNegative", "h:-1", "expected a port number (1..65535) after ':'"},
        RejectedCase{"PortWithSign", "h:+80", "expected a port number (1..65535) after ':'"},
        RejectedCase{"PortNotANumber", "h:http", "expected a port number (1..65535) after ':'"},
        RejectedCase{"PortMissing", "h:", "expected a port number (1..65535) after ':'"},
        RejectedCase{"HostMissing", ":7101", "expected a host name or IP address before ':'"},
        RejectedCase{"SpaceInHost", "my host:1",
                     "expected a host name or IP address, got a character other than letters, "
                     "digits, '-', '.' and '_' in the host"},
        RejectedCase{"LeadingSpace", " h:1",
                     "expected a host name or IP address, got a character other than letters, "
                     "digits, '-', '.' and '_' in the host"},
        RejectedCase{"TrailingGarbage", "h:1x", "expected a port number (1..65535) after ':'"},
        RejectedCase{"BareIpv6", "::1",
                     "expected brackets around an IPv6 address, e.g. [::1]:6379"},
        RejectedCase{"BareIpv6WithPort", "2001:db8::1:7101",
                     "expected brackets around an IPv6 address, e.g. [::1]:6379"},
        RejectedCase{"UnclosedBracket", "[::1:7101", "expected ']' after the IPv6 address"},
        RejectedCase{"EmptyBrackets", "[]:1", "expected an IPv6 address inside [ ], got nothing"},
        RejectedCase{"NotIpv6InBrackets", "[localhost]:1", "expected an IPv6 address inside [ ]"},
        RejectedCase{"JunkAfterBracket", "[::1]7101", "expected ':port' after ']'"},
        RejectedCase{"BadZone", "[fe80::1%]:1",
                     "expected an interface name after '%' in the IPv6 address"},
        RejectedCase{"UserWithoutScheme", "alice:pw@h:1",
                     "a user, password or database needs the URL form "
                     "redis://[user[:pass]@]host[:port][/db]"},
        RejectedCase{"DbWithoutScheme", "h:1/2",
                     "a user, password or database needs the URL form "
                     "redis://[user[:pass]@]host[:port][/db]"},
        RejectedCase{"OtherScheme", "http://h:1",
                     "expected redis://, rediss:// or unix://, got the scheme \"http://\""},
        RejectedCase{"UnixRelativePath", "unix://redis.sock",
                     "expected an absolute path after unix://, e.g. "
                     "unix:///run/redis/redis.sock"},
        RejectedCase{"UnixEmptyPath", "unix://",
                     "expected an absolute path after unix://, e.g. "
                     "unix:///run/redis/redis.sock"},
        RejectedCase{"UnixDirectory", "unix:///run/redis/",
                     "expected a socket's path, got a directory's (ending in '/')"},
        RejectedCase{"UnixPathTooLong", "unix:///" + std::string(107, 'a'),
                     "expected a socket path of at most 107 bytes (the system's limit), got a "
                     "longer one"},
        RejectedCase{"UrlWithoutHost", "redis://",
                     "expected a host name or IP address, got an "
                     "empty host"},
        RejectedCase{"UrlWithOnlyCredentials", "redis://u:pw@",
                     "expected a host name or IP address, got an empty host"},
        RejectedCase{"UrlDbNotANumber", "redis://h/one",
                     "expected a database number (0, 1, ...) after '/'"},
        RejectedCase{"UrlDbNegative", "redis://h/-1",
                     "expected a database number (0, 1, ...) after '/'"},
        RejectedCase{"UrlQueryString", "redis://h/0?timeout=1",
                     "expected a database number (0, 1, ...) after '/'"},
        RejectedCase{"SchemeThatIsNoScheme", "u:p w://h",
                     "expected redis://, rediss:// or unix:// at the start of the "
                     "address"},
        RejectedCase{"UrlBadEscape", "redis://u:p%zz@h",
                     "expected %XX escapes (two hex digits) in the URL's user and password"},
        RejectedCase{"UrlTruncatedEscape", "redis://u:p%4@h",
                     "expected %XX escapes (two hex digits) in the URL's user and password"},
        RejectedCase{"UrlEmptyPasswordAfterColon", "redis://u:@h",
                     "expected a password after ':' in the URL (or no ':' at all)"}),
    AddressCaseName<RejectedCase>);

// One server, one spelling: the forms only inet_aton reads would let one
// server count as several masters.
constexpr const char* kLegacyIpv4Error =
    "expected an IPv4 address as four decimal numbers without leading zeros (a.b.c.d); "
    "shortened, octal and hexadecimal forms are refused";

INSTANTIATE_TEST_SUITE_P(
    LegacyIpv4, RejectedAddress,
    testing::Values(RejectedCase{"TwoParts", "127.1:7101", kLegacyIpv4Error},
                    RejectedCase{"OneNumber", "2130706433:7101", kLegacyIpv4Error},
                    RejectedCase{"Hexadecimal", "0x7f.1:7101", kLegacyIpv4Error},
                    RejectedCase{"HexadecimalNumber", "0x7f000001", kLegacyIpv4Error},
                    RejectedCase{"Octal", "0177.0.0.1:7101", kLegacyIpv4Error},
                    RejectedCase{"LeadingZeros", "127.000.000.001:7101", kLegacyIpv4Error},
                    RejectedCase{"InAUrl", "redis://:pw@127.1:7101", kLegacyIpv4Error}),
    AddressCaseName<RejectedCase>);

// A message may be logged, so it never quotes the credentials of a URL, nor
// any part of an address that could be them.
TEST(ParseAddress, RedissIsTheUrlFormWithTls) {
  const AddressResult plain = parse_address("redis://u:pw@h:7000/2");
  const AddressResult tls = parse_address("rediss://u:pw@h:7000/2");
  ASSERT_TRUE(plain.address && tls.address) << plain.error << tls.error;
  EXPECT_FALSE(plain.address->tls);
  EXPECT_TRUE(tls.address->tls);
  EXPECT_EQ(tls.address->host, "h");
  EXPECT_EQ(tls.address->port, 7000);
  EXPECT_EQ(tls.address->username, "u");
  EXPECT_EQ(tls.address->password, "pw");
  EXPECT_EQ(tls.address->db, 2);
  EXPECT_TRUE(parse_address("REDISS://h").address->tls);
}

TEST(ParseAddress, UnixSocketPath) {
  const AddressResult result = parse_address("unix:///run/redis/redis.sock");
  ASSERT_TRUE(result.address) << result.error;
  EXPECT_EQ(result.address->unix_path, "/run/redis/redis.sock");
  EXPECT_TRUE(result.address->host.empty());
  EXPECT_FALSE(result.address->tls);
  // The longest path sockaddr_un holds.
  EXPECT_TRUE(parse_address("unix:///" + std::string(106, 'a')).address);
}

TEST(ParseAddress, NeverQuotesAPassword) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"redis://u:secret@h:x", "secret"},
      {"redis://u:secret@h:0", "secret"},
      {"redis://u:secret@", "secret"},
      {"redis://u:secret", "secret"},
      {"redis://u:secret%zz@h", "secret"},
      {"u:secret@h", "secret"},
      {"redis://u:secret@h/x y", "secret"},
      {"redis://u:secret@h h", "secret"},
      // Without the '@host' the userinfo reads as a host and a port or db.
      {"redis://alice:s3cretPW", "s3cretPW"},
      {"redis://alice:1234/s3cretPW", "s3cretPW"},
      {"redis://alice:123456", "123456"},
      {"redis://al ice:secret", "al ice"},
      {"redis://[secret]:1", "secret"},
      {"alice:123456", "123456"},
      {"sec\x1bret:1", "\x1b"},
  };
  for (const auto& [text, secret] : cases) {
    const AddressResult result = parse_address(text);
    ASSERT_FALSE(result.address.has_value()) << text;
    EXPECT_EQ(result.error.find(secret), std::string::npos) << text << ": " << result.error;
  }
}

}  // namespace
}  // namespace redlock
