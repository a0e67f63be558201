#include "demo_options.hpp"

#include <charconv>
#include <string_view>

#include "redlock/config.hpp"

namespace redlock::demo {

const char* const kUsage =
    "usage: redlock-demo [--config FILE] --resource-store HOST:PORT\n"
    "                    [--workers 16] [--increments 50] [--ttl-ms MS] [--wait-ms 30000]\n"
    "\n"
    "W worker threads on two clients each do K read-increment-write cycles of a\n"
    "counter in the resource store, under one Redlock lock, and the demo checks\n"
    "that no increment was lost. --config defaults to $REDLOCK_CONFIG, then\n"
    "./redlock.toml; --ttl-ms defaults to the quorum file's [lock] ttl_ms.\n";

namespace {

std::optional<long long> parse_integer(std::string_view text, long long min, long long max) {
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || value < min || value > max) return std::nullopt;
  return value;
}

std::string range_error(std::string_view flag, long long min, long long max, std::string_view got) {
  return std::string(flag) + ": expected an integer from " + std::to_string(min) + " to " +
         std::to_string(max) + ", got '" + std::string(got) + "'";
}

// Applies one flag with its value; returns an error line or "".
std::string apply(DemoOptions& options, std::string_view flag, std::string_view value) {
  if (flag == "--config") {
    if (value.empty()) return "--config: expected a file name";
    options.config_path = std::filesystem::path(value);
    return "";
  }
  if (flag == "--resource-store") {
    AddressResult parsed = parse_address(value);
    if (!parsed.address || !parsed.address->username.empty() || !parsed.address->password.empty() ||
        parsed.address->db) {
      return "--resource-store: expected host:port, got '" + std::string(value) + "'";
    }
    options.store = {parsed.address->host, parsed.address->port};
    return "";
  }
  struct Limits {
    long long min;
    long long max;
  };
  // --wait-ms 0 is one attempt without retries.
  const Limits limits = flag == "--workers"      ? Limits{1, 1024}
                        : flag == "--increments" ? Limits{1, 1'000'000}
                        : flag == "--wait-ms"    ? Limits{0, 86'400'000}
                                                 : Limits{1, 86'400'000};
  const std::optional<long long> number = parse_integer(value, limits.min, limits.max);
  if (!number) return range_error(flag, limits.min, limits.max, value);
  if (flag == "--workers") options.workers = static_cast<int>(*number);
  if (flag == "--increments") options.increments = static_cast<int>(*number);
  if (flag == "--ttl-ms") options.ttl = Milliseconds(*number);
  if (flag == "--wait-ms") options.wait = Milliseconds(*number);
  return "";
}

bool known_flag(std::string_view flag) {
  return flag == "--config" || flag == "--resource-store" || flag == "--workers" ||
         flag == "--increments" || flag == "--ttl-ms" || flag == "--wait-ms";
}

}  // namespace

ParsedOptions parse_options(std::span<char* const> args) {
  DemoOptions options;
  bool have_store = false;
  // A later flag overrides an earlier one, so a wrapper script can pass
  // defaults first and the user's arguments after them.
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string_view flag = args[i];
    if (flag == "--help" || flag == "-h") {
      options.help = true;
      return {options, ""};
    }
    std::optional<std::string_view> value;
    if (const auto equals = flag.find('=');
        flag.starts_with("--") && equals != std::string_view::npos) {
      value = flag.substr(equals + 1);
      flag = flag.substr(0, equals);
    }
    if (!known_flag(flag)) return {std::nullopt, "unknown argument '" + std::string(args[i]) + "'"};
    if (!value) {
      if (i + 1 >= args.size()) return {std::nullopt, std::string(flag) + ": missing value"};
      value = args[++i];
    }
    if (std::string error = apply(options, flag, *value); !error.empty()) {
      return {std::nullopt, error};
    }
    have_store = have_store || flag == "--resource-store";
  }
  if (!have_store) return {std::nullopt, "--resource-store HOST:PORT is required"};
  return {options, ""};
}

}  // namespace redlock::demo
